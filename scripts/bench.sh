#!/usr/bin/env bash
# Builds and runs the benchmarks (figures, not pass/fail). See docs/BENCHMARKS.md.
#   scripts/bench.sh          conv2d GFLOP/s natively and in WebAssembly under node
#   scripts/bench.sh models   whole models (ResNet-18, MobileNet v2, 224x224): pt2lab's WASM
#                             executor vs onnxruntime-web in headless Chromium, then native
#                             pt2lab vs PyTorch 2.14.1 on one thread (needs the sid root)
#   scripts/bench.sh actions  the page's actions (open, run, decompose, prepare, calibrate,
#                             convert) on ResNet-18, MobileNet v2, DenseNet-121, EfficientNet-B0
#                             (224x224, torch 2.14.1; needs the sid root once) and a 10k-node
#                             graph in headless Chromium: wall time and longest frame per job
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
if [ "${1:-}" = actions ]; then
    shift
    # The files (under build/, not committed; made once): real torch 2.14.1 exports from
    # the sid root, and the synthetic graph.
    [ -f build/modelbench/resnet18/model.pt2 ] && [ -f build/modelbench/mobilenet_v2/model.pt2 ] ||
        bash scripts/torch_env.sh run sid python3 tools/onnx_models.py
    [ -f build/bench/densenet121.pt2 ] && [ -f build/bench/efficientnet_b0.pt2 ] ||
        bash scripts/torch_env.sh run sid python3 tools/export_big.py build/bench densenet121 efficientnet_b0
    [ -f build/bench/big_10000.json ] || /usr/bin/python3 tools/make_big_graph.py build/bench/big_10000.json 10000
    bash scripts/npm_deps.sh >/dev/null
    bash scripts/build_web.sh >/dev/null # into ${PT2LAB_DIST:-dist}
    uptime
    node tools/action_bench.js "${PT2LAB_DIST:-dist}" "$@"
    exit
fi
cmake --preset native >/dev/null && cmake --build --preset native -j"$JOBS" --target pt2lab_bench >/dev/null
cmake --preset wasm >/dev/null && cmake --build --preset wasm -j"$JOBS" --target pt2lab_bench >/dev/null
build/native/bench/pt2lab_bench
echo
node build/wasm/bench/pt2lab_bench.js
