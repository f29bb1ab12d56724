#!/usr/bin/env python3
"""Reference data for pt2lab's CPU executor: tests/golden/exec/cases.json plus
.npy files under tests/golden/exec/<entry name>/ (docs/FORMATS.md section 5).

    /usr/bin/python3 tools/exec_reference.py            # write tests/golden/exec/
    /usr/bin/python3 tools/exec_reference.py --out DIR  # write DIR/cases.json, DIR/<entry>/...
    /usr/bin/python3 tools/exec_reference.py --check    # regenerate into a temp dir, compare

Three kinds of entries, each computed by real PyTorch 2.14.1 (Debian sid's
python3-torch, run by scripts/torch_env.sh): single op calls ("cases", one or
more per kernel of src/core/exec/kernel_table.cpp, with arguments as an export
graph node holds them), MinMaxObserver runs ("observers") and multi-step runs
of the lesson models on the weights stored in their archives ("model_runs").
Every case calls the op itself (torch.ops.<target>); none is a formula.

    bash scripts/torch_env.sh run sid python3 tools/exec_reference.py [--check]
"""

import os
import sys

# Seeded data depends on the CPU kernels torch picks; pin them before torch loads.
os.environ["ATEN_CPU_CAPABILITY"] = "default"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import base64  # noqa: E402
import copy  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import operator  # noqa: E402
import tempfile  # noqa: E402
import zlib  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Callable, Dict, List, Optional, Sequence, Tuple  # noqa: E402

import torch  # noqa: E402
from torch.ao.quantization import HistogramObserver, MinMaxObserver  # noqa: E402

import assetlib  # noqa: E402
import fx_json  # noqa: E402
import lesson_models  # noqa: E402
import torch.ao.quantization.fx._decomposed  # noqa: E402,F401  (registers quantized_decomposed)

SCRIPT = "tools/exec_reference.py"
FORMAT = "pt2lab.exec_cases"
VERSION = 1
GOLDEN_DIR = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "exec")
CASES_FILE = "cases.json"
KINDS = ("cases", "observers", "model_runs")

# ---------------------------------------------------------------------------
# Tensor recipes. Each is a function of a torch.Generator seeded from the entry
# and tensor names (crc32), so reordering or adding entries changes nothing else.
# ---------------------------------------------------------------------------

TensorRecipe = Callable[[torch.Generator], torch.Tensor]


def seed_of(*names: str) -> int:
    return zlib.crc32("/".join(names).encode("utf-8"))


def randn(*shape, scale=1.0, shift=0.0, distinct=False) -> TensorRecipe:
    """shift + scale * randn; `distinct` asserts no two values are equal (max_pool)."""

    def make(g):
        t = shift + scale * torch.randn(shape, generator=g)
        if distinct and torch.unique(t).numel() != t.numel():
            raise AssertionError("randn drew a tie; pick another shape or name")
        return t

    return make


def conv_weight(*shape) -> TensorRecipe:
    """randn scaled by 1/sqrt(fan_in): outputs stay O(1), so 1e-5 is a fair tolerance."""
    fan_in = math.prod(shape[1:])
    return randn(*shape, scale=1.0 / math.sqrt(fan_in))


def uniform(*shape, low, high) -> TensorRecipe:
    return lambda g: low + (high - low) * torch.rand(shape, generator=g)


def randint(*shape, low, high, dtype) -> TensorRecipe:
    """Integers in [low, high] inclusive."""
    return lambda g: torch.randint(low, high + 1, shape, generator=g, dtype=dtype)


def arange_times(start, stop, step, dtype=torch.float32) -> TensorRecipe:
    """start, start + step, ... (< stop): integer steps times `step`, exact in float32
    for the steps used here."""
    return lambda g: (torch.arange(start, stop, dtype=torch.float64) * step).to(dtype)


def values(data, dtype=torch.float32) -> TensorRecipe:
    return lambda g: torch.tensor(data, dtype=dtype)


def full(shape, value, dtype=torch.float32) -> TensorRecipe:
    return lambda g: torch.full(shape, value, dtype=dtype)


def with_zeros(recipe: TensorRecipe, every: int) -> TensorRecipe:
    """Sets every `every`-th element to exactly 0.0 (relu at the boundary)."""

    def make(g):
        t = recipe(g)
        t.view(-1)[::every] = 0.0
        return t

    return make


def make_tensor(recipe: TensorRecipe, *names: str) -> torch.Tensor:
    g = torch.Generator()
    g.manual_seed(seed_of(*names))
    return recipe(g).contiguous()


# ---------------------------------------------------------------------------
# Op cases
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class T:
    """An argument that is the tensor `key` of the case's `tensors`."""

    key: str


@dataclass(frozen=True)
class N:
    """An argument that is the value of the setup call `name` (e.g. the tuple a
    multi-output op returns, for an operator.getitem case)."""

    name: str


@dataclass
class Setup:
    """A call made before the case's own call; its value is N(name)."""

    name: str
    target: str
    args: list
    kwargs: dict = field(default_factory=dict)


@dataclass
class Case:
    name: str
    target: str  # "aten.conv2d.default", "quantized_decomposed.quantize_per_tensor.default",
    #              or "operator.getitem"
    args: list
    tensors: Dict[str, TensorRecipe]
    kwargs: dict = field(default_factory=dict)
    mutates: Tuple[int, ...] = ()  # argument indices an in-place op writes
    setup: Tuple[Setup, ...] = ()
    raises: bool = False  # torch refuses the call; the case records its message

    @property
    def full_target(self) -> str:
        return full_target(self.target)


def full_target(target: str) -> str:
    """The target as a graph node carries it: torch.ops.aten.relu.default, operator.getitem."""
    return target if target.startswith("operator.") else f"torch.ops.{target}"


def encode_arg(value):
    """FORMATS.md section 2's argument encoding, plus {"tensor": key}."""
    if isinstance(value, T):
        return {"tensor": value.key}
    if isinstance(value, N):
        return {"node": value.name}
    if isinstance(value, list):
        return [encode_arg(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [encode_arg(v) for v in value]}
    return fx_json.encode_arg(value)


def bind(value, tensors, values=None):
    """Replaces every T in an argument by a fresh copy of its tensor, every N by
    the value of that setup call."""
    if isinstance(value, T):
        return tensors[value.key].clone()
    if isinstance(value, N):
        return values[value.name]
    if isinstance(value, list):
        return [bind(v, tensors, values) for v in value]
    if isinstance(value, tuple):
        return tuple(bind(v, tensors, values) for v in value)
    return value


def torch_callable(target: str):
    """The Python callable a node with this target calls."""
    if target == "operator.getitem":
        return operator.getitem
    op = torch.ops
    for part in target.split("."):
        op = getattr(op, part)
    return op


def call_text(target: str, args: list, kwargs: dict) -> str:
    """How a case was computed, as the Python call that ran (for test messages)."""

    def show(v):
        if isinstance(v, T):
            return v.key
        if isinstance(v, N):
            return v.name
        if isinstance(v, list):
            return "[" + ", ".join(show(x) for x in v) + "]"
        if isinstance(v, tuple):
            return "(" + ", ".join(show(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        return repr(v)

    parts = [show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()]
    return f"{full_target(target)}({', '.join(parts)})"

# --- the table ---------------------------------------------------------------

CONV2D = "aten.conv2d.default"
CONVOLUTION = "aten.convolution.default"
BN_ARGS = [T("x"), T("weight"), T("bias"), T("running_mean"), T("running_var")]


def pair(v):
    return list(v) if isinstance(v, (list, tuple)) else [v, v]


def conv_case(name, x_shape, w_shape, bias=True, stride=1, padding=0, dilation=1, groups=1,
              target=CONV2D):
    """conv2d with every argument written out (convolution: all 9)."""
    tensors = {"x": randn(*x_shape), "weight": conv_weight(*w_shape)}
    if bias:
        tensors["bias"] = randn(w_shape[0], scale=0.1)
    args = [T("x"), T("weight"), T("bias") if bias else None,
            pair(stride), pair(padding), pair(dilation)]
    args += [groups] if target == CONV2D else [False, [0, 0], groups]
    return Case(name, target, args, tensors)


def bn_tensors(shape, affine=True):
    channels = shape[1]
    tensors = {"x": randn(*shape, scale=1.5, shift=0.5)}
    if affine:
        tensors["weight"] = randn(channels, scale=0.2, shift=1.0)
        tensors["bias"] = randn(channels, scale=0.1)
    tensors["running_mean"] = randn(channels, scale=0.3)
    tensors["running_var"] = uniform(channels, low=0.5, high=1.5)
    return tensors


def q_case(name, x, scale, zero_point, quant_min, quant_max, dtype):
    return Case(name, "quantized_decomposed.quantize_per_tensor.default",
                [T("x"), scale, zero_point, quant_min, quant_max, dtype], {"x": x})


def dq_case(name, x, scale, zero_point, quant_min, quant_max, dtype):
    return Case(name, "quantized_decomposed.dequantize_per_tensor.default",
                [T("x"), scale, zero_point, quant_min, quant_max, dtype], {"x": x})


# A quantization scale as convert_pt2e writes it (float(float32 scale)), from the fact sheet.
ACT_SCALE, ACT_ZP = 0.021406318992376328, 130

def rnn_case(name, target, gates, x_shape, hidden, layers=1, bidirectional=False,
             batch_first=True, biases=True):
    """lstm.input (gates 4, hx = [h0, c0]) or gru.input (gates 3, hx = h0) with every argument
    written out, as export holds them; params per layer and direction as torch flattens them."""
    dirs = 2 if bidirectional else 1
    batch = x_shape[0] if batch_first else x_shape[1]
    tensors = {"x": randn(*x_shape)}
    params = []
    for layer in range(layers):
        in_size = x_shape[2] if layer == 0 else dirs * hidden
        for d in range(dirs):
            sfx = f"l{layer}" + ("_reverse" if d else "")
            tensors[f"w_ih_{sfx}"] = conv_weight(gates * hidden, in_size)
            tensors[f"w_hh_{sfx}"] = conv_weight(gates * hidden, hidden)
            params += [T(f"w_ih_{sfx}"), T(f"w_hh_{sfx}")]
            if biases:
                tensors[f"b_ih_{sfx}"] = randn(gates * hidden, scale=0.1)
                tensors[f"b_hh_{sfx}"] = randn(gates * hidden, scale=0.1)
                params += [T(f"b_ih_{sfx}"), T(f"b_hh_{sfx}")]
    tensors["h0"] = randn(layers * dirs, batch, hidden, scale=0.5)
    hx = T("h0")
    if gates == 4:
        tensors["c0"] = randn(layers * dirs, batch, hidden, scale=0.5)
        hx = [T("h0"), T("c0")]
    return Case(name, target, [T("x"), hx, params, biases, layers, 0.0, False, bidirectional,
                               batch_first], tensors)


CASES: List[Case] = [
    # conv2d: stride, padding, dilation, groups, bias, batch, non-square shapes, lesson sizes
    conv_case("conv2d_stride2_pad0_bias", (2, 4, 9, 9), (6, 4, 3, 3), stride=2),
    conv_case("conv2d_pad2_bias", (2, 4, 8, 8), (6, 4, 3, 3), padding=2),
    conv_case("conv2d_dilation2_pad2_bias", (2, 4, 10, 10), (6, 4, 3, 3), padding=2, dilation=2),
    conv_case("conv2d_groups2_pad1_bias", (2, 4, 8, 8), (6, 2, 3, 3), padding=1, groups=2),
    conv_case("conv2d_depthwise_pad1_bias", (2, 8, 8, 8), (8, 1, 3, 3), padding=1, groups=8),
    conv_case("conv2d_pad1_no_bias", (2, 4, 8, 8), (6, 4, 3, 3), bias=False, padding=1),
    Case("conv2d_no_bias_defaults_trimmed", CONV2D, [T("x"), T("weight")],
         {"x": randn(2, 4, 6, 6), "weight": conv_weight(5, 4, 3, 3)}),
    conv_case("conv2d_batch1_pad1_bias", (1, 3, 8, 8), (4, 3, 3, 3), padding=1),
    conv_case("conv2d_batch5_pad1_bias", (5, 3, 8, 8), (4, 3, 3, 3), padding=1),
    conv_case("conv2d_input_7x11_pad1_bias", (2, 3, 7, 11), (4, 3, 3, 3), padding=1),
    conv_case("conv2d_kernel_3x1_pad_1x0_bias", (2, 3, 8, 9), (4, 3, 3, 1), padding=(1, 0)),
    conv_case("conv2d_mixed_stride_2x1_pad_0x1_dilation_1x2", (2, 3, 9, 10), (4, 3, 3, 3),
              stride=(2, 1), padding=(0, 1), dilation=(1, 2)),
    conv_case("conv2d_lesson_3to8_pad1_no_bias", (2, 3, 16, 16), (8, 3, 3, 3), bias=False,
              padding=1),
    conv_case("conv2d_lesson_3to8_pad1_bias", (2, 3, 16, 16), (8, 3, 3, 3), padding=1),
    conv_case("conv2d_resnet_64to64_56x56_pad1_no_bias", (1, 64, 56, 56), (64, 64, 3, 3),
              bias=False, padding=1),
    conv_case("convolution_stride2_pad0_bias", (2, 4, 9, 9), (6, 4, 3, 3), stride=2,
              target=CONVOLUTION),
    conv_case("convolution_depthwise_pad1_no_bias", (2, 8, 8, 8), (8, 1, 3, 3), bias=False,
              padding=1, groups=8, target=CONVOLUTION),

    # batch norm at each IR level
    Case("batch_norm_eval", "aten.batch_norm.default",
         BN_ARGS + [False, 0.1, 1e-05, False], bn_tensors((2, 8, 5, 5))),
    Case("batch_norm_eval_no_affine", "aten.batch_norm.default",
         [T("x"), None, None, T("running_mean"), T("running_var"), False, 0.1, 1e-05, False],
         bn_tensors((2, 8, 5, 5), affine=False)),
    Case("batch_norm_train", "aten.batch_norm.default",
         BN_ARGS + [True, 0.1, 1e-05, False], bn_tensors((2, 8, 5, 5)), mutates=(3, 4)),
    Case("native_batch_norm_legit_no_training",
         "aten._native_batch_norm_legit_no_training.default",
         BN_ARGS + [0.1, 1e-05], bn_tensors((2, 8, 5, 5))),
    Case("native_batch_norm_legit_functional_train",
         "aten._native_batch_norm_legit_functional.default",
         BN_ARGS + [True, 0.1, 1e-05], bn_tensors((2, 8, 5, 5))),
    Case("native_batch_norm_legit_functional_eval",
         "aten._native_batch_norm_legit_functional.default",
         BN_ARGS + [False, 0.1, 1e-05], bn_tensors((2, 8, 5, 5))),
    Case("native_batch_norm_legit_train", "aten._native_batch_norm_legit.default",
         BN_ARGS + [True, 0.1, 1e-05], bn_tensors((2, 8, 5, 5)), mutates=(3, 4)),
    Case("native_batch_norm_legit_eval", "aten._native_batch_norm_legit.default",
         BN_ARGS + [False, 0.1, 1e-05], bn_tensors((2, 8, 5, 5)), mutates=(3, 4)),
    Case("native_batch_norm_train", "aten.native_batch_norm.default",
         BN_ARGS + [True, 0.1, 1e-05], bn_tensors((2, 8, 5, 5)), mutates=(3, 4)),
    Case("native_batch_norm_eval", "aten.native_batch_norm.default",
         BN_ARGS + [False, 0.1, 1e-05], bn_tensors((2, 8, 5, 5)), mutates=(3, 4)),
    Case("native_batch_norm_train_no_affine_momentum_0.3", "aten.native_batch_norm.default",
         [T("x"), None, None, T("running_mean"), T("running_var"), True, 0.3, 0.001],
         bn_tensors((3, 4, 2, 5), affine=False), mutates=(3, 4)),

    # relu, mean
    Case("relu_both_signs_and_zeros", "aten.relu.default", [T("x")],
         {"x": with_zeros(randn(2, 8, 4, 4), every=7)}),
    Case("relu__in_place", "aten.relu_.default", [T("x")],
         {"x": with_zeros(randn(2, 8, 4, 4), every=5)}, mutates=(0,)),
    Case("mean_all", "aten.mean.default", [T("x")], {"x": randn(2, 8, 5, 6)}),
    *[Case(f"mean_dim_{'_'.join(str(d).replace('-', 'neg') for d in dims)}"
           f"{'_keepdim' if keep else ''}", "aten.mean.dim",
           [T("x"), dims] + ([True] if keep else []), {"x": randn(2, 8, 5, 6)})
      for dims in ([2, 3], [1], [-1]) for keep in (False, True)],

    # linear and its Core ATen pieces
    Case("linear_bias", "aten.linear.default", [T("x"), T("weight"), T("bias")],
         {"x": randn(2, 8), "weight": conv_weight(4, 8), "bias": randn(4, scale=0.1)}),
    Case("linear_no_bias", "aten.linear.default", [T("x"), T("weight")],
         {"x": randn(2, 8), "weight": conv_weight(4, 8)}),
    Case("linear_bias_3d_input", "aten.linear.default", [T("x"), T("weight"), T("bias")],
         {"x": randn(2, 3, 8), "weight": conv_weight(4, 8), "bias": randn(4, scale=0.1)}),
    Case("permute_1_0", "aten.permute.default", [T("x"), [1, 0]], {"x": randn(3, 5)}),
    Case("permute_0_2_3_1", "aten.permute.default", [T("x"), [0, 2, 3, 1]],
         {"x": randn(2, 3, 4, 5)}),
    Case("t_2d", "aten.t.default", [T("x")], {"x": randn(3, 5)}),
    Case("mm_2x8_8x4", "aten.mm.default", [T("x"), T("y")],
         {"x": randn(2, 8), "y": conv_weight(8, 4)}),
    Case("mm_5x3_3x7", "aten.mm.default", [T("x"), T("y")],
         {"x": randn(5, 3), "y": randn(3, 7)}),
    Case("addmm_default_beta_alpha", "aten.addmm.default", [T("bias"), T("x"), T("weight_t")],
         {"bias": randn(4, scale=0.1), "x": randn(2, 8), "weight_t": conv_weight(8, 4)}),
    Case("addmm_beta_0.5_alpha_2.0", "aten.addmm.default", [T("bias"), T("x"), T("weight_t")],
         {"bias": randn(4), "x": randn(2, 8), "weight_t": conv_weight(8, 4)},
         kwargs={"beta": 0.5, "alpha": 2.0}),

    # add, add_, copy_
    Case("add_same_shape", "aten.add.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8, 4, 4), "y": randn(2, 8, 4, 4)}),
    Case("add_broadcast_2x8x4x4_8x1x1", "aten.add.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8, 4, 4), "y": randn(8, 1, 1)}),
    Case("add_broadcast_2x8_8", "aten.add.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8), "y": randn(8)}),
    Case("add_alpha_2", "aten.add.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8, 4, 4), "y": randn(2, 8, 4, 4)}, kwargs={"alpha": 2}),
    Case("add_scalar_float", "aten.add.Scalar", [T("x"), 2.5], {"x": randn(2, 8, 4, 4)}),
    Case("add_scalar_int_alpha_3", "aten.add.Scalar", [T("x"), 2, 3], {"x": randn(2, 8)}),
    Case("sub_same_shape", "aten.sub.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8, 4, 4), "y": randn(2, 8, 4, 4)}),
    Case("sub_broadcast_alpha_0.5", "aten.sub.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8, 4, 4), "y": randn(8, 1, 1)}, kwargs={"alpha": 0.5}),
    Case("mul_same_shape", "aten.mul.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8, 4, 4), "y": randn(2, 8, 4, 4)}),
    Case("mul_broadcast_2x8_8", "aten.mul.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8), "y": randn(8)}),
    Case("add__same_shape", "aten.add_.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8, 4, 4), "y": randn(2, 8, 4, 4)}, mutates=(0,)),
    Case("add__broadcast_2x8_8", "aten.add_.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8), "y": randn(8)}, mutates=(0,)),
    Case("add__num_batches_tracked_int64_0d", "aten.add_.Tensor", [T("num_batches_tracked"), 1],
         {"num_batches_tracked": values(3, torch.int64)}, mutates=(0,)),
    Case("copy__same_shape", "aten.copy_.default", [T("self"), T("src")],
         {"self": randn(8), "src": randn(8)}, mutates=(0,)),
    Case("copy__broadcast_8_into_4x8", "aten.copy_.default", [T("self"), T("src")],
         {"self": randn(4, 8), "src": randn(8)}, mutates=(0,)),

    # pooling and shapes
    Case("max_pool2d_k3_s2_p1", "aten.max_pool2d.default", [T("x"), [3, 3], [2, 2], [1, 1]],
         {"x": randn(2, 4, 9, 9, distinct=True)}),
    Case("max_pool2d_k2_default_stride", "aten.max_pool2d.default", [T("x"), [2, 2]],
         {"x": randn(2, 4, 8, 10, distinct=True)}),
    Case("max_pool2d_k3_s2_p0_ceil_mode", "aten.max_pool2d.default",
         [T("x"), [3, 3], [2, 2], [0, 0], [1, 1], True],
         {"x": randn(2, 4, 8, 9, distinct=True)}),
    Case("max_pool2d_with_indices_k3_s2_p1", "aten.max_pool2d_with_indices.default",
         [T("x"), [3, 3], [2, 2], [1, 1]], {"x": randn(2, 4, 9, 9, distinct=True)}),
    Case("max_pool2d_with_indices_k2_default_stride", "aten.max_pool2d_with_indices.default",
         [T("x"), [2, 2]], {"x": randn(2, 4, 8, 10, distinct=True)}),
    Case("avg_pool2d_k2_default_stride", "aten.avg_pool2d.default", [T("x"), [2, 2]],
         {"x": randn(2, 4, 8, 10)}),
    Case("avg_pool2d_k3_s2_p1", "aten.avg_pool2d.default", [T("x"), [3, 3], [2, 2], [1, 1]],
         {"x": randn(2, 4, 9, 9)}),
    Case("avg_pool2d_k3_s2_p1_ceil_no_pad_count", "aten.avg_pool2d.default",
         [T("x"), [3, 3], [2, 2], [1, 1], True, False], {"x": randn(2, 4, 8, 9)}),
    Case("avg_pool2d_k2_s1_divisor_3", "aten.avg_pool2d.default",
         [T("x"), [2, 2], [1, 1], [0, 0], False, True, 3], {"x": randn(1, 3, 5, 6)}),
    Case("_adaptive_avg_pool2d_to_1x1", "aten._adaptive_avg_pool2d.default", [T("x"), [1, 1]],
         {"x": randn(2, 8, 5, 6)}),
    Case("_adaptive_avg_pool2d_5x7_to_3x2", "aten._adaptive_avg_pool2d.default",
         [T("x"), [3, 2]], {"x": randn(2, 4, 5, 7)}),
    Case("adaptive_avg_pool2d_to_1x1", "aten.adaptive_avg_pool2d.default", [T("x"), [1, 1]],
         {"x": randn(2, 8, 5, 6)}),
    Case("adaptive_avg_pool2d_5x7_to_3x2", "aten.adaptive_avg_pool2d.default",
         [T("x"), [3, 2]], {"x": randn(2, 4, 5, 7)}),
    Case("flatten_using_ints_start1", "aten.flatten.using_ints", [T("x"), 1],
         {"x": randn(2, 8, 1, 1)}),
    Case("view_2x8x1x1_to_2x8", "aten.view.default", [T("x"), [2, 8]],
         {"x": randn(2, 8, 1, 1)}),
    Case("reshape_2x3x4_to_4_neg1", "aten.reshape.default", [T("x"), [4, -1]],
         {"x": randn(2, 3, 4)}),
    Case("clone_2x3x4", "aten.clone.default", [T("x")], {"x": randn(2, 3, 4)}),
    Case("detach_2x3x4", "aten.detach.default", [T("x")], {"x": randn(2, 3, 4)}),
    Case("sym_size_int_dim1", "aten.sym_size.int", [T("x"), 1], {"x": randn(2, 3, 4)}),
    Case("sym_size_int_dim_neg1", "aten.sym_size.int", [T("x"), -1], {"x": randn(2, 3, 4)}),

    # activations of the vision families (MobileNet v2/v3, EfficientNet, RegNet)
    Case("hardtanh_relu6", "aten.hardtanh.default", [T("x"), 0, 6],
         {"x": randn(2, 8, 4, 4, scale=5.0)}),
    Case("hardtanh_defaults", "aten.hardtanh.default", [T("x")], {"x": randn(2, 8, 4, 4)}),
    Case("hardtanh__relu6_in_place", "aten.hardtanh_.default", [T("x"), 0.0, 6.0],
         {"x": randn(2, 8, 4, 4, scale=5.0)}, mutates=(0,)),
    Case("hardsigmoid_wide_range", "aten.hardsigmoid.default", [T("x")],
         {"x": randn(2, 8, 4, 4, scale=4.0)}),
    Case("hardswish_wide_range", "aten.hardswish.default", [T("x")],
         {"x": randn(2, 8, 4, 4, scale=4.0)}),
    Case("hardswish__in_place", "aten.hardswish_.default", [T("x")],
         {"x": randn(2, 8, 4, 4, scale=4.0)}, mutates=(0,)),
    Case("sigmoid_wide_range", "aten.sigmoid.default", [T("x")],
         {"x": randn(2, 8, 4, 4, scale=6.0)}),
    Case("silu_wide_range", "aten.silu.default", [T("x")], {"x": randn(2, 8, 4, 4, scale=4.0)}),
    Case("silu__in_place", "aten.silu_.default", [T("x")], {"x": randn(2, 8, 4, 4, scale=4.0)},
         mutates=(0,)),
    Case("gelu_erf", "aten.gelu.default", [T("x")], {"x": randn(2, 5, 8, scale=3.0)}),
    Case("gelu_tanh", "aten.gelu.default", [T("x")], {"x": randn(2, 5, 8, scale=3.0)},
         kwargs={"approximate": "tanh"}),
    Case("clamp_min_0", "aten.clamp.default", [T("x"), 0], {"x": randn(2, 8, 4, 4)}),
    Case("clamp_max_6", "aten.clamp.default", [T("x"), None, 6], {"x": randn(2, 8, 4, 4, scale=8.0)}),
    Case("clamp_min_max_float", "aten.clamp.default", [T("x"), -0.5, 0.25],
         {"x": randn(2, 8, 4, 4)}),
    Case("dropout_eval_identity", "aten.dropout.default", [T("x"), 0.2, False],
         {"x": randn(2, 8, 4, 4)}),
    Case("dropout__eval_identity", "aten.dropout_.default", [T("x"), 0.5, False],
         {"x": randn(2, 8)}, mutates=(0,)),
    Case("mul_scalar_float", "aten.mul.Scalar", [T("x"), 0.7071067811865476],
         {"x": randn(2, 2, 5, 4)}),
    Case("div_tensor_by_int_6", "aten.div.Tensor", [T("x"), 6], {"x": randn(2, 8, 4, 4)}),
    Case("div_tensor_broadcast", "aten.div.Tensor", [T("x"), T("y")],
         {"x": randn(2, 8, 4, 4), "y": uniform(8, 1, 1, low=0.5, high=2.0)}),

    # views, splits and joins (ShuffleNet, SqueezeNet, attention)
    Case("transpose_1_2", "aten.transpose.int", [T("x"), 1, 2], {"x": randn(1, 2, 4, 3, 3)}),
    Case("transpose_neg2_neg1", "aten.transpose.int", [T("x"), -2, -1], {"x": randn(4, 5, 8)}),
    Case("contiguous_copy", "aten.contiguous.default", [T("x")], {"x": randn(2, 3, 4)}),
    Case("select_dim0_index2", "aten.select.int", [T("x"), 0, 2], {"x": randn(3, 10, 1, 32)}),
    Case("select_dim1_index_neg1", "aten.select.int", [T("x"), 1, -1], {"x": randn(2, 5, 8)}),
    Case("select_index_out_of_range", "aten.select.int", [T("x"), 0, 3], {"x": randn(3, 4)},
         raises=True),
    Case("squeeze_dim_neg2", "aten.squeeze.dim", [T("x"), -2], {"x": randn(3, 10, 1, 32)}),
    Case("squeeze_dim_not_one_kept", "aten.squeeze.dim", [T("x"), 1], {"x": randn(3, 10, 1, 32)}),
    Case("squeeze_dims_list", "aten.squeeze.dims", [T("x"), [0, -2, 1]],
         {"x": randn(1, 10, 1, 32)}),
    Case("unsqueeze_0", "aten.unsqueeze.default", [T("x"), 0], {"x": randn(10, 1, 3, 32)}),
    Case("unsqueeze_neg1", "aten.unsqueeze.default", [T("x"), -1], {"x": randn(4, 5)}),
    Case("unflatten_neg1_3x32", "aten.unflatten.int", [T("x"), -1, [3, 32]],
         {"x": randn(10, 1, 96)}),
    Case("unflatten_infer", "aten.unflatten.int", [T("x"), 1, [2, -1]], {"x": randn(2, 8, 3)}),
    Case("expand_size1_dims", "aten.expand.default", [T("x"), [2, 5, 8]], {"x": randn(2, 1, 8)}),
    Case("expand_new_leading_and_keep", "aten.expand.default", [T("x"), [3, -1, 4]],
         {"x": randn(5, 1)}),
    Case("_unsafe_view_to_2d", "aten._unsafe_view.default", [T("x"), [10, 32]],
         {"x": randn(10, 4, 8)}),
    Case("cat_dim1_three", "aten.cat.default", [[T("a"), T("b"), T("c")], 1],
         {"a": randn(1, 4, 3, 3), "b": randn(1, 2, 3, 3), "c": randn(1, 5, 3, 3)}),
    Case("cat_dim0_default", "aten.cat.default", [[T("a"), T("b")]],
         {"a": randn(2, 3), "b": randn(4, 3)}),
    Case("cat_size_mismatch", "aten.cat.default", [[T("a"), T("b")], 1],
         {"a": randn(2, 3), "b": randn(3, 3)}, raises=True),
    Case("chunk_2_dim1", "aten.chunk.default", [T("x"), 2, 1], {"x": randn(1, 8, 4, 4)}),
    Case("chunk_3_uneven", "aten.chunk.default", [T("x"), 3], {"x": randn(7, 2)}),
    Case("split_4_dim1", "aten.split.Tensor", [T("x"), 4, 1], {"x": randn(1, 8, 4, 4)}),
    Case("split_3_uneven", "aten.split.Tensor", [T("x"), 3], {"x": randn(7, 2)}),
    Case("split_with_sizes_dim1", "aten.split_with_sizes.default", [T("x"), [4, 4], 1],
         {"x": randn(1, 8, 4, 4)}),
    Case("split_with_sizes_uneven", "aten.split_with_sizes.default", [T("x"), [1, 4, 2]],
         {"x": randn(7, 2)}),
    Case("split_with_sizes_bad_sum", "aten.split_with_sizes.default", [T("x"), [1, 4]],
         {"x": randn(7, 2)}, raises=True),

    # transformer pieces (nn.TransformerEncoderLayer, nn.MultiheadAttention)
    Case("bmm_4x10x8_4x8x10", "aten.bmm.default", [T("x"), T("y")],
         {"x": randn(4, 10, 8), "y": randn(4, 8, 10)}),
    Case("softmax_int_last", "aten.softmax.int", [T("x"), -1], {"x": randn(4, 10, 10, scale=3.0)}),
    Case("softmax_int_dim1", "aten.softmax.int", [T("x"), 1], {"x": randn(2, 5, 3)}),
    Case("_softmax_last", "aten._softmax.default", [T("x"), -1, False],
         {"x": randn(4, 10, 10, scale=3.0)}),
    Case("layer_norm_affine", "aten.layer_norm.default",
         [T("x"), [32], T("weight"), T("bias"), 1e-05, False],
         {"x": randn(1, 10, 32, scale=2.0, shift=0.5), "weight": randn(32, scale=0.2, shift=1.0),
          "bias": randn(32, scale=0.1)}),
    Case("layer_norm_2d_shape_no_affine", "aten.layer_norm.default", [T("x"), [4, 5]],
         {"x": randn(3, 4, 5)}),
    Case("native_layer_norm_affine", "aten.native_layer_norm.default",
         [T("x"), [32], T("weight"), T("bias"), 1e-05],
         {"x": randn(1, 10, 32, scale=2.0, shift=0.5), "weight": randn(32, scale=0.2, shift=1.0),
          "bias": randn(32, scale=0.1)}),
    Case("sdpa_4_heads", "aten.scaled_dot_product_attention.default", [T("q"), T("k"), T("v")],
         {"q": randn(1, 4, 10, 8), "k": randn(1, 4, 10, 8), "v": randn(1, 4, 10, 8)}),
    Case("sdpa_causal_scale", "aten.scaled_dot_product_attention.default",
         [T("q"), T("k"), T("v"), None, 0.0, True], {"q": randn(2, 2, 5, 4), "k": randn(2, 2, 5, 4),
                                                    "v": randn(2, 2, 5, 6)},
         kwargs={"scale": 0.3}),
    Case("sdpa_bool_mask", "aten.scaled_dot_product_attention.default",
         [T("q"), T("k"), T("v"), T("mask")],
         {"q": randn(1, 2, 5, 4), "k": randn(1, 2, 7, 4), "v": randn(1, 2, 7, 4),
          "mask": values([[j <= i + 2 for j in range(7)] for i in range(5)], torch.bool)}),
    Case("sdpa_float_mask", "aten.scaled_dot_product_attention.default",
         [T("q"), T("k"), T("v"), T("mask")],
         {"q": randn(1, 2, 5, 4), "k": randn(1, 2, 5, 4), "v": randn(1, 2, 5, 4),
          "mask": randn(5, 5)}),
    Case("eq_scalar_neg_inf", "aten.eq.Scalar", [T("x"), float("-inf")],
         {"x": values([[0.5, float("-inf"), 2.0], [float("-inf"), -1.0, 0.0]])}),
    Case("logical_not_bool", "aten.logical_not.default", [T("x")],
         {"x": values([[True, False, True], [False, False, True]], torch.bool)}),
    Case("any_dim_keepdim", "aten.any.dim", [T("x"), -1, True],
         {"x": values([[True, False, False], [False, False, False]], torch.bool)}),
    Case("any_dim_float", "aten.any.dim", [T("x"), 0],
         {"x": values([[0.0, 1.5, 0.0], [0.0, 0.0, -2.0]])}),
    Case("where_self_broadcast", "aten.where.self", [T("c"), T("x"), T("y")],
         {"c": values([[True], [False]], torch.bool), "x": randn(2, 3), "y": randn(2, 3)}),
    Case("full_like_zero", "aten.full_like.default", [T("x"), 0],
         {"x": randn(2, 2, 5, 5)},
         kwargs={"pin_memory": False}),

    # factories, slices and tanh (nn.LSTM / nn.GRU at Core ATen: the initial state, one time
    # step of the precomputed input, the cell's tanh)
    Case("tanh_wide_range", "aten.tanh.default", [T("x")], {"x": randn(2, 8, 4, 4, scale=3.0)}),
    Case("slice_dim0_one_step", "aten.slice.Tensor", [T("x"), 0, 3, 4], {"x": randn(10, 1, 16)}),
    Case("slice_dim1_negative_start_step2", "aten.slice.Tensor", [T("x"), 1, -5, None, 2],
         {"x": randn(2, 7, 3)}),
    Case("slice_end_past_the_size", "aten.slice.Tensor", [T("x"), -1, 2, 100],
         {"x": randn(3, 5)}),
    Case("slice_defaults_whole", "aten.slice.Tensor", [T("x")], {"x": randn(3, 4)}),
    Case("slice_empty_range", "aten.slice.Tensor", [T("x"), 1, 4, 2], {"x": randn(3, 5)}),
    Case("full_zero_lstm_state", "aten.full.default", [[1, 1, 32], 0], {},
         kwargs={"dtype": torch.float32, "layout": torch.strided, "device": torch.device("cpu"),
                 "pin_memory": False}),
    Case("full_float_fill_default_dtype", "aten.full.default", [[2, 3], 1.5], {}),
    Case("full_int_fill_int64", "aten.full.default", [[4], 7], {}),
    Case("zeros_lstm_state", "aten.zeros.default", [[1, 1, 32]], {},
         kwargs={"dtype": torch.float32, "device": torch.device("cpu"), "pin_memory": False}),
    Case("zeros_default_dtype", "aten.zeros.default", [[2, 3]], {}),
    Case("zeros_negative_size", "aten.zeros.default", [[-1, 2]], {}, raises=True),

    # recurrent layers (nn.LSTM, nn.GRU) as export keeps them
    rnn_case("lstm_one_layer_batch_first", "aten.lstm.input", 4, (2, 5, 6), 8),
    rnn_case("lstm_two_layers_bidirectional_seq_first", "aten.lstm.input", 4, (5, 2, 6), 8,
             layers=2, bidirectional=True, batch_first=False),
    rnn_case("lstm_no_biases", "aten.lstm.input", 4, (1, 4, 3), 5, biases=False),
    rnn_case("gru_one_layer_batch_first", "aten.gru.input", 3, (2, 5, 6), 8),
    rnn_case("gru_two_layers_bidirectional_no_biases", "aten.gru.input", 3, (5, 2, 6), 8,
             layers=2, bidirectional=True, batch_first=False, biases=False),

    # multi-output ops are unpacked with operator.getitem
    Case("getitem_max_pool2d_with_indices_1", "operator.getitem", [N("pool"), 1],
         {"x": randn(2, 4, 8, 8, distinct=True)},
         setup=(Setup("pool", "aten.max_pool2d_with_indices.default",
                      [T("x"), [2, 2], [2, 2]]),)),
    Case("getitem_native_batch_norm_legit_no_training_0", "operator.getitem", [N("bn"), 0],
         bn_tensors((2, 8, 5, 5)),
         setup=(Setup("bn", "aten._native_batch_norm_legit_no_training.default",
                      BN_ARGS + [0.1, 1e-05]),)),

    # export's runtime checks: None when the metadata matches, an error when not
    Case("assert_tensor_metadata_dtype_ok", "aten._assert_tensor_metadata.default", [T("x")],
         {"x": randn(2, 3)}, kwargs={"dtype": torch.float32}),
    Case("assert_tensor_metadata_size_dtype_ok", "aten._assert_tensor_metadata.default",
         [T("x"), [2, 3], None, torch.float32], {"x": randn(2, 3)}),
    Case("assert_tensor_metadata_dtype_mismatch", "aten._assert_tensor_metadata.default",
         [T("x")], {"x": randn(2, 3)}, kwargs={"dtype": torch.int64}, raises=True),
    Case("assert_tensor_metadata_size_mismatch", "aten._assert_tensor_metadata.default",
         [T("x"), [3, 2]], {"x": randn(2, 3)}, raises=True),

    # quantize / dequantize (quantized_decomposed)
    # k * 0.25 with scale 0.5: x / scale lands on every .5 (round half to even) and
    # clamps at both ends (-150 + 128 < 0, 150 + 128 > 255).
    q_case("quantize_uint8_half_ties_clamp", arange_times(-300, 301, 0.25), 0.5, 128, 0, 255,
           torch.uint8),
    q_case("quantize_int8_half_ties_clamp", arange_times(-300, 301, 0.25), 0.5, 0, -128, 127,
           torch.int8),
    q_case("quantize_int8_negative_zero_point", arange_times(-300, 301, 0.25), 0.5, -5, -128, 127,
           torch.int8),
    # 1.0 / 0.1 == 10.0 in float32, but k * 0.05 is inexact in float32: x * 10
    # lands just above or below .5, which x / scale in double would get wrong.
    q_case("quantize_uint8_scale_0.1_near_ties", arange_times(-100, 101, 0.05), 0.1, 10, 0, 255,
           torch.uint8),
    q_case("quantize_uint8_activation_scale", randn(2, 8, 4, 4, scale=2.0), ACT_SCALE, ACT_ZP,
           0, 255, torch.uint8),
    q_case("quantize_int8_weight_symmetric_127", randn(8, 3, 3, 3, scale=0.2), 0.003, 0, -127,
           127, torch.int8),
    dq_case("dequantize_uint8_full_range", arange_times(0, 256, 1, torch.uint8), 0.5, 128, 0, 255,
            torch.uint8),
    dq_case("dequantize_int8_full_range", arange_times(-128, 128, 1, torch.int8), 0.25, 0,
            -128, 127, torch.int8),
    dq_case("dequantize_int8_negative_zero_point", arange_times(-128, 128, 1, torch.int8), 0.25,
            -5, -128, 127, torch.int8),
    dq_case("dequantize_uint8_activation_scale",
            randint(2, 8, 4, 4, low=0, high=255, dtype=torch.uint8), ACT_SCALE, ACT_ZP, 0, 255,
            torch.uint8),
    dq_case("dequantize_int8_weight_symmetric_127",
            randint(8, 3, 3, 3, low=-127, high=127, dtype=torch.int8), 0.005, 0, -127, 127,
            torch.int8),
    q_case("quantize_int8_activation_zero_point_neg128", uniform(2, 8, 4, 4, low=0.0, high=3.0),
           ACT_SCALE, -128, -128, 127, torch.int8),
    dq_case("dequantize_int8_activation_zero_point_neg128",
            randint(2, 8, 4, 4, low=-128, high=127, dtype=torch.int8), ACT_SCALE, -128, -128,
            127, torch.int8),

    # per-channel (axis 0 = output channels of a conv weight, axis 1 = activation channels)
    Case("quantize_per_channel_int8_axis0", "quantized_decomposed.quantize_per_channel.default",
         [T("x"), T("scales"), T("zero_points"), 0, -127, 127, torch.int8],
         {"x": conv_weight(8, 3, 3, 3), "scales": uniform(8, low=0.002, high=0.006),
          "zero_points": full((8,), 0, torch.int64)}),
    Case("quantize_per_channel_uint8_axis1", "quantized_decomposed.quantize_per_channel.default",
         [T("x"), T("scales"), T("zero_points"), 1, 0, 255, torch.uint8],
         {"x": randn(2, 4, 3, 3, scale=2.0), "scales": uniform(4, low=0.01, high=0.03),
          "zero_points": randint(4, low=100, high=150, dtype=torch.int64)}),
    Case("dequantize_per_channel_int8_axis0",
         "quantized_decomposed.dequantize_per_channel.default",
         [T("x"), T("scales"), T("zero_points"), 0, -127, 127, torch.int8],
         {"x": randint(8, 3, 3, 3, low=-127, high=127, dtype=torch.int8),
          "scales": uniform(8, low=0.002, high=0.006),
          "zero_points": full((8,), 0, torch.int64)}),
    Case("dequantize_per_channel_uint8_axis1_no_zero_points",
         "quantized_decomposed.dequantize_per_channel.default",
         [T("x"), T("scales"), None, 1, 0, 255, torch.uint8],
         {"x": randint(2, 4, 3, 3, low=0, high=255, dtype=torch.uint8),
          "scales": uniform(4, low=0.01, high=0.03)}),
]


# ConvNeXt and MaxViT (torchvision): MaxViT's attention einsums (spaced capitals), other
# equations the reference kernel takes (implicit output, diagonal, broadcast, three
# operands), swapaxes, and the as_strided of adaptive_avg_pool2d on a channels-last input
# (with the refusal of a view past the input's storage)
CASES += [
    Case("einsum_maxvit_scores", "aten.einsum.default",
         ["B G H I D, B G H J D -> B G H I J", [T("q"), T("k")]],
         {"q": randn(1, 4, 2, 16, 8), "k": randn(1, 4, 2, 16, 8)}),
    Case("einsum_maxvit_values", "aten.einsum.default",
         ["B G H I J, B G H J D -> B G H I D", [T("p"), T("v")]],
         {"p": uniform(1, 4, 2, 16, 16, low=0.0, high=0.125), "v": randn(1, 4, 2, 16, 8)}),
    Case("einsum_implicit_matmul", "aten.einsum.default", ["ij,jk", [T("a"), T("b")]],
         {"a": randn(3, 5), "b": randn(5, 4)}),
    Case("einsum_trace_diagonal", "aten.einsum.default", ["ii->", [T("a")]],
         {"a": randn(4, 4)}),
    Case("einsum_broadcast_size1", "aten.einsum.default", ["bij,bjk->bik", [T("a"), T("b")]],
         {"a": randn(1, 2, 3), "b": randn(4, 3, 5)}),
    Case("einsum_three_operands", "aten.einsum.default", ["ab,bc,cd->da", [T("a"), T("b"),
                                                                           T("c")]],
         {"a": randn(2, 3), "b": randn(3, 4), "c": randn(4, 5)}),
    Case("einsum_size_mismatch", "aten.einsum.default", ["ab,bc->ac", [T("a"), T("b")]],
         {"a": randn(2, 3), "b": randn(4, 4)}, raises=True),
    Case("einsum_output_label_unknown", "aten.einsum.default", ["ab->ca", [T("a")]],
         {"a": randn(2, 2)}, raises=True),
    Case("swapaxes_neg2_neg3", "aten.swapaxes.default", [T("x"), -2, -3],
         {"x": randn(1, 4, 4, 8)}),
    Case("as_strided_channels_last_mean", "aten.as_strided.default",
         [T("x"), [2, 8, 1, 1], [8, 1, 8, 8]], {"x": randn(2, 8, 1, 1)}),
    Case("as_strided_out_of_bounds", "aten.as_strided.default", [T("x"), [3, 3], [3, 1]],
         {"x": randn(6)}, raises=True),
]

# Swin / Swin v2 (relative position bias, window padding, cosine attention)
SWIN_CASES: List[Case] = [
    Case("index_table_by_flat_index", "aten.index.Tensor", [T("x"), [T("i")]],
         {"x": randn(49, 2), "i": randint(256, low=0, high=48, dtype=torch.int64)}),
    Case("index_none_then_2d_index_negative", "aten.index.Tensor", [T("x"), [None, T("i")]],
         {"x": randn(3, 5, 2), "i": randint(2, 3, low=-5, high=4, dtype=torch.int64)}),
    Case("index_two_apart_broadcast", "aten.index.Tensor", [T("x"), [T("i"), None, T("j")]],
         {"x": randn(4, 3, 5), "i": randint(2, 1, low=0, high=3, dtype=torch.int64),
          "j": randint(3, low=0, high=4, dtype=torch.int64)}),
    Case("index_two_adjacent_int32", "aten.index.Tensor", [T("x"), [None, T("i"), T("j")]],
         {"x": randn(2, 4, 5, 3), "i": randint(6, low=0, high=3, dtype=torch.int32),
          "j": randint(6, low=0, high=4, dtype=torch.int32)}),
    Case("index_out_of_range", "aten.index.Tensor", [T("x"), [T("i")]],
         {"x": randn(3, 2), "i": values([0, 3], torch.int64)}, raises=True),
    Case("slice_scatter_bias_middle", "aten.slice_scatter.default",
         [T("x"), T("src"), 0, 16, 32], {"x": randn(48), "src": randn(16)}),
    Case("slice_scatter_dim1_step2_negative_start", "aten.slice_scatter.default",
         [T("x"), T("src"), 1, -5, None, 2], {"x": randn(2, 7, 3), "src": randn(2, 3, 3)}),
    Case("slice_scatter_wrong_src_size", "aten.slice_scatter.default",
         [T("x"), T("src"), 0, 0, 2], {"x": randn(4, 3), "src": randn(3, 3)}, raises=True),
    Case("constant_pad_nd_window_zero", "aten.constant_pad_nd.default",
         [T("x"), [0, 0, 0, 0, 0, 0], 0.0], {"x": randn(1, 4, 4, 8)}),
    Case("constant_pad_nd_mixed_crop", "aten.constant_pad_nd.default",
         [T("x"), [1, 2, -1, 1], 1.5], {"x": randn(2, 3, 4, 5)}),
    Case("pad_constant_default_value", "aten.pad.default", [T("x"), [0, 0, 1, 3, 2, 0]],
         {"x": randn(1, 5, 5, 4)}),
    Case("pad_constant_value", "aten.pad.default", [T("x"), [2, 1], "constant", -2.0],
         {"x": randn(3, 4)}),
    Case("pad_odd_length", "aten.pad.default", [T("x"), [1, 2, 3]], {"x": randn(3, 4)},
         raises=True),
    Case("as_strided_channels_last_1x1", "aten.as_strided.default",
         [T("x"), [1, 32, 1, 1], [32, 1, 32, 32]], {"x": randn(1, 32, 1, 1)}),
    Case("as_strided_overlapping_offset", "aten.as_strided.default", [T("x"), [3, 3], [2, 1], 1],
         {"x": randn(4, 3)}),
    Case("alias_copy", "aten.alias.default", [T("x")], {"x": randn(1, 4, 4, 16)}),
    Case("zero_values", "aten.zero.default", [T("x")], {"x": randn(16)}),
    Case("zero__in_place", "aten.zero_.default", [T("x")], {"x": randn(2, 16)}, mutates=(0,)),
    Case("expand_as_norm", "aten.expand_as.default", [T("x"), T("y")],
         {"x": randn(4, 2, 16, 1), "y": randn(4, 2, 16, 8)}),
    Case("exp_logit_scale", "aten.exp.default", [T("x")], {"x": randn(2, 1, 1, scale=3.0)}),
    Case("pow_square", "aten.pow.Tensor_Scalar", [T("x"), 2.0], {"x": randn(4, 2, 16, 8)}),
    Case("pow_sqrt", "aten.pow.Tensor_Scalar", [T("x"), 0.5],
         {"x": uniform(4, 2, 16, 1, low=0.0, high=9.0)}),
    Case("pow_int_3", "aten.pow.Tensor_Scalar", [T("x"), 3], {"x": randn(3, 5)}),
    Case("clamp_min_eps", "aten.clamp_min.default", [T("x"), 1e-12],
         {"x": values([[0.0, 1e-13, -1.0, 2.5]])}),
    Case("sum_dim_keepdim", "aten.sum.dim_IntList", [T("x"), [3], True],
         {"x": randn(4, 2, 16, 8)}),
    Case("sum_dims_negative", "aten.sum.dim_IntList", [T("x"), [-1, 0]], {"x": randn(3, 4, 5)}),
    Case("sum_dim_none_all", "aten.sum.dim_IntList", [T("x"), None], {"x": randn(3, 4)}),
    Case("linalg_vector_norm_last_keepdim", "aten.linalg_vector_norm.default",
         [T("x"), 2.0, [-1], True], {"x": randn(4, 2, 16, 8)}),
    Case("linalg_vector_norm_default_all", "aten.linalg_vector_norm.default", [T("x")],
         {"x": randn(3, 5)}),
    Case("linalg_vector_norm_ord1_dim0", "aten.linalg_vector_norm.default", [T("x"), 1, [0]],
         {"x": randn(3, 5)}),
    Case("linalg_vector_norm_inf", "aten.linalg_vector_norm.default",
         [T("x"), float("inf"), [1]], {"x": randn(3, 5)}),
    Case("matmul_4d_attention", "aten.matmul.default", [T("x"), T("y")],
         {"x": randn(4, 2, 16, 8), "y": randn(4, 2, 8, 16)}),
    Case("matmul_broadcast_batch", "aten.matmul.default", [T("x"), T("y")],
         {"x": randn(2, 1, 3, 4), "y": randn(5, 4, 6)}),
    Case("matmul_vector_matrix", "aten.matmul.default", [T("x"), T("y")],
         {"x": randn(4), "y": randn(2, 4, 3)}),
    Case("matmul_matrix_vector", "aten.matmul.default", [T("x"), T("y")],
         {"x": randn(3, 4), "y": randn(4)}),
    Case("matmul_size_mismatch", "aten.matmul.default", [T("x"), T("y")],
         {"x": randn(3, 4), "y": randn(5, 2)}, raises=True),
]
CASES += SWIN_CASES

def folder_file(entry: str, name: str) -> str:
    return f"{entry}/{name}.npy"


def encode_result(value, case_name: str, index: int, files: Dict[str, bytes]):
    """One returned value: a tensor becomes an .npy file (its path), anything else
    (an int from sym_size, None) its section 2 encoding as {"value": ...}."""
    if isinstance(value, torch.Tensor):
        path = folder_file(case_name, f"out_{index}")
        files[path] = assetlib.npy_bytes(value.detach().numpy())
        return path
    return {"value": fx_json.encode_arg(value)}


def run_case(case: Case, files: Dict[str, bytes]) -> dict:
    """Computes one case; adds its .npy files to `files`, returns its JSON entry."""
    tensors = {key: make_tensor(recipe, case.name, key) for key, recipe in case.tensors.items()}
    tensor_files = {}
    for key, t in tensors.items():
        tensor_files[key] = folder_file(case.name, key)
        files[tensor_files[key]] = assetlib.npy_bytes(t.numpy())

    values = {}
    with torch.no_grad():
        for s in case.setup:
            values[s.name] = torch_callable(s.target)(
                *bind(s.args, tensors, values), **{k: bind(v, tensors, values)
                                                   for k, v in s.kwargs.items()})
    args = bind(case.args, tensors, values)
    kwargs = {k: bind(v, tensors, values) for k, v in case.kwargs.items()}
    entry = {"name": case.name, "target": case.full_target}
    if case.setup:
        entry["setup"] = [{"name": s.name, "target": full_target(s.target),
                           "args": encode_arg(s.args),
                           "kwargs": {k: encode_arg(v) for k, v in s.kwargs.items()}}
                          for s in case.setup]
    entry.update({
        "args": encode_arg(case.args),
        "kwargs": {k: encode_arg(v) for k, v in case.kwargs.items()},
        "tensors": tensor_files,
    })
    try:
        with torch.no_grad():
            result = torch_callable(case.target)(*args, **kwargs)
    except (RuntimeError, AssertionError, ValueError, IndexError) as e:
        if not case.raises:
            raise
        entry.update({"outputs": [], "mutated": {},
                      "error": f"{type(e).__name__}: {str(e).splitlines()[0]}",
                      "how": call_text(case.target, case.args, case.kwargs)})
        return entry
    if case.raises:
        raise AssertionError(f"{case.name}: expected torch to refuse the call")
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    outputs = [encode_result(v, case.name, i, files) for i, v in enumerate(results)]
    mutated = {}
    for index in case.mutates:
        mutated[str(index)] = folder_file(case.name, f"mutated_{index}")
        files[mutated[str(index)]] = assetlib.npy_bytes(args[index].numpy())
    entry.update({"outputs": outputs, "mutated": mutated,
                  "how": call_text(case.target, case.args, case.kwargs)})
    return entry


# ---------------------------------------------------------------------------
# MinMaxObserver
# ---------------------------------------------------------------------------

QSCHEMES = {"per_tensor_affine": torch.per_tensor_affine,
            "per_tensor_symmetric": torch.per_tensor_symmetric}
QDTYPES = {"quint8": torch.quint8, "qint8": torch.qint8, "int8": torch.int8,
           "uint8": torch.uint8}


@dataclass
class ObserverCase:
    name: str
    dtype: str  # "quint8" | "qint8" (QConfig dtypes) | "int8" (a PT2E QuantizationSpec)
    qscheme: str  # key of QSCHEMES
    inputs: Sequence[TensorRecipe]
    quant_min: Optional[int] = None
    quant_max: Optional[int] = None
    kind: str = "MinMaxObserver"  # or "HistogramObserver"
    eps: Optional[float] = None  # None: torch.finfo(torch.float32).eps


# XNNPACKQuantizer's activation spec (get_symmetric_quantization_config): int8 -128..127.
def xnnpack_act(name, inputs):
    return ObserverCase(name, "int8", "per_tensor_affine", inputs, -128, 127,
                        kind="HistogramObserver", eps=2**-12)


OBSERVERS: List[ObserverCase] = [
    ObserverCase("minmax_quint8_affine_random", "quint8", "per_tensor_affine",
                 [randn(2, 8, 4, 4)]),
    ObserverCase("minmax_quint8_affine_3_batches", "quint8", "per_tensor_affine",
                 [randn(2, 8, 4, 4), randn(2, 8, 4, 4, scale=2.0), randn(2, 8, 4, 4, shift=1.0)]),
    ObserverCase("minmax_quint8_affine_all_zero", "quint8", "per_tensor_affine",
                 [full((2, 8), 0.0)]),
    ObserverCase("minmax_quint8_affine_constant_3", "quint8", "per_tensor_affine",
                 [full((2, 8), 3.0)]),
    ObserverCase("minmax_quint8_affine_constant_neg2", "quint8", "per_tensor_affine",
                 [full((2, 8), -2.0)]),
    ObserverCase("minmax_quint8_affine_only_negative", "quint8", "per_tensor_affine",
                 [randn(2, 8, 4, 4, scale=0.5, shift=-2.0)]),
    ObserverCase("minmax_quint8_affine_only_positive", "quint8", "per_tensor_affine",
                 [uniform(2, 8, 4, 4, low=0.5, high=3.0)]),
    ObserverCase("minmax_quint8_affine_0_255", "quint8", "per_tensor_affine",
                 [randn(2, 8, 4, 4, scale=1.5, shift=0.5)], quant_min=0, quant_max=255),
    ObserverCase("minmax_qint8_affine_random", "qint8", "per_tensor_affine",
                 [randn(2, 8, 4, 4, scale=1.5, shift=0.5)]),
    ObserverCase("minmax_qint8_symmetric_127_weight", "qint8", "per_tensor_symmetric",
                 [conv_weight(8, 3, 3, 3)], quant_min=-127, quant_max=127),
    ObserverCase("minmax_qint8_symmetric_127_only_negative", "qint8", "per_tensor_symmetric",
                 [randn(4, 8, scale=0.5, shift=-2.0)], quant_min=-127, quant_max=127),
    ObserverCase("minmax_qint8_symmetric_127_all_zero", "qint8", "per_tensor_symmetric",
                 [full((4, 8), 0.0)], quant_min=-127, quant_max=127),
    ObserverCase("minmax_qint8_symmetric_random", "qint8", "per_tensor_symmetric",
                 [randn(2, 8, 4, 4)]),
    ObserverCase("minmax_quint8_symmetric_random", "quint8", "per_tensor_symmetric",
                 [randn(2, 8, 4, 4)]),
    ObserverCase("minmax_fact_sheet_example_quint8_affine", "quint8", "per_tensor_affine",
                 [values([-1.0, 0.5, 2.0])]),
    ObserverCase("minmax_fact_sheet_example_qint8_symmetric", "qint8", "per_tensor_symmetric",
                 [values([-1.0, 0.5, 2.0])]),
    ObserverCase("minmax_int8_symmetric_xnnpack_weight_eps", "int8", "per_tensor_symmetric",
                 [conv_weight(8, 3, 3, 3)], quant_min=-127, quant_max=127, eps=2**-12),
    # HistogramObserver: one batch; a range that grows (the histogram is rebinned); only
    # positive values (after a relu); a constant first batch; outliers the search cuts off
    xnnpack_act("histogram_int8_one_batch", [randn(2, 8, 8, 8)]),
    xnnpack_act("histogram_int8_growing_range",
                [randn(2, 8, 8, 8), randn(2, 8, 8, 8, scale=2.0, shift=0.5),
                 randn(2, 8, 8, 8, scale=0.5)]),
    xnnpack_act("histogram_int8_after_relu",
                [with_zeros(uniform(2, 8, 8, 8, low=0.0, high=3.0), every=3),
                 uniform(2, 8, 8, 8, low=0.0, high=4.0)]),
    xnnpack_act("histogram_int8_constant_then_random",
                [full((2, 8), 1.5), randn(2, 8, 4, 4)]),
    xnnpack_act("histogram_int8_outliers", [randn(4, 1024, scale=0.5), values([25.0, -30.0])]),
    ObserverCase("histogram_quint8_default", "quint8", "per_tensor_affine",
                 [randn(2, 8, 8, 8, shift=1.0)], kind="HistogramObserver"),
]


def run_observer(case: ObserverCase, files: Dict[str, bytes]) -> dict:
    cls = {"MinMaxObserver": MinMaxObserver, "HistogramObserver": HistogramObserver}[case.kind]
    extra = {} if case.eps is None else {"eps": case.eps}
    observer = cls(dtype=QDTYPES[case.dtype], qscheme=QSCHEMES[case.qscheme],
                   quant_min=case.quant_min, quant_max=case.quant_max, **extra)
    inputs = []
    for i, recipe in enumerate(case.inputs):
        x = make_tensor(recipe, case.name, f"input_{i}")
        inputs.append(folder_file(case.name, f"input_{i}"))
        files[inputs[-1]] = assetlib.npy_bytes(x.numpy())
        observer(x)
    scale, zero_point = observer.calculate_qparams()
    entry = {
        "name": case.name,
        "kind": case.kind,
        "dtype": case.dtype,
        "qscheme": case.qscheme,
        "quant_min": case.quant_min,
        "quant_max": case.quant_max,
        "eps": float(observer.eps.item()),
        "inputs": inputs,
        "min_val": float(observer.min_val.item()),
        "max_val": float(observer.max_val.item()),
        "scale": float(scale.item()),
        "zero_point": int(zero_point.item()),
    }
    if case.kind == "HistogramObserver":
        entry["histogram"] = folder_file(case.name, "histogram")
        files[entry["histogram"]] = assetlib.npy_bytes(observer.histogram.numpy())
    return entry


# ---------------------------------------------------------------------------
# Model runs on the lesson archives' weights
# ---------------------------------------------------------------------------



@dataclass
class ModelRun:
    name: str
    asset: str  # repository-relative .pt2
    factory: Callable[[], torch.nn.Module]
    mode: str  # "train" | "eval"
    steps: int
    input_shape: Tuple[int, ...] = lesson_models.LESSON_INPUT_SHAPE


MODEL_RUNS: List[ModelRun] = [
    ModelRun("conv_bn_relu_train_3_steps", "assets/graphs/conv_bn_relu_train.pt2",
             lesson_models.ConvBnReLU, "train", 3),
    ModelRun("conv_bn_relu_eval_2_steps", "assets/graphs/conv_bn_relu_eval.pt2",
             lesson_models.ConvBnReLU, "eval", 2),
]


def _extras_difference(model, records) -> Optional[str]:
    """Runs a copy of the model on the archive's own sample input and compares
    with the eager output and buffers_after its extras store: proof that the
    weights were read back correctly and the mode is right."""
    manifest = json.loads(records["extra/pt2lab/manifest.json"])
    (x,), _ = torch.load(io.BytesIO(records["data/sample_inputs/model.pt"]))
    twin = copy.deepcopy(model)
    with torch.no_grad():
        out = twin(x)
    expected = [(manifest["outputs"][0]["file"], out)]
    buffers = dict(twin.named_buffers())
    expected += [(b["file"], buffers[b["target"]]) for b in manifest["buffers_after"]]
    for file, value in expected:
        diff = assetlib.npy_difference(base64.b64decode(records[file]),
                                       assetlib.npy_bytes(value.numpy()),
                                       assetlib.OUTPUT_TOLERANCE)
        if diff:
            return f"{file}: {diff}"
    return None


def run_model(run: ModelRun, files: Dict[str, bytes]) -> dict:
    _, records = assetlib.zip_records(os.path.join(assetlib.REPO_ROOT, run.asset))
    model = run.factory()
    # strict: every parameter and buffer comes from the archive, none from __init__.
    model.load_state_dict(lesson_models.archive_state(records), strict=True)
    model.train(run.mode == "train")
    diff = _extras_difference(model, records)
    if diff:
        raise AssertionError(f"{run.asset}: model with the archive's weights disagrees "
                             f"with its extras: {diff}")
    out_steps = []
    for step in range(run.steps):
        folder = f"{run.name}/step_{step}"
        x = make_tensor(randn(*run.input_shape), run.name, f"step_{step}", "input")
        with torch.no_grad():
            y = model(x)
        entry = {"input": folder_file(folder, "input"), "output": folder_file(folder, "output"),
                 "buffers": {}}
        files[entry["input"]] = assetlib.npy_bytes(x.numpy())
        files[entry["output"]] = assetlib.npy_bytes(y.numpy())
        for fqn, buf in model.named_buffers():
            entry["buffers"][fqn] = folder_file(folder, fqn)
            files[entry["buffers"][fqn]] = assetlib.npy_bytes(buf.numpy())
        out_steps.append(entry)
    return {"name": run.name, "asset": run.asset, "mode": run.mode, "steps": out_steps}


# ---------------------------------------------------------------------------
# Generate / check
# ---------------------------------------------------------------------------


def schemas() -> Dict[str, str]:
    """torch's own schema string of every op the cases call, by target (sorted)."""
    targets = {c.target for c in CASES} | {s.target for c in CASES for s in c.setup}
    return {full_target(t): str(torch_callable(t)._schema)
            for t in sorted(targets) if not t.startswith("operator.")}


def build() -> Tuple[dict, Dict[str, bytes]]:
    """Everything in memory: (cases.json object, {relative .npy path: bytes})."""
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    torch.set_num_threads(1)  # reductions split work by thread count
    names = [c.name for c in CASES] + [o.name for o in OBSERVERS] + [r.name for r in MODEL_RUNS]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"entry names used twice: {duplicates}")
    files: Dict[str, bytes] = {}
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "torch_version": str(torch.__version__),
        "cases": [run_case(c, files) for c in CASES],
        "schemas": schemas(),
        "observers": [run_observer(o, files) for o in OBSERVERS],
        "model_runs": [run_model(r, files) for r in MODEL_RUNS],
    }
    return doc, files


def _owned_npy_files(out_dir: str) -> List[str]:
    """.npy files under a folder this script wrote before (it has our cases.json)."""
    try:
        with open(os.path.join(out_dir, CASES_FILE), encoding="utf-8") as f:
            if json.load(f).get("format") != FORMAT:
                return []
    except (OSError, ValueError):
        return []
    found = []
    for folder, _, names in os.walk(out_dir):
        found += [os.path.relpath(os.path.join(folder, n), out_dir).replace(os.sep, "/")
                  for n in names if n.endswith(".npy")]
    return found


def generate(out_dir: str, quiet: bool = False) -> dict:
    doc, files = build()
    stale = set(_owned_npy_files(out_dir)) - set(files)
    for rel_path, data in sorted(files.items()):
        assetlib.write_bytes_atomic(os.path.join(out_dir, rel_path), data)
    assetlib.write_bytes_atomic(os.path.join(out_dir, CASES_FILE),
                                assetlib.json_text(doc, inline_depth=3).encode("utf-8"))
    for rel_path in sorted(stale):
        os.remove(os.path.join(out_dir, rel_path))
        folder = os.path.dirname(os.path.join(out_dir, rel_path))
        if not os.listdir(folder):
            os.rmdir(folder)
    if not quiet:
        where = assetlib.rel(out_dir) if out_dir.startswith(assetlib.REPO_ROOT) else out_dir
        print(f"wrote    {where}/{CASES_FILE}: {len(doc['cases'])} cases, "
              f"{len(doc['observers'])} observers, {len(doc['model_runs'])} model runs, "
              f"{len(files)} .npy files" + (f"; removed {len(stale)} stale" if stale else ""))
    return doc


def entry_files(kind: str, entry: dict) -> Tuple[List[str], List[str]]:
    """(files compared byte for byte, files compared as outputs) of one entry."""
    if kind == "cases":
        tensor_outputs = [o for o in entry["outputs"] if isinstance(o, str)]
        return list(entry["tensors"].values()), tensor_outputs + list(entry["mutated"].values())
    if kind == "observers":
        return list(entry["inputs"]) + ([entry["histogram"]] if "histogram" in entry else []), []
    exact, outputs = [], []
    for step in entry["steps"]:
        exact.append(step["input"])
        outputs += [step["output"]] + list(step["buffers"].values())
    return exact, outputs


def _file_difference(committed_dir, fresh_dir, rel_path, exact):
    committed = os.path.join(committed_dir, rel_path)
    if not os.path.exists(committed):
        return f"{rel_path}: not committed"
    with open(committed, "rb") as f:
        want = f.read()
    with open(os.path.join(fresh_dir, rel_path), "rb") as f:
        got = f.read()
    if exact:
        return None if want == got else f"{rel_path}: bytes differ"
    diff = assetlib.npy_difference(want, got, assetlib.OUTPUT_TOLERANCE)
    return f"{rel_path}: {diff}" if diff else None


def _outline(doc: dict) -> dict:
    """cases.json with each entry list reduced to its names (the entries get
    their own --check lines)."""
    return {k: [e.get("name") for e in v] if k in KINDS and isinstance(v, list) else v
            for k, v in doc.items()}


def _entry_difference(kind, committed_entry, fresh_entry, golden_dir, fresh_dir):
    """The entry's JSON exactly, then its files. A message or None."""
    if committed_entry is None:
        return "not in the committed cases.json"
    diff = assetlib.json_difference(committed_entry, fresh_entry)
    if diff:
        return diff
    exact, outputs = entry_files(kind, fresh_entry)
    for rel_path, is_exact in [(p, True) for p in exact] + [(p, False) for p in outputs]:
        diff = _file_difference(golden_dir, fresh_dir, rel_path, is_exact)
        if diff:
            return diff
    return None


def check(golden_dir: str) -> int:
    """Regenerates into a temp folder and compares with golden_dir, one line per
    entry. Returns 0 or 1."""
    json_path = os.path.join(golden_dir, CASES_FILE)
    if not os.path.exists(json_path):
        print(assetlib.report_line("MISSING", CASES_FILE, "not committed"))
        return 1
    with open(json_path, encoding="utf-8") as f:
        committed = json.load(f)
    committed_entries = {(kind, e.get("name")): e for kind in KINDS
                         for e in committed.get(kind, [])}
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(tmp, quiet=True)
        results = [(CASES_FILE, assetlib.json_difference(_outline(committed), _outline(fresh)))]
        expected_files = set()
        for kind in KINDS:
            for entry in fresh[kind]:
                old = committed_entries.get((kind, entry["name"]))
                results.append((f"{kind}/{entry['name']}",
                                _entry_difference(kind, old, entry, golden_dir, tmp)))
                exact, outputs = entry_files(kind, entry)
                expected_files.update(exact + outputs)
        stale = sorted(set(_owned_npy_files(golden_dir)) - expected_files)
        if stale:
            more = f" and {len(stale) - 5} more" if len(stale) > 5 else ""
            results.append(("stale files", ", ".join(stale[:5]) + more))
    for label, diff in results:
        print(assetlib.report_line("DIFF" if diff else "ok", label, diff))
        failures += diff is not None
    return assetlib.finish_check(failures, "difference(s)", SCRIPT)


def main(argv=None):
    return assetlib.generator_main(__doc__, GOLDEN_DIR, generate, check,
                                   check_help="regenerate into a temp folder and compare with the golden files",
                                   out_help="write DIR/cases.json and DIR/<entry>/*.npy (with --check: the folder to compare against)", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
