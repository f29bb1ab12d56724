#!/usr/bin/env bash
# Builds and runs the benchmarks (figures, not pass/fail). See docs/BENCHMARKS.md.
#   scripts/bench.sh          conv2d GFLOP/s natively and in WebAssembly under node
#   scripts/bench.sh models   whole models (ResNet-18, MobileNet v2, 224x224): pt2lab's WASM
#                             executor vs onnxruntime-web in headless Chromium, then native
#                             pt2lab vs PyTorch 2.14.1 on one thread (needs the sid root)
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
JOBS=$(nproc 2>/dev/null || echo 2)
if [ "${1:-}" = models ]; then
    bash scripts/torch_env.sh run sid python3 tools/onnx_models.py
    [ -d node_modules/onnxruntime-web ] || npm ci
    cmake --preset native >/dev/null && cmake --build --preset native -j"$JOBS" --target pt2lab_model_bench >/dev/null
    cmake --preset wasm >/dev/null && cmake --build --preset wasm -j"$JOBS" --target pt2lab_model_bench >/dev/null
    uptime
    node tools/model_bench.js --runs 15 --trials 5
    echo
    echo "native pt2lab (fast kernels, one thread):"
    for m in resnet18 mobilenet_v2; do
        build/native/bench/pt2lab_model_bench "build/modelbench/$m/model.pt2" --runs 15 \
            --expect "build/modelbench/$m/output.bin"
    done
    echo "PyTorch eager (torch.set_num_threads(1)):"
    bash scripts/torch_env.sh run sid python3 tools/torch_bench.py --runs 15
    exit
fi
cmake --preset native >/dev/null && cmake --build --preset native -j"$JOBS" --target pt2lab_bench >/dev/null
cmake --preset wasm >/dev/null && cmake --build --preset wasm -j"$JOBS" --target pt2lab_bench >/dev/null
build/native/bench/pt2lab_bench
echo
node build/wasm/bench/pt2lab_bench.js
