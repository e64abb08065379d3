#!/usr/bin/env bash
# The main job at this stage: compile every example model and show what kilnc
# made of it. The IR lands in $build/demo/.
set -euo pipefail
build=${1:-build}
out="$build/demo"
mkdir -p "$out"
for model in examples/*.pbtxt examples/*.onnx; do
  [ -e "$model" ] || continue
  name=$(basename "${model%.*}")
  echo "== kilnc $model --emit=mlir --report -o $out/$name.mlir"
  "$build/bin/kilnc" "$model" --emit=mlir --report -o "$out/$name.mlir"
  echo
done
# A model exported from PyTorch (torch.onnx.export), batch bound on the command line.
onnx=test/Inputs/onnx/torch_mlp.onnx
echo "== kilnc $onnx --dim batch=32 --emit=mlir --report -o $out/torch_mlp.mlir"
"$build/bin/kilnc" "$onnx" --dim batch=32 --emit=mlir --report -o "$out/torch_mlp.mlir"
echo
echo "kiln demo: compiled $(ls "$out"/*.mlir | wc -l) models; IR in $out/"
