#!/usr/bin/env bash
# The main job at this stage: compile every example model for this CPU, show
# what kilnc made of it, and run its forward pass with the kiln runtime on
# made-up inputs. Artifacts and IR land in $build/demo/.
set -euo pipefail
build=${1:-build}
out="$build/demo"
mkdir -p "$out"

run_model() {
  local model=$1 name=$2
  shift 2
  echo "== kilnc $model $* --report -o $out/$name.kiln"
  "$build/bin/kilnc" "$model" "$@" --report -o "$out/$name.kiln"
  "$build/bin/kilnc" "$model" "$@" --emit=mlir -o "$out/$name.mlir"
  echo "== kiln run $out/$name.kiln --synthetic-feeds --summary"
  "$build/bin/kiln" run "$out/$name.kiln" --synthetic-feeds --summary
  echo
}

for model in examples/*.pbtxt; do
  run_model "$model" "$(basename "${model%.*}")"
done
# A model exported from PyTorch (torch.onnx.export), batch bound on the command line.
run_model test/Inputs/onnx/torch_mlp.onnx torch_mlp --dim batch=32

echo "kiln demo: compiled and ran $(ls "$out"/*.kiln | wc -l) models; artifacts and IR in $out/"
