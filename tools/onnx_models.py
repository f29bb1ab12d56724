#!/usr/bin/env python3
"""The whole-model benchmark's models: ResNet-18, MobileNet v2, MobileNet v3-small and
EfficientNet-B0 at full size
(batch 1, 3x224x224), exported by torch 2.14.1 both ways, for
tools/model_bench.js (pt2lab's WASM executor vs ONNX Runtime Web) and
bench/model_bench.cpp (native pt2lab vs PyTorch, tools/torch_bench.py).

    bash scripts/torch_env.sh run sid python3 tools/onnx_models.py [--force]

Writes build/modelbench/<name>/ (a cache: out of git, reused unless --force or
this script's VERSION changed):

    model.pt2     torch.export.export(model.eval(), (x,)) + torch.export.save
                  (carries x as its sample input)
    model.onnx    torch.onnx.export(model, (x,), dynamo=False): torch's TorchScript
                  exporter (the dynamo one needs onnxscript, which Debian lacks)
    input.bin     x, raw little-endian float32, for the browser page
    output.bin    model(x), eager, raw float32
    meta.json     shapes, weight bytes, versions, and ONNX Runtime (Python, CPU)
                  against eager: max |diff|, so both sides run the same function

The models are built as the zoo builds them (tools/zoo_models.py: weights=None,
torch.manual_seed(crc32(name)), input from a Generator seeded with
crc32(name + "/input")), only at 224x224 instead of the zoo's 64x64.
"""

import os
import sys

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # seeded data depends on the CPU kernels
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import zlib  # noqa: E402

import numpy as np  # noqa: E402


def ort_run_main(onnx_path, input_path, shape, out_path):
    """`--ort-run`: onnx's checker, then ONNX Runtime (CPU, one thread) on a raw
    float32 input, in a process without torch: with torch loaded, onnx's checker
    and onnxruntime crash here (each library brings its own protobuf/onnx
    registrations)."""
    import onnx
    import onnxruntime as ort

    onnx.checker.check_model(onnx.load(onnx_path))

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    x = np.fromfile(input_path, dtype="<f4").reshape([int(d) for d in shape.split("x")])
    y = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    y.astype("<f4").tofile(out_path)
    print(onnx.__version__, ort.__version__)


if __name__ == "__main__" and sys.argv[1:2] == ["--ort-run"]:
    ort_run_main(*sys.argv[2:6])
    sys.exit(0)

import torch  # noqa: E402
import torchvision  # noqa: E402

import assetlib  # noqa: E402
import make_assets  # noqa: E402
import zoo_models  # noqa: E402

SCRIPT = "tools/onnx_models.py"
VERSION = 1
CACHE_DIR = os.path.join(assetlib.REPO_ROOT, "build", "modelbench")
MODELS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0"]  # issue 23's four
INPUT_SHAPE = (1, 3, 224, 224)
OPSET = 17
ORT_TOLERANCE = 1e-4  # ONNX Runtime vs eager: float order differs (and BN is folded into conv)


def build_model(name):
    """(eval model, input) exactly as tools/zoo_models.py seeds them."""
    builder, _ = zoo_models.MODELS[name]
    torch.manual_seed(zlib.crc32(name.encode("utf-8")))
    model = builder().eval()
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"{name}/input".encode("utf-8")))
    return model, torch.randn(INPUT_SHAPE, generator=g)


def ort_output(folder, y_shape):
    """ONNX Runtime's output on input.bin (through `--ort-run` in a child process)."""
    out = os.path.join(folder, "ort_output.bin.tmp")
    shape = "x".join(str(d) for d in INPUT_SHAPE)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--ort-run",
                        os.path.join(folder, "model.onnx"), os.path.join(folder, "input.bin"),
                        shape, out], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: ONNX Runtime failed on {folder}/model.onnx:\n{r.stderr[-2000:]}")
    y = np.fromfile(out, dtype="<f4").reshape(y_shape)
    os.remove(out)
    return y, r.stdout.strip().splitlines()[-1].split()


def build_one(name, folder, force):
    meta_path = os.path.join(folder, "meta.json")
    if not force and os.path.exists(meta_path):
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        if meta.get("version") == VERSION and all(
                os.path.exists(os.path.join(folder, n)) for n in meta["files"]):
            print(f"cached   {assetlib.rel(folder)}")
            return meta
    model, x = build_model(name)
    with torch.no_grad():
        y = model(x)
    ep = torch.export.export(model, (x,))
    make_assets.write_named_archive(os.path.join(folder, "model.pt2"),
                                    lambda p: torch.export.save(ep, p))
    onnx_path = os.path.join(folder, "model.onnx")
    tmp = onnx_path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, (x,), tmp, dynamo=False, opset_version=OPSET,
                          input_names=["x"], output_names=["y"])
    os.replace(tmp, onnx_path)
    assetlib.write_bytes_atomic(os.path.join(folder, "input.bin"),
                                x.numpy().astype("<f4").tobytes())
    assetlib.write_bytes_atomic(os.path.join(folder, "output.bin"),
                                y.numpy().astype("<f4").tobytes())
    got, (onnx_version, ort_version) = ort_output(folder, tuple(y.shape))
    diff = float(np.abs(got - y.numpy()).max())
    meta = {
        "version": VERSION,
        "name": name,
        "script": SCRIPT,
        "torch_version": str(torch.__version__),
        "torchvision_version": str(torchvision.__version__),
        "onnx_version": onnx_version,
        "onnxruntime_version": ort_version,
        "opset": OPSET,
        "input_shape": list(INPUT_SHAPE),
        "output_shape": list(y.shape),
        "weight_bytes": sum(t.numel() * t.element_size() for t in ep.state_dict.values()),
        "onnx_bytes": os.path.getsize(onnx_path),
        "pt2_bytes": os.path.getsize(os.path.join(folder, "model.pt2")),
        "ort_python_vs_eager_max_abs_diff": diff,
        "files": ["model.pt2", "model.onnx", "input.bin", "output.bin"],
    }
    if diff > ORT_TOLERANCE:
        sys.exit(f"error: {name}: ONNX Runtime differs from eager by {diff:.3g} "
                 f"(> {ORT_TOLERANCE}); the two files do not compute the same function")
    assetlib.write_bytes_atomic(meta_path, (json.dumps(meta, indent=2) + "\n").encode("utf-8"))
    print(f"wrote    {assetlib.rel(folder)}: weights {meta['weight_bytes']} B, "
          f"ONNX Runtime vs eager max |diff| {diff:.3g}")
    return meta


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when cached")
    parser.add_argument("--out", metavar="DIR", default=CACHE_DIR,
                        help="the cache folder (default build/modelbench)")
    args = parser.parse_args(argv)
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    torch.set_num_threads(1)
    out = os.path.abspath(args.out)
    for name in MODELS:
        build_one(name, os.path.join(out, name), args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
