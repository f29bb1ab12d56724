#!/usr/bin/env python3
"""Golden symbolic_trace graphs for the C++ printers' corner cases:
tests/golden/fx/<case>.json, in the format of docs/FORMATS.md section 2.

    bash scripts/torch_env.sh run sid python3 tools/fx_cases.py            # write tests/golden/fx/
    bash scripts/torch_env.sh run sid python3 tools/fx_cases.py --out DIR  # write DIR/<case>.json
    bash scripts/torch_env.sh run sid python3 tools/fx_cases.py --check    # regenerate, compare

Every case is a small model traced with the real torch.fx.symbolic_trace of
torch 2.14.1; the `expected` texts are what torch printed for it.
"""

import os
import sys

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # before torch, as in every tools/ script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import tempfile  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import assetlib  # noqa: E402
import fx_json  # noqa: E402

SCRIPT = "tools/fx_cases.py"
GOLDEN_DIR = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "fx")


class BuiltinShadowing(nn.Module):
    """A placeholder named `input` (node input_1) and calls whose names shadow
    Python builtins (abs_1, max_1, sum_1); a single-node output."""

    def forward(self, input):
        a = torch.abs(input)
        m = torch.max(a)
        s = torch.sum(a, dim=1)
        return s + m


class Operators(nn.Module):
    """operator.* targets printed infix in code: + * - (unary) @ - / **."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(4, 4))

    def forward(self, x, y):
        a = x + y
        b = a * 2
        c = -b
        d = c @ self.w
        e = d - 1
        f = e / 2.0
        return f ** 2


class GetitemTupleOutput(nn.Module):
    """operator.getitem on multi-output calls (x.max(1)[0], indexing a sort
    result), a slice index, and a tuple output."""

    def forward(self, x):
        result = torch.sort(x, dim=1)
        values = result[0]
        indices = result[1]
        top = x.max(1)[0]
        first = x[:, 0]
        return (values, indices, top + first)


class CallMethods(nn.Module):
    """call_method with positional and keyword arguments, a dtype and a device
    argument, and builtins.getattr for `x.shape`."""

    def forward(self, x):
        a = x.view(2, -1)
        b = a.transpose(0, 1)
        c = b.contiguous()
        d = c.to(torch.float16)
        e = x.sum(dim=1, keepdim=True)
        f = x.reshape(x.shape[0], -1)
        g = f.to(device=torch.device("cpu"), dtype=torch.float64)
        return (d, e, g)


class FunctionKwargs(nn.Module):
    """Functions with float, str, None, bool, tuple and list arguments, and float
    literals that print in both of Python's notations."""

    def forward(self, x):
        a = F.leaky_relu(x, negative_slope=0.01)
        b = F.interpolate(a, scale_factor=2.0, mode="nearest")
        c = F.pad(b, [1, 1, 2, 2])
        d = torch.clamp(c, min=1e-12, max=1e16)
        e = F.dropout(d, p=0.1, training=False)
        f = F.layer_norm(e, (6,), eps=1e-05)
        g = f * 1.5e+300
        h = torch.clamp(g, max=float("inf"))
        return F.softmax(h + 3.0, dim=-1)


class _Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(4, 4))
        self.register_buffer("scale", torch.ones(4))


class NestedGetAttr(nn.Module):
    """get_attr of a nested parameter and buffer (self.sub.weight -> node
    sub_weight) and of a root buffer; a dict output."""

    def __init__(self):
        super().__init__()
        self.sub = _Sub()
        self.register_buffer("offset", torch.zeros(4))

    def forward(self, x):
        y = torch.matmul(x, self.sub.weight) * self.sub.scale
        return {"out": y + self.offset, "aux": y}


class SequentialChild(nn.Module):
    """Children of nn.Sequential, nested one level: call_module body.0 and
    body.2.0, printed as getattr(self.body, "0") in code."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(4, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 4), nn.Tanh()))

    def forward(self, x):
        return self.body(x)


class UnusedValue(nn.Module):
    """Values nobody uses: code frees them at once (`mul = x * 2;  mul = None`)."""

    def forward(self, x):
        unused = x * 2  # noqa: F841
        y = torch.relu(x)
        y.detach()
        return y


class PlaceholderDefault(nn.Module):
    """A forward argument with a default value: placeholder[target=scale](default=2.0),
    the default kept in the node's args."""

    def forward(self, x, scale=2.0):
        return x * scale


class DeepMLP(nn.Module):
    """A longer graph (30+ nodes): a ModuleList of residual blocks."""

    def __init__(self, width=8, depth=8):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 2)

    def forward(self, x):
        for layer in self.layers:
            x = x + torch.relu(layer(x))
        return self.head(self.norm(x))


CASES = {
    "builtin_shadowing": BuiltinShadowing,
    "operators": Operators,
    "getitem_tuple_output": GetitemTupleOutput,
    "call_methods": CallMethods,
    "function_kwargs": FunctionKwargs,
    "nested_get_attr": NestedGetAttr,
    "sequential_child": SequentialChild,
    "unused_value": UnusedValue,
    "placeholder_default": PlaceholderDefault,
    "deep_mlp": DeepMLP,
}


def generate(out_dir, quiet=False):
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    torch.manual_seed(0)  # parameter values never reach the files; fixed anyway
    for name, factory in CASES.items():
        record = fx_json.fx_graph_record(name, factory(), SCRIPT)
        path = os.path.join(out_dir, f"{name}.json")
        assetlib.write_bytes_atomic(path, assetlib.json_text(record).encode("utf-8"))
        if not quiet:
            print(f"wrote    {assetlib.rel(path)}")


def check(_out_dir=None):
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, quiet=True)
        for name in CASES:
            status, detail = fx_json.compare_fx_files(
                os.path.join(GOLDEN_DIR, f"{name}.json"), os.path.join(tmp, f"{name}.json"))
            failures += status in ("DIFF", "MISSING")
            print(assetlib.report_line(status, f"tests/golden/fx/{name}.json", detail))
    return assetlib.finish_check(failures, "golden(s)", SCRIPT)


def main(argv=None):
    return assetlib.generator_main(__doc__, GOLDEN_DIR, generate, check,
                                   check_help="regenerate into a temp folder and compare with tests/golden/fx/",
                                   out_help="write DIR/<case>.json instead of tests/golden/fx/", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
