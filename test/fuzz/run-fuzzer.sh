#!/usr/bin/env bash
# Runs the artifact loader fuzzer briefly (the ctest entry): seeds the corpus
# with the sample artifact's FlatBuffer and a few broken artifacts, then
# fuzzes for at most SECONDS seconds. The corpus stays in the build tree, so
# later runs start from what earlier ones found.
#   run-fuzzer.sh FUZZER SEED_WRITER CORPUS_DIR SECONDS
set -euo pipefail
fuzzer=$1 writer=$2 corpus=$3 seconds=$4
mkdir -p "$corpus"
"$writer" flatbuffer "$corpus/seed-sample-flatbuffer"
"$writer" sample "$corpus/seed-sample.kiln"
for kind in truncated version buffer-index misaligned; do
  "$writer" broken "$kind" "$corpus/seed-$kind.kiln"
done
exec "$fuzzer" "$corpus" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
