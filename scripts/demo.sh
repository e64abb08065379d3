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
echo "kiln demo: compiled $(ls "$out"/*.mlir | wc -l) models; IR in $out/"
