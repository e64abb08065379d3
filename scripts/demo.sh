#!/usr/bin/env bash
# The main job at this stage: compile every example model for this CPU, show
# what kilnc made of it, and run its forward pass with the kiln runtime on
# made-up inputs. Artifacts and IR land in $build/demo/.
set -euo pipefail
build=${1:-build}
out="$build/demo"
# Each demo trains from step 0: last run's checkpoints and logs go first.
rm -rf "$out/wide_deep_ckpt" "$out/wide_deep.jsonl"
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

# Training: wide & deep on a generated click data set (Criteo layout, planted
# model), then its loss and AUC on held-out rows.
python3 scripts/make_ctr_data.py --rows 51200 --dense 13 --categorical 4 --seed 1 --out "$out/ctr_train.tsv"
python3 scripts/make_ctr_data.py --rows 8192 --dense 13 --categorical 4 --seed 2 --model-seed 1 --out "$out/ctr_eval.tsv"
echo "== kiln run $out/wide_deep.kiln --data $out/ctr_train.tsv --steps 400 --eval-data $out/ctr_eval.tsv --eval-every 200"
"$build/bin/kiln" run "$out/wide_deep.kiln" --data "$out/ctr_train.tsv" --steps 400 \
  --eval-data "$out/ctr_eval.tsv" --eval-every 200 --metrics-out "$out/wide_deep.jsonl" \
  --save "$out/wide_deep_ckpt"
echo

echo "kiln demo: compiled and ran $(ls "$out"/*.kiln | wc -l) models; artifacts and IR in $out/"
