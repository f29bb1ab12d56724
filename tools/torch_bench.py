#!/usr/bin/env python3
"""PyTorch 2.14.1 eager on one thread, for the record beside pt2lab's native
figures (bench/model_bench.cpp): the same .pt2 files and sample inputs that
tools/onnx_models.py wrote, run as ep.module() under torch.no_grad().

    bash scripts/torch_env.sh run sid python3 tools/torch_bench.py [--runs N]

Prints one JSON line per model: first run, median and min of N, and the max
|diff| against the stored eager output. Figures only.
"""

import os
import sys

# Timing, not data generation: let torch pick its fastest CPU kernels (the
# root's ATEN_CPU_CAPABILITY=default and oneDNN's AVX2 cap pin generated data, not these runs).
for pin in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
    os.environ.pop(pin, None)

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE_DIR = os.path.join(REPO_ROOT, "build", "modelbench")
MODELS = ["resnet18", "mobilenet_v2"]


def bench(name, runs):
    folder = os.path.join(CACHE_DIR, name)
    ep = torch.export.load(os.path.join(folder, "model.pt2"))
    module = ep.module()
    x = torch.from_numpy(np.fromfile(os.path.join(folder, "input.bin"), dtype="<f4")
                         .reshape(1, 3, 224, 224))
    want = np.fromfile(os.path.join(folder, "output.bin"), dtype="<f4")
    times = []
    with torch.no_grad():
        for _ in range(runs + 1):
            t0 = time.perf_counter()
            y = module(x)
            times.append((time.perf_counter() - t0) * 1e3)
    diff = float(np.abs(y.numpy().reshape(-1) - want).max())
    return {"model": name, "torch": str(torch.__version__), "threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "first_ms": round(times[0], 3), "median_ms": round(statistics.median(times[1:]), 3),
            "min_ms": round(min(times[1:]), 3), "runs": runs, "max_abs_diff": diff}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for name in MODELS:
        print(json.dumps(bench(name, max(1, args.runs))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
