#!/usr/bin/env bash
# Runs every test (lit and GoogleTest, through ctest) and ends with one
# summary line.
set -uo pipefail
build=${1:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --test-dir "$build" --output-on-failure -j 2 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
lit=$(python3 /usr/lib/llvm-19/build/utils/lit/lit.py --show-tests "$build/test" 2>/dev/null | grep -c '^  Kiln ::')
summary=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -1)
echo "kiln: ${summary:-no ctest summary} (ctest entries; the lit entry holds ${lit:-?} lit tests)"
exit "$status"
