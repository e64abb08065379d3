#!/usr/bin/env bash
# Installs the Debian 12 packages Kiln builds and tests with. Idempotent: it asks apt only for
# what is missing, so a machine that already has everything costs one dpkg query.
set -euo pipefail

packages=(
  # build tools
  cmake ninja-build ccache g++ make python3
  # compiler side: LLVM/MLIR 19 with lit and FileCheck
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  # schemas and importers
  libprotobuf-dev protobuf-compiler libonnx-dev
  libflatbuffers-dev flatbuffers-compiler
  # runtime: RPC, collectives, GEMM libraries
  libgrpc++-dev protobuf-compiler-grpc libgloo-dev libdnnl-dev libopenblas-dev
  # runtime formats and tools: JSON (checkpoint manifests, safetensors headers), zip (.npz,
  # ZIP64 included), the kiln command line, the Prometheus metrics endpoint
  nlohmann-json3-dev libzip-dev libcli11-dev prometheus-cpp-dev
  # tests
  libgtest-dev libgmock-dev
  # fuzzing (test/fuzz): clang with libFuzzer; the main build stays on g++
  clang-14 libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
