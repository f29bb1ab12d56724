#!/usr/bin/env python3
"""Checks what tools/teacher_export.py's docstring promises, by running it.

    bash scripts/torch_env.sh run sid python3 tools/teacher_export_check.py [SCRIPT]

(SCRIPT: another copy of teacher_export.py to check, inside the clone.)

Each case runs the script as a teacher does (a process of its own, on a model
file of its own) and checks its exit status, its message and what it left:

- exit 2, bad usage: no arguments, no --out, --eval with --train;
- exit 1, "the model or its outputs cannot be exported as asked (the message
  says why)": MODEL.py without :FUNCTION, a missing file, --out not ending in
  .pt2, a function that does not return (model, example_inputs), an example
  input that is not a tensor, a forward that returns something that is not a
  tensor, an output dtype pt2lab does not store; none leaves a file at --out
  ("a failed export leaves no half-written file");
- exit 0: eval mode (the default) and --train on a model with BatchNorm. The
  mode is frozen into the graph: in train mode its aten.batch_norm has
  training=True and the graph counts batches (add_ on num_batches_tracked), and
  its manifest says "train" and holds the buffers after one forward (PyTorch's
  own, from the same seeded model); in eval mode neither. --seed N is recorded.

Needs torch (the sid root's 2.14.1); nothing is compared with a snapshot.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import torch

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(REPO_ROOT, "tools", "teacher_export.py")

MODELS = '''
import torch, torch.nn as nn

class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))

def conv_bn():
    return ConvBN(), (torch.randn(2, 3, 8, 8),)

class Pair(nn.Module):
    def forward(self, x):
        return x + 1, 3

def not_tensor_output():
    return Pair(), (torch.randn(2, 2),)

class Half(nn.Module):
    def forward(self, x):
        return x.half()

def half_output():
    return Half(), (torch.randn(2, 2),)

def not_a_pair():
    return nn.ReLU()

def not_tensor_input():
    return nn.ReLU(), (torch.randn(2), "x")
'''

failures = []


def run(args):
    r = subprocess.run([sys.executable, SCRIPT] + args, cwd=REPO_ROOT, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def expect(what, cond, detail=""):
    print(("ok     " if cond else "FAILED ") + what + ("" if cond else ": " + detail))
    if not cond:
        failures.append(what)


def extras(path):
    """The archive's extra/pt2lab/ records: {name: bytes}."""
    with zipfile.ZipFile(path) as z:
        return {n.split("/extra/pt2lab/", 1)[1]: z.read(n) for n in z.namelist() if "/extra/pt2lab/" in n}


def npy(text):
    """A .npy.b64 record -> float32 tensor (the header's shape, C order)."""
    data = base64.b64decode(text)
    header_len = int.from_bytes(data[8:10], "little")
    header = data[10:10 + header_len].decode("latin1")
    shape = eval(header)["shape"]  # numpy's own header: a Python dict literal
    return torch.frombuffer(bytearray(data[10 + header_len:]), dtype=torch.float32).reshape(shape)


def main():
    os.makedirs(os.path.join(REPO_ROOT, "build"), exist_ok=True)
    work = tempfile.mkdtemp(dir=os.path.join(REPO_ROOT, "build"), prefix="teacher_export_check-")
    try:
        models = os.path.join(work, "models.py")
        with open(models, "w") as f:
            f.write(MODELS)
        out = os.path.join(work, "course", "assets", "graphs", "net.pt2")
        spec = lambda fn: f"{models}:{fn}"  # noqa: E731

        # Bad usage: argparse's exit 2 and its usage line.
        for what, args in [("no arguments", []),
                           ("no --out", [spec("conv_bn")]),
                           ("--eval with --train", [spec("conv_bn"), "--out", out, "--eval", "--train"]),
                           ("--seed not a number", [spec("conv_bn"), "--out", out, "--seed", "x"])]:
            code, _, err = run(args)
            expect(f"bad usage, {what}: exit 2", code == 2 and "usage:" in err, f"exit {code}: {err}")

        # What it cannot export as asked: exit 1, "error: <why>", no file written.
        for what, args, why in [
                ("MODEL.py without :FUNCTION", [models, "--out", out], "expected FILE.py:FUNCTION"),
                ("a missing model file", [os.path.join(work, "none.py") + ":make", "--out", out], "no such file"),
                ("no such function", [spec("nothing"), "--out", out], "has no function 'nothing'"),
                ("--out not .pt2", [spec("conv_bn"), "--out", out[:-4] + ".zip"], "must end in .pt2"),
                ("not (model, example_inputs)", [spec("not_a_pair"), "--out", out], "must return (model, example_inputs)"),
                ("an example input not a tensor", [spec("not_tensor_input"), "--out", out], "example input 1 is a str, not a tensor"),
                ("a non-tensor output", [spec("not_tensor_output"), "--out", out], "forward returns something that is not a tensor"),
                ("a float16 output", [spec("half_output"), "--out", out], "is float16; pt2lab stores float32")]:
            code, _, err = run(args)
            expect(f"cannot export, {what}: exit 1 saying why", code == 1 and err.startswith("error: ") and why in err,
                   f"exit {code}: {err.strip()[-600:]}")
            left = [os.path.join(d, n) for d, _, names in os.walk(os.path.join(work, "course")) for n in names]
            expect(f"cannot export, {what}: nothing written", not left, str(left))

        # Exit 0, eval (the default) and --train: the mode is in the graph and the records.
        torch.manual_seed(7)
        import importlib.util
        loader = importlib.util.spec_from_file_location("models", models)
        mod = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(mod)
        model, inputs = mod.conv_bn()
        model.train()
        with torch.no_grad():
            want_out = model(*inputs)
        want_buffers = dict(model.named_buffers())
        for mode, flags in [("eval", []), ("train", ["--train"])]:
            path = out.replace("net.pt2", f"net_{mode}.pt2")
            code, stdout, err = run([spec("conv_bn"), "--out", path, "--seed", "7"] + flags)
            expect(f"{mode}: exit 0", code == 0, f"exit {code}: {err}")
            if code:
                continue
            expect(f"{mode}: says what it wrote", stdout.startswith(f"wrote {path}: ConvBN in {mode} mode (seed 7), torch "),
                   stdout)
            ep = torch.export.load(path)
            calls = [n for n in ep.graph.nodes if n.op == "call_function"]
            bn = [n for n in calls if n.target == torch.ops.aten.batch_norm.default]
            # aten.batch_norm(input, weight, bias, running_mean, running_var, training, ...)
            expect(f"{mode}: batch_norm's training argument is frozen as {mode == 'train'}",
                   [n.args[5] for n in bn] == [mode == "train"], str([n.format_node() for n in bn]))
            counts = [n for n in calls if n.target == torch.ops.aten.add_.Tensor]
            expect(f"{mode}: the graph {'counts' if mode == 'train' else 'does not count'} batches (add_ on num_batches_tracked)",
                   len(counts) == (mode == "train"), str([n.format_node() for n in counts]))
            files = extras(path)
            manifest = json.loads(files["manifest.json"])
            prov = manifest["provenance"]
            expect(f"{mode}: manifest mode, seed, script",
                   (prov["mode"], prov["seed"], prov["script"], prov["model_class"]) == (mode, 7, "tools/teacher_export.py", "ConvBN"),
                   str(prov))
            after = {b["target"]: files[b["file"].split("extra/pt2lab/", 1)[1]] for b in manifest["buffers_after"]}
            if mode == "train":
                expect("train: the buffers after one forward", sorted(after) == sorted(want_buffers), str(sorted(after)))
                for name in ("bn.running_mean", "bn.running_var"):
                    if name in after:
                        got = npy(after[name].decode("ascii"))
                        expect(f"train: {name} after one forward is PyTorch's", torch.equal(got, want_buffers[name]),
                               f"{got} vs {want_buffers[name]}")
                got = npy(files["output_0.npy.b64"].decode("ascii"))
                expect("train: the eager output is the train-mode forward's", torch.equal(got, want_out))
                # The stored weights are the state before the forward: the export ran on a copy.
                sd = ep.state_dict
                expect("train: the stored running_mean is the one before the forward",
                       torch.equal(sd["bn.running_mean"], torch.zeros(4)), str(sd["bn.running_mean"]))
                # The train-mode graph runs as a train-mode forward: batch statistics.
                with torch.no_grad():
                    res = ep.module()(*inputs)
                expect("train: the exported program gives the train-mode output", torch.allclose(res, want_out, atol=1e-6))
            else:
                expect("eval: no buffers after", after == {}, str(sorted(after)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} teacher_export.py checks failed: " + "; ".join(failures))
        return 1
    print("teacher_export.py: every documented exit status and both modes hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
