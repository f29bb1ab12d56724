#!/usr/bin/env python3
"""Exports a teacher's own model to a .pt2 that pt2lab's lessons can use.

Run it with your own PyTorch (2.8 or newer; torch.export.save must write the
.pt2 archive format). It needs nothing but the standard library and torch:
copy this one file anywhere.

    python3 teacher_export.py MODEL.py:FUNCTION --out COURSE/assets/graphs/NAME.pt2
                              [--train] [--seed N] [--note TEXT]

MODEL.py:FUNCTION names a Python file and a function in it. The function takes
no arguments and returns `(model, example_inputs)`: an `nn.Module` and the
inputs of one forward call, a tuple of tensors (a single tensor is taken as a
tuple of one). For example:

    # my_model.py
    import torch, torch.nn as nn

    def make():
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        return model, (torch.randn(3, 4),)

What the script does, the way the shipped lesson graphs are made
(tools/make_assets.py, docs/FORMATS.md sections 1 and 3):

1. sets ATEN_CPU_CAPABILITY=default before torch is imported (unless you set
   it yourself), so seeded weights and inputs do not depend on the CPU;
2. calls torch.manual_seed(N) (--seed, default 0), then FUNCTION, so the
   weights and the example inputs are the same on every run;
3. puts the model in eval mode (the mode post-training quantization exports
   in), or in train mode with --train (the mode of quantization-aware
   training); the mode is frozen into the exported graph;
4. runs the model once eagerly on a copy, under torch.no_grad(): these are
   PyTorch's reference outputs (and, in train mode, the buffers after that
   forward, e.g. BatchNorm's running statistics);
5. torch.export.export(model, example_inputs) and torch.export.save(...).
   torch writes the example inputs into the archive itself
   (data/sample_inputs/model.pt): the page's "sample input";
6. adds pt2lab's records through torch.export.save's extra_files, so they land
   at extra/pt2lab/ in the archive: manifest.json (how the file was made) and
   output_N.npy.b64 / buffer_after_N.npy.b64 (the eager values as .npy files
   in base64). pt2lab's run compares its own outputs with them ("parity vs
   PyTorch eager").

Check the result with the pt2lab command line tool (see README.md):

    pt2lab info COURSE/assets/graphs/NAME.pt2   # "reference: ... (PyTorch eager output)"
    pt2lab run  COURSE/assets/graphs/NAME.pt2   # "verdict: allclose" or "bit-identical"

Exit status: 0 written, 1 the model or its outputs cannot be exported as
asked (the message says why), 2 bad usage. The guide is docs/TEACHING.md.
"""

import os
import sys

# Seeded data depends on the CPU kernels torch picks; pin them before torch loads.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "default")

import argparse  # noqa: E402
import base64  # noqa: E402
import copy  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import struct  # noqa: E402
import tempfile  # noqa: E402

import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402

SCRIPT = "tools/teacher_export.py"
EXTRA = "pt2lab"  # extra_files key "pt2lab/x" -> record extra/pt2lab/x in the archive

# The .npy dtypes pt2lab reads (little-endian), by torch dtype.
NPY_DESCR = {
    torch.float32: "<f4",
    torch.float64: "<f8",
    torch.int64: "<i8",
    torch.int32: "<i4",
    torch.uint8: "|u1",
    torch.int8: "|i1",
    torch.bool: "|b1",
}


class ExportError(Exception):
    """Something about the model that this script cannot export as asked."""


# ---------------------------------------------------------------------------
# The teacher's function
# ---------------------------------------------------------------------------


def load_function(spec):
    """'path/to/file.py:name' -> the function `name` of that file."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise ExportError(f"{spec!r}: expected FILE.py:FUNCTION, e.g. my_model.py:make")
    if not os.path.isfile(path):
        raise ExportError(f"{path}: no such file")
    module_name = os.path.splitext(os.path.basename(path))[0]
    # The model file's folder is importable, so it may import its neighbours.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader_spec)
    loader_spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ExportError(f"{path} has no function {name!r}")
    return fn


def model_and_inputs(fn, spec):
    """Calls the teacher's function; returns (model, tuple of example inputs)."""
    made = fn()
    if not isinstance(made, tuple) or len(made) != 2:
        raise ExportError(f"{spec} must return (model, example_inputs), it returned {type(made).__name__}")
    model, inputs = made
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"{spec}: the model is a {type(model).__name__}, not a torch.nn.Module")
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if isinstance(inputs, list):
        inputs = tuple(inputs)
    if not isinstance(inputs, tuple) or not inputs:
        raise ExportError(f"{spec}: example_inputs must be a tensor or a tuple of tensors")
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise ExportError(f"{spec}: example input {i} is a {type(x).__name__}, not a tensor")
    return model, inputs


# ---------------------------------------------------------------------------
# extra/pt2lab/ records (docs/FORMATS.md section 3)
# ---------------------------------------------------------------------------


def npy_bytes(tensor, what):
    """A tensor as a NumPy .npy file (format 1.0, little-endian, C order), written
    without numpy: the header numpy writes, padded to 64 bytes, then the data."""
    if sys.byteorder != "little":
        raise ExportError("this script writes little-endian .npy files and runs on a big-endian machine")
    t = tensor.detach().cpu()
    if t.dtype not in NPY_DESCR:
        known = ", ".join(str(d).replace("torch.", "") for d in NPY_DESCR)
        raise ExportError(f"{what} is {str(t.dtype).replace('torch.', '')}; pt2lab stores {known} "
                          "(return a float32 output from forward, for example with .float())")
    shape = tuple(t.shape)
    shape_text = "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (NPY_DESCR[t.dtype], shape_text)
    # magic (6) + version (2) + header length (2) + header + padding + "\n": a multiple of 64.
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    data = bytes(t.contiguous().clone().untyped_storage()) if t.numel() else b""
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data


def b64(data):
    """extra_files holds text only: binary records go in as base64 (RFC 4648, one line)."""
    return base64.b64encode(data).decode("ascii")


def eager_reference(model, inputs):
    """The model's outputs (flattened, in output order) and, in train mode, its
    buffers after one forward, from a copy run under no_grad: the exported
    weights stay the state before the forward."""
    twin = copy.deepcopy(model)
    with torch.no_grad():
        output = twin(*copy.deepcopy(inputs))
    leaves, _ = pytree.tree_flatten(output)
    buffers = list(twin.named_buffers()) if twin.training else []
    return leaves, buffers


def extra_files(model, inputs, ep, args, mode):
    """torch.export.save's extra_files: {"pt2lab/<name>": text}, the manifest last."""
    outputs, buffers = eager_reference(model, inputs)
    names = list(ep.graph_signature.user_outputs)
    tensors = [o for o in outputs if isinstance(o, torch.Tensor)]
    if len(tensors) != len(outputs):
        raise ExportError("forward returns something that is not a tensor; return tensors only "
                          "(pt2lab compares every output with PyTorch's)")
    if len(outputs) != len(names):
        raise ExportError(f"forward gave {len(outputs)} tensors, the exported graph has {len(names)} "
                          "outputs; return each tensor once")
    folder = f"extra/{EXTRA}"
    files = {}
    listed = []
    for i, (name, value) in enumerate(zip(names, outputs)):
        files[f"output_{i}.npy.b64"] = b64(npy_bytes(value, f"output {i} ({name})"))
        listed.append({"name": name, "file": f"{folder}/output_{i}.npy.b64"})
    buffers_after = []
    for i, (target, value) in enumerate(buffers):
        files[f"buffer_after_{i}.npy.b64"] = b64(npy_bytes(value, f"buffer {target}"))
        buffers_after.append({"target": target, "file": f"{folder}/buffer_after_{i}.npy.b64"})
    note = args.note or (f"Exported with {SCRIPT} from {args.model} by torch.export of torch "
                         f"{torch.__version__}; pt2lab's extras came in through save's extra_files.")
    manifest = {
        "format": "pt2lab.extra",
        "version": 2,
        "provenance": {
            "made_by": "torch.export",
            "torch_version": torch.__version__,
            "script": SCRIPT,
            "seed": args.seed,
            "cpu_capability": os.environ["ATEN_CPU_CAPABILITY"],
            "model_class": type(model).__qualname__,
            "mode": mode,
            "note": note,
        },
        "inputs": "data/sample_inputs/model.pt",
        "outputs": listed,
        "buffers_after": buffers_after,
    }
    files["manifest.json"] = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    return {f"{EXTRA}/{name}": text for name, text in files.items()}


# ---------------------------------------------------------------------------
# Export and save
# ---------------------------------------------------------------------------


def save_archive(ep, path, extras):
    """torch.export.save names the archive's root folder after the file, so write
    under the final name in a scratch folder beside it, then move it into place
    (a failed export leaves no half-written file)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    scratch = tempfile.mkdtemp(dir=folder, prefix=".teacher_export-")
    try:
        tmp = os.path.join(scratch, os.path.basename(path))
        torch.export.save(ep, tmp, extra_files=extras)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def export(args):
    if not args.out.endswith(".pt2"):
        raise ExportError(f"--out {args.out}: the file name must end in .pt2")
    if not hasattr(torch, "export") or not hasattr(torch.export, "save"):
        raise ExportError(f"torch {torch.__version__} has no torch.export.save; use torch 2.8 or newer")
    fn = load_function(args.model)
    torch.manual_seed(args.seed)
    model, inputs = model_and_inputs(fn, args.model)
    mode = "train" if args.train else "eval"
    model.train(args.train)
    # Export a copy: a train-mode trace must not touch the weights the file stores.
    ep = torch.export.export(copy.deepcopy(model), copy.deepcopy(inputs))
    extras = extra_files(model, inputs, ep, args, mode)
    save_archive(ep, args.out, extras)
    outs = ", ".join(ep.graph_signature.user_outputs)
    shapes = ", ".join(f"{str(x.dtype).replace('torch.', '')}{list(x.shape)}" for x in inputs)
    print(f"wrote {args.out}: {type(model).__qualname__} in {mode} mode (seed {args.seed}), "
          f"torch {torch.__version__}, {len(ep.graph.nodes)} nodes; sample input {shapes}; "
          f"eager reference for {outs}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Export your own model to a .pt2 for a pt2lab course, with its sample inputs "
                    "and PyTorch's eager outputs inside (docs/TEACHING.md).")
    parser.add_argument("model", metavar="MODEL.py:FUNCTION",
                        help="a Python file and a function in it returning (model, example_inputs)")
    parser.add_argument("--out", required=True, metavar="FILE.pt2",
                        help="the archive to write, e.g. my_course/assets/graphs/net.pt2")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--eval", action="store_true", help="export in eval mode (the default; PTQ)")
    mode.add_argument("--train", action="store_true", help="export in train mode (QAT)")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed before FUNCTION runs (default 0)")
    parser.add_argument("--note", default="", help="one sentence on how the file was made (pt2lab info shows it)")
    args = parser.parse_args(argv)
    try:
        export(args)
    except ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
