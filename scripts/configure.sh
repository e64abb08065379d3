#!/usr/bin/env bash
# Configures the build tree (Ninja, Release) once; later calls are no-ops
# unless CMake itself decides to re-run.
set -euo pipefail
build=${1:-build}
shift || true
if [ -f "$build/build.ninja" ]; then
  exit 0
fi
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@"
