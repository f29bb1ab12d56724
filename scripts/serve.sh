#!/usr/bin/env bash
# Builds pt2lab and shows the lessons.
# Until the page exists, this builds the native pt2lab CLI and prints each
# lesson graph the way PyTorch prints it (ep.graph, then ep.module().code),
# runs it on the executor against PyTorch's eager output, and shows a
# decomposition and a PT2E prepare/convert.
set -euo pipefail
cd "$(dirname "$0")/.."

PT2LAB_DEPS=native bash scripts/deps.sh
cmake --preset native >/dev/null
cmake --build --preset native -j"$(nproc 2>/dev/null || echo 2)" --target pt2lab >/dev/null
CLI=build/native/src/cli/pt2lab

for asset in conv_bn_relu_eval conv_bn_relu_train conv_relu style_functional style_modules style_sequential resnet_style; do
    file="assets/graphs/$asset.pt2"
    printf '\n================ %s ================\n' "$file"
    "$CLI" info "$file"
    printf '\n--- print(ep.graph) ---\n'
    "$CLI" graph "$file"
    printf '\n--- ep.module().code ---\n'
    "$CLI" code "$file" --module
    printf '\n--- run on the CPU executor, compared with PyTorch eager ---\n'
    "$CLI" run "$file"
done
printf '\n================ the lessons'"'"' operations (conv_bn_relu_train, then conv_bn_relu_eval) ================\n'
"$CLI" decompose assets/graphs/conv_bn_relu_train.pt2 --level inference
"$CLI" convert assets/graphs/conv_bn_relu_eval.pt2
printf '\nMore: %s --help\n' "$CLI"
