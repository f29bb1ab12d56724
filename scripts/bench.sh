#!/usr/bin/env bash
# Builds and runs the benchmarks (figures, not pass/fail): conv2d GFLOP/s
# natively and in WebAssembly under node. See docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
JOBS=$(nproc 2>/dev/null || echo 2)
cmake --preset native >/dev/null && cmake --build --preset native -j"$JOBS" --target pt2lab_bench >/dev/null
cmake --preset wasm >/dev/null && cmake --build --preset wasm -j"$JOBS" --target pt2lab_bench >/dev/null
build/native/bench/pt2lab_bench
echo
node build/wasm/bench/pt2lab_bench.js
