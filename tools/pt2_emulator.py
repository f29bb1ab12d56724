"""An emulation of torch 2.11's `torch.export.export` + `torch.export.save` for
the lesson models, running on torch 1.13 (which has no torch.export).

It is not a general exporter. It walks the real `torch.fx.symbolic_trace` graph
of a model, maps each leaf module / function / method it knows to the
training-IR ATen op that torch.export records (facts: reference sheet sections
1-3, 7, 8), runs those ATen ops with torch 1.13 to get every value's real shape,
dtype, strides and requires_grad, and serializes the result the way torch 2.11's
serializer does (schema 8.15). Anything it does not know raises
UnsupportedForEmulation naming the node.

Facts marked [I] in the reference sheet are predictions, and so is everything
here that depends on them (metadata strings above all). When torch >= 2.8 is
available, make_assets.py uses the real exporter instead.
"""

import builtins
import inspect
import json
import keyword
import operator
import os
import re
import traceback
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from assetlib import REPO_ROOT

EMULATED_TORCH = "2.11.0"
SCHEMA_VERSION = (8, 15)
# torch._C._get_max_operator_version() in torch 1.13; [I] unchanged in 2.11.
ATEN_OPSET_VERSION = 10
# ExportedProgram.verifiers of a default (training IR) export: TrainingIRVerifier.
VERIFIERS = ["TRAINING"]
TREESPEC_PROTOCOL = 1


class UnsupportedForEmulation(RuntimeError):
    """The model uses something the emulation has no rule for."""


# ---------------------------------------------------------------------------
# ATen schemas (torch 2.x text, from native_functions.yaml)
# ---------------------------------------------------------------------------

ATEN_SCHEMAS = [
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
    "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    "relu(Tensor self) -> Tensor",
    "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
    "adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
]

_NO_DEFAULT = object()


@dataclass
class SchemaArg:
    name: str
    type: str
    default: Any  # _NO_DEFAULT when the schema gives none
    kwarg_only: bool


@dataclass
class OpSchema:
    text: str
    packet: str  # "conv2d"
    overload: str  # "default", "Tensor", "dim", ...
    args: List[SchemaArg]

    @property
    def target(self) -> str:
        """The node target string the serializer writes."""
        return f"torch.ops.aten.{self.packet}.{self.overload}"

    def aten_op(self):
        return getattr(getattr(torch.ops.aten, self.packet), self.overload)


def _fixed_list_size(arg_type: str) -> Optional[int]:
    m = re.fullmatch(r"(?:int|SymInt)\[(\d+)\]\??", arg_type)
    return int(m.group(1)) if m else None


def _parse_default(text: str, arg_type: str):
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("["):
        inner = text[1:-1].strip()
        return [int(v) for v in inner.split(",")] if inner else []
    value = float(text) if any(c in text for c in ".e") else int(text)
    size = _fixed_list_size(arg_type)
    # `int[2] stride=1` means [1, 1], as torch's schema parser expands it.
    return [value] * size if size is not None else value


def parse_schema(text: str) -> OpSchema:
    m = re.fullmatch(r"([\w.]+)\((.*)\) -> (.+)", text)
    if not m:
        raise ValueError(f"bad schema: {text}")
    name, arg_text = m.group(1), m.group(2)
    packet, _, overload = name.partition(".")
    args, kwarg_only = [], False
    for piece in arg_text.split(", "):
        if piece == "*":
            kwarg_only = True
            continue
        arg_type, _, rest = piece.rpartition(" ")
        arg_name, eq, default = rest.partition("=")
        args.append(SchemaArg(arg_name, arg_type,
                              _parse_default(default, arg_type) if eq else _NO_DEFAULT,
                              kwarg_only))
    return OpSchema(text, packet, overload or "default", args)


SCHEMAS: Dict[str, OpSchema] = {}
for _text in ATEN_SCHEMAS:
    _schema = parse_schema(_text)
    SCHEMAS[f"{_schema.packet}.{_schema.overload}"] = _schema


def check_schemas_against_torch() -> None:
    """Our schema strings must be torch's own (modulo SymInt, which 1.13 spells int)."""
    for schema in SCHEMAS.values():
        ours = re.sub(r"\bSymInt\b", "int", schema.text)
        theirs = str(schema.aten_op()._schema).replace("aten::", "", 1)
        theirs = re.sub(r"\bSymInt\b", "int", theirs)
        if ours != theirs:
            raise AssertionError(f"schema table entry differs from torch:\n  ours:  {ours}\n"
                                 f"  torch: {theirs}")


# ---------------------------------------------------------------------------
# Values flowing through the emulated graph
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """A tensor value of the exported graph, by name."""

    name: str


def _normalize(value, arg_type: str):
    """Python-level value -> what the ATen call receives (tuples become lists,
    a bare int for `int[2]` becomes [v, v])."""
    if isinstance(value, tuple):
        value = list(value)
    size = _fixed_list_size(arg_type)
    if size is not None and isinstance(value, int) and not isinstance(value, bool):
        value = [value] * size
    return value


def bind_and_trim(schema: OpSchema, values: Dict[str, Any]):
    """Splits full argument values into what the exported node keeps.

    Mirrors how torch hands a dispatcher call back to Python when tracing:
    trailing positional arguments equal to their schema default are dropped
    (a `None` bias survives when a later argument does), and keyword-only
    arguments appear only when they differ from their default.
    """
    unknown = set(values) - {a.name for a in schema.args}
    if unknown:
        raise UnsupportedForEmulation(f"{schema.packet}: unknown arguments {sorted(unknown)}")
    full = []
    for arg in schema.args:
        if arg.name in values:
            full.append(_normalize(values[arg.name], arg.type))
        elif arg.default is not _NO_DEFAULT:
            full.append(arg.default)
        else:
            raise UnsupportedForEmulation(f"{schema.packet}: missing argument {arg.name}")

    def is_default(i):
        default = schema.args[i].default
        return default is not _NO_DEFAULT and not isinstance(full[i], Ref) and full[i] == default

    positional = [i for i, a in enumerate(schema.args) if not a.kwarg_only]
    keep = len(positional)
    while keep > 0 and is_default(positional[keep - 1]):
        keep -= 1
    args = [(schema.args[i].name, full[i]) for i in positional[:keep]]
    kwargs = [(a.name, full[i]) for i, a in enumerate(schema.args)
              if a.kwarg_only and not is_default(i)]
    return args, kwargs


# ---------------------------------------------------------------------------
# Tracing with provenance
# ---------------------------------------------------------------------------

_MODELS_FILE = os.path.join(REPO_ROOT, "tools", "lesson_models.py")


@dataclass
class Origin:
    """Where an fx node came from: enclosing module paths and user source lines."""

    module_paths: Tuple[str, ...]
    frames: Tuple[Tuple[str, int, str, str], ...]  # (file, line, function, code)


class _ProvenanceTracer(torch.fx.Tracer):
    """torch.fx.Tracer that remembers the module stack and the model's own
    source frames for every node it creates (torch.export keeps both as
    nn_module_stack and stack_trace)."""

    def __init__(self):
        super().__init__()
        self._paths: List[str] = []
        self.origins: Dict[torch.fx.Node, Origin] = {}

    def call_module(self, m, forward, args, kwargs):
        self._paths.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self._paths.pop()

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        frames = tuple(
            ("tools/lesson_models.py", f.lineno, f.name, f.line)
            for f in traceback.extract_stack()
            if os.path.abspath(f.filename) == _MODELS_FILE
        )
        self.origins[node] = Origin(tuple(self._paths), frames)
        return node


# ---------------------------------------------------------------------------
# Names (torch.fx's _Namespace rules)
# ---------------------------------------------------------------------------

_FX_CUSTOM_BUILTINS = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"}


class Namespace:
    """Unique node names the way torch.fx makes them: `relu`, `relu_1`, ..."""

    _suffix = re.compile(r"(.*)_(\d+)$")

    def __init__(self):
        self._used = set()
        self._base_count: Dict[str, int] = {}

    @staticmethod
    def _illegal(name):
        return name in keyword.kwlist or name in builtins.__dict__ or name in _FX_CUSTOM_BUILTINS

    def create(self, candidate: str) -> str:
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        m = self._suffix.match(candidate)
        base, num = (candidate, None) if m is None else (m.group(1), int(m.group(2)))
        name = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count.get(base, 0)
        while name in self._used or self._illegal(name):
            num += 1
            name = f"{base}_{num}"
        self._used.add(name)
        self._base_count[base] = num
        return name


# ---------------------------------------------------------------------------
# The emulated program
# ---------------------------------------------------------------------------


@dataclass
class ExportNode:
    schema: OpSchema
    name: str
    args: List[Tuple[str, Any]]
    kwargs: List[Tuple[str, Any]]
    metadata: Dict[str, str]


@dataclass
class InputSpec:
    kind: str  # "parameter" | "buffer" | "user_input"
    name: str  # placeholder name
    target: Optional[str]  # FQN for parameters and buffers


@dataclass
class EmulatedProgram:
    """What torch.export would hold for one model: signature, nodes, values."""

    model: nn.Module
    input_specs: List[InputSpec] = field(default_factory=list)
    nodes: List[ExportNode] = field(default_factory=list)
    outputs: List[Ref] = field(default_factory=list)
    values: Dict[str, torch.Tensor] = field(default_factory=dict)
    forward_arg_names: List[str] = field(default_factory=list)
    state: Dict[str, torch.Tensor] = field(default_factory=dict)  # fqn -> tensor (signature order)


def _type_string(obj_or_cls) -> str:
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    return f"{cls.__module__}.{cls.__qualname__}"


def _operator_string(target) -> str:
    """serialize_operator: module path + name for callables, strings as they are."""
    if isinstance(target, str):
        return target
    return f"{target.__module__}.{target.__name__}"


class _Emitter:
    """Builds the exported graph node by node while running it on real tensors."""

    def __init__(self, program: EmulatedProgram, origins: Dict[torch.fx.Node, Origin]):
        self.program = program
        self.origins = origins
        self.names = Namespace()
        self.torch_fn_counts: Dict[Any, int] = {}
        self.state_refs: Dict[str, Ref] = {}  # parameter/buffer FQN -> placeholder

    def param(self, module: nn.Module, attr: str) -> Optional[Ref]:
        """The placeholder of `module.attr` (a parameter or buffer), None if unset."""
        if getattr(module, attr) is None:
            return None
        for path, candidate in self.program.model.named_modules():
            if candidate is module:
                return self.state_refs[f"{path}.{attr}" if path else attr]
        raise UnsupportedForEmulation(f"{_type_string(module)} is not part of the model")

    def _runtime(self, value):
        if isinstance(value, Ref):
            return self.program.values[value.name]
        if isinstance(value, list):
            return [self._runtime(v) for v in value]
        return value

    def emit(self, op_key: str, values: Dict[str, Any], fx_node: torch.fx.Node, torch_fn) -> Ref:
        schema = SCHEMAS[op_key]
        args, kwargs = bind_and_trim(schema, values)
        result = schema.aten_op()(*[self._runtime(v) for _, v in args],
                                  **{k: self._runtime(v) for k, v in kwargs})
        name = self.names.create(schema.packet)
        # In-place ops return their mutated input; the graph value is its own.
        self.program.values[name] = result if not schema.packet.endswith("_") else result.clone()
        self.program.nodes.append(
            ExportNode(schema, name, args, kwargs, self._metadata(fx_node, torch_fn)))
        return Ref(name)

    def _metadata(self, fx_node: torch.fx.Node, torch_fn) -> Dict[str, str]:
        """Node metadata strings as serialize_metadata writes them. [I] values."""
        origin = self.origins[fx_node]
        meta = {}
        if origin.frames:
            meta["stack_trace"] = "".join(
                f'  File "{f}", line {line}, in {func}\n    {code}\n'
                for f, line, func, code in origin.frames)
        stack = [("L__self__", "", _type_string(self.program.model))]
        for path in origin.module_paths:
            module = self.program.model.get_submodule(path)
            stack.append(("L__self___" + path.replace(".", "_"), path, _type_string(module)))
        meta["nn_module_stack"] = ";".join(f"{k},{p},{t}" for k, p, t in stack)
        if fx_node.op == "call_module":
            source = type(self.program.model.get_submodule(fx_node.target))
            source_str = f"{source.__module__}.{source.__name__}"
        else:
            source_str = _operator_string(fx_node.target)
        meta["source_fn_stack"] = f"{fx_node.name},{source_str}"
        count = self.torch_fn_counts.get(torch_fn, 0) + 1
        self.torch_fn_counts[torch_fn] = count
        fn_name = torch_fn.__name__
        meta["torch_fn"] = f"{fn_name}_{count};{type(torch_fn).__name__}.{fn_name}"
        return meta


# -- lowering rules: one per leaf module type, function and method ----------


def _bind_python_args(fx_node, names: List[str], args, kwargs) -> Dict[str, Any]:
    bound = dict(zip(names, args))
    if len(args) > len(names):
        raise UnsupportedForEmulation(f"{fx_node.name}: too many arguments")
    for key, value in kwargs.items():
        if key in bound:
            raise UnsupportedForEmulation(f"{fx_node.name}: argument {key} given twice")
        bound[key] = value
    return bound


def _lower_conv2d_module(em, node, m: nn.Conv2d, inp):
    if m.padding_mode != "zeros" or isinstance(m.padding, str):
        raise UnsupportedForEmulation(f"{node.name}: only zero, numeric padding is emulated")
    return em.emit("conv2d.default", {
        "input": inp, "weight": em.param(m, "weight"), "bias": em.param(m, "bias"),
        "stride": m.stride, "padding": m.padding, "dilation": m.dilation, "groups": m.groups,
    }, node, torch.conv2d)


def _lower_batch_norm_module(em, node, m: nn.BatchNorm2d, inp):
    if m.training and m.track_running_stats and m.num_batches_tracked is not None:
        if m.momentum is None:
            raise UnsupportedForEmulation(f"{node.name}: momentum=None is not emulated")
        # BatchNorm.forward counts the batch before it normalises (fact sheet 2).
        em.emit("add_.Tensor", {"self": em.param(m, "num_batches_tracked"), "other": 1},
                node, torch.Tensor.add_)
    use_running = not m.training or m.track_running_stats
    return em.emit("batch_norm.default", {
        "input": inp, "weight": em.param(m, "weight"), "bias": em.param(m, "bias"),
        "running_mean": em.param(m, "running_mean") if use_running else None,
        "running_var": em.param(m, "running_var") if use_running else None,
        "training": m.training or (m.running_mean is None and m.running_var is None),
        "momentum": 0.0 if m.momentum is None else m.momentum,
        "eps": m.eps,
        # export traces with cuDNN disabled (PR #148140); [I] for 2.11.
        "cudnn_enabled": False,
    }, node, F.batch_norm)


def _lower_relu_module(em, node, m: nn.ReLU, inp):
    if m.inplace:
        raise UnsupportedForEmulation(f"{node.name}: inplace ReLU is not emulated")
    return em.emit("relu.default", {"self": inp}, node, F.relu)


def _lower_linear_module(em, node, m: nn.Linear, inp):
    return em.emit("linear.default", {
        "input": inp, "weight": em.param(m, "weight"), "bias": em.param(m, "bias"),
    }, node, F.linear)


def _lower_max_pool2d_module(em, node, m: nn.MaxPool2d, inp):
    if m.return_indices:
        raise UnsupportedForEmulation(f"{node.name}: return_indices is not emulated")
    return em.emit("max_pool2d.default", {
        "self": inp, "kernel_size": m.kernel_size, "stride": m.stride, "padding": m.padding,
        "dilation": m.dilation, "ceil_mode": m.ceil_mode,
    }, node, F.max_pool2d)


def _lower_adaptive_avg_pool2d_module(em, node, m: nn.AdaptiveAvgPool2d, inp):
    size = m.output_size if isinstance(m.output_size, tuple) else (m.output_size,) * 2
    in_shape = em.program.values[inp.name].shape
    # F.adaptive_avg_pool2d fills None entries from the input (_list_with_default).
    size = [in_shape[-2 + i] if s is None else s for i, s in enumerate(size)]
    return em.emit("adaptive_avg_pool2d.default", {"self": inp, "output_size": size},
                   node, F.adaptive_avg_pool2d)


MODULE_RULES = {
    nn.Conv2d: _lower_conv2d_module,
    nn.BatchNorm2d: _lower_batch_norm_module,
    nn.ReLU: _lower_relu_module,
    nn.Linear: _lower_linear_module,
    nn.MaxPool2d: _lower_max_pool2d_module,
    nn.AdaptiveAvgPool2d: _lower_adaptive_avg_pool2d_module,
}


def _lower_conv2d_function(em, node, args, kwargs):
    names = ["input", "weight", "bias", "stride", "padding", "dilation", "groups"]
    bound = _bind_python_args(node, names, args, kwargs)
    if isinstance(bound.get("padding"), str):
        raise UnsupportedForEmulation(f"{node.name}: string padding is not emulated")
    return em.emit("conv2d.default", bound, node, torch.conv2d)


def _lower_relu_function(em, node, args, kwargs):
    bound = _bind_python_args(node, ["input", "inplace"], args, kwargs)
    if bound.get("inplace", False):
        raise UnsupportedForEmulation(f"{node.name}: inplace relu is not emulated")
    return em.emit("relu.default", {"self": bound["input"]}, node, F.relu)


def _lower_linear_function(em, node, args, kwargs):
    bound = _bind_python_args(node, ["input", "weight", "bias"], args, kwargs)
    return em.emit("linear.default", bound, node, F.linear)


def _lower_flatten_function(em, node, args, kwargs):
    bound = _bind_python_args(node, ["input", "start_dim", "end_dim"], args, kwargs)
    bound["self"] = bound.pop("input")
    return em.emit("flatten.using_ints", bound, node, torch.flatten)


def _lower_add_operator(em, node, args, kwargs):
    if kwargs or len(args) != 2 or not all(isinstance(a, Ref) for a in args):
        raise UnsupportedForEmulation(f"{node.name}: only tensor + tensor is emulated")
    # `a + b` reaches torch as Tensor.add (fact sheet 8: "method_descriptor.add").
    return em.emit("add.Tensor", {"self": args[0], "other": args[1]}, node, torch.Tensor.add)


FUNCTION_RULES = {
    torch.conv2d: _lower_conv2d_function,
    F.relu: _lower_relu_function,
    F.linear: _lower_linear_function,
    torch.flatten: _lower_flatten_function,
    operator.add: _lower_add_operator,
}


def _lower_mean_method(em, node, args, kwargs):
    bound = _bind_python_args(node, ["self", "dim", "keepdim"], args, kwargs)
    if "dim" not in bound:
        raise UnsupportedForEmulation(f"{node.name}: mean without dim is not emulated")
    return em.emit("mean.dim", bound, node, torch.Tensor.mean)


METHOD_RULES = {
    "mean": _lower_mean_method,
}


def _lower_node(em: _Emitter, node: torch.fx.Node, env: Dict[torch.fx.Node, Any]):
    def value_of(a):
        return torch.fx.node.map_arg(a, lambda n: env[n])

    args, kwargs = value_of(node.args), value_of(node.kwargs)
    if node.op == "get_attr":
        # Lifted: the parameter's placeholder replaces the get_attr node.
        if node.target not in em.state_refs:
            raise UnsupportedForEmulation(f"{node.name}: get_attr of {node.target} is not a "
                                          "parameter or buffer")
        return em.state_refs[node.target]
    if node.op == "call_module":
        module = em.program.model.get_submodule(node.target)
        rule = MODULE_RULES.get(type(module))
        if rule is None:
            raise UnsupportedForEmulation(f"{node.name}: no rule for module {_type_string(module)}")
        if len(args) != 1 or kwargs:
            raise UnsupportedForEmulation(f"{node.name}: modules take one positional input here")
        return rule(em, node, module, args[0])
    if node.op == "call_function":
        rule = FUNCTION_RULES.get(node.target)
        if rule is None:
            raise UnsupportedForEmulation(f"{node.name}: no rule for function {node.target}")
        return rule(em, node, list(args), dict(kwargs))
    if node.op == "call_method":
        rule = METHOD_RULES.get(node.target)
        if rule is None:
            raise UnsupportedForEmulation(f"{node.name}: no rule for method .{node.target}()")
        return rule(em, node, list(args), dict(kwargs))
    raise UnsupportedForEmulation(f"{node.name}: unexpected op {node.op}")


def emulate_export(model: nn.Module, example_inputs: Tuple[torch.Tensor, ...]) -> EmulatedProgram:
    """Emulates torch.export.export(model, example_inputs) for the lesson models.

    The model is not modified: parameters are read, buffers are cloned before
    the graph runs (train-mode batch_norm and add_ mutate them).
    """
    tracer = _ProvenanceTracer()
    graph = tracer.trace(model)
    program = EmulatedProgram(model=model)
    em = _Emitter(program, tracer.origins)

    # Placeholders: parameters, then buffers, then user inputs (fact sheet 1.1).
    for kind, prefix, items in (("parameter", "p_", model.named_parameters()),
                                ("buffer", "b_", model.named_buffers())):
        for fqn, tensor in items:
            name = em.names.create(prefix + fqn.replace(".", "_"))
            program.input_specs.append(InputSpec(kind, name, fqn))
            program.state[fqn] = tensor
            value = tensor.detach().clone() if kind == "buffer" else tensor
            program.values[name] = value
            em.state_refs[fqn] = Ref(name)

    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    program.forward_arg_names = list(inspect.signature(model.forward).parameters)
    if len(placeholders) != len(example_inputs):
        raise UnsupportedForEmulation("only positional tensor inputs are emulated")
    env: Dict[torch.fx.Node, Any] = {}
    for arg_name, node, tensor in zip(program.forward_arg_names, placeholders, example_inputs):
        name = em.names.create(arg_name)
        program.input_specs.append(InputSpec("user_input", name, None))
        program.values[name] = tensor
        env[node] = Ref(name)

    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            result = node.args[0]
            if not isinstance(result, torch.fx.Node):
                raise UnsupportedForEmulation("only a single tensor output is emulated")
            program.outputs = [env[result]]
            break
        env[node] = _lower_node(em, node, env)
    return program


# ---------------------------------------------------------------------------
# Serialization (torch._export.serde.serialize, schema 8.15)
# ---------------------------------------------------------------------------

_SCALAR_TYPE = {
    torch.uint8: 1, torch.int8: 2, torch.int16: 3, torch.int32: 4, torch.int64: 5,
    torch.float16: 6, torch.float32: 7, torch.float64: 8, torch.bool: 12, torch.bfloat16: 13,
}
_LAYOUT_STRIDED = 7


def tensor_meta(t: torch.Tensor) -> dict:
    """serialize_tensor_meta(t) as _dataclass_to_dict writes it (all fields)."""
    return {
        "dtype": _SCALAR_TYPE[t.dtype],
        "sizes": [{"as_int": int(s)} for s in t.shape],
        "requires_grad": bool(t.requires_grad),
        "device": {"type": t.device.type, "index": t.device.index},
        "strides": [{"as_int": int(s)} for s in t.stride()],
        "storage_offset": {"as_int": int(t.storage_offset())},
        "layout": _LAYOUT_STRIDED,
    }


def serialize_argument(value) -> dict:
    if isinstance(value, Ref):
        return {"as_tensor": {"name": value.name}}
    if value is None:
        return {"as_none": True}
    if isinstance(value, bool):
        return {"as_bool": value}
    if isinstance(value, int):
        return {"as_int": value}
    if isinstance(value, float):
        return {"as_float": value}
    if isinstance(value, list):
        for kind, py_type in (("as_bools", bool), ("as_ints", int), ("as_floats", float)):
            if all(type(v) is py_type for v in value):
                return {kind: list(value)}
    raise UnsupportedForEmulation(f"cannot serialize argument {value!r}")


def _treespec(value) -> dict:
    """torch.utils._pytree's _TreeSpecSchema for a value, as a dict."""
    if isinstance(value, tuple):
        return {"type": "builtins.tuple", "context": "null",
                "children_spec": [_treespec(v) for v in value]}
    if isinstance(value, list):
        return {"type": "builtins.list", "context": "null",
                "children_spec": [_treespec(v) for v in value]}
    if isinstance(value, dict):
        return {"type": "builtins.dict", "context": json.dumps(list(value)),
                "children_spec": [_treespec(v) for v in value.values()]}
    return {"type": None, "context": None, "children_spec": []}


def treespec_dumps(value) -> str:
    """pytree.treespec_dumps(tree_structure(value), protocol=1)."""
    return json.dumps([TREESPEC_PROTOCOL, _treespec(value)])


def _node_json(node: ExportNode) -> dict:
    inputs = [{"name": n, "arg": serialize_argument(v), "kind": 1} for n, v in node.args]
    inputs += [{"name": n, "arg": serialize_argument(v), "kind": 2} for n, v in node.kwargs]
    return {
        "target": node.schema.target,
        "inputs": inputs,
        "outputs": [{"as_tensor": {"name": node.name}}],
        "metadata": node.metadata,
        "is_hop_single_tensor_return": None,
    }


def _input_spec_json(spec: InputSpec) -> dict:
    if spec.kind == "parameter":
        return {"parameter": {"arg": {"name": spec.name}, "parameter_name": spec.target}}
    if spec.kind == "buffer":
        return {"buffer": {"arg": {"name": spec.name}, "buffer_name": spec.target,
                           "persistent": True}}
    return {"user_input": {"arg": {"as_tensor": {"name": spec.name}}}}


def _module_call_graph(program: EmulatedProgram, example_inputs) -> list:
    out_value = object()  # a single tensor output is a pytree leaf
    root = {
        "fqn": "",
        "signature": {
            "inputs": [],
            "outputs": [],
            "in_spec": treespec_dumps((tuple(example_inputs), {})),
            "out_spec": treespec_dumps(out_value),
            "forward_arg_names": program.forward_arg_names,
        },
    }
    entries = [root]
    for fqn, _ in program.model.named_modules(remove_duplicate=False):
        if fqn:
            entries.append({"fqn": fqn, "signature": None})
    return entries


def exported_program_json(program: EmulatedProgram, example_inputs, torch_version: str) -> dict:
    """The serialized ExportedProgram (models/model.json) as a dict."""
    placeholders = [s.name for s in program.input_specs]
    tensor_values = {name: tensor_meta(program.values[name]) for name in placeholders}
    for node in program.nodes:
        tensor_values[node.name] = tensor_meta(program.values[node.name])
    graph = {
        "inputs": [{"as_tensor": {"name": name}} for name in placeholders],
        "outputs": [{"as_tensor": {"name": ref.name}} for ref in program.outputs],
        "nodes": [_node_json(n) for n in program.nodes],
        "tensor_values": tensor_values,
        "sym_int_values": {},
        "sym_bool_values": {},
        "is_single_tensor_return": False,
        "custom_obj_values": {},
        "sym_float_values": {},
    }
    graph_module = {
        "graph": graph,
        "signature": {
            "input_specs": [_input_spec_json(s) for s in program.input_specs],
            "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": r.name}}}}
                             for r in program.outputs],
        },
        "module_call_graph": _module_call_graph(program, example_inputs),
        "metadata": {},
        "treespec_namedtuple_fields": {},
    }
    return {
        "graph_module": graph_module,
        "opset_version": {"aten": ATEN_OPSET_VERSION},
        "range_constraints": {},
        "schema_version": {"major": SCHEMA_VERSION[0], "minor": SCHEMA_VERSION[1]},
        "verifiers": VERIFIERS,
        "torch_version": torch_version,
        "guards_code": [],
    }


def model_json_bytes(program: EmulatedProgram, example_inputs, torch_version: str) -> bytes:
    """json.dumps exactly as serialize._to_json_bytes does (default separators)."""
    obj = exported_program_json(program, example_inputs, torch_version)
    return json.dumps(obj, allow_nan=False).encode("utf-8")


def raw_tensor_bytes(t: torch.Tensor) -> bytes:
    """The raw little-endian storage bytes torch.export.save writes per weight."""
    return t.detach().contiguous().cpu().numpy().tobytes()


def weight_records(program: EmulatedProgram) -> Tuple[List[Tuple[str, bytes]], bytes]:
    """data/weights/weight_N records (signature order) and the weights config."""
    records, config = [], {}
    for i, (fqn, tensor) in enumerate(program.state.items()):
        path_name = f"weight_{i}"
        records.append((f"data/weights/{path_name}", raw_tensor_bytes(tensor)))
        config[fqn] = {
            "path_name": path_name,
            "is_param": isinstance(tensor, nn.Parameter),
            "use_pickle": False,
            "tensor_meta": tensor_meta(tensor),
        }
    return records, json.dumps({"config": config}).encode("utf-8")


def sample_inputs_bytes(example_inputs) -> bytes:
    """data/sample_inputs/model.pt: torch.save((args, kwargs)), pickle protocol 2.

    Written by torch 1.13's torch.save, so the inner zip is 1.13's flavour."""
    import io

    buf = io.BytesIO()
    torch.save((tuple(example_inputs), {}), buf, pickle_protocol=2)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# The archive (torch.export.pt2_archive._package.package_pt2's record order)
# ---------------------------------------------------------------------------


def _hash_combine(seed: int, value: int) -> int:
    """c10::hash_combine on uint64."""
    mask = (1 << 64) - 1
    return (seed ^ ((value + 0x9E3779B9 + ((seed << 6) & mask) + (seed >> 2)) & mask)) & mask


def _fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & ((1 << 64) - 1)
    return h


def serialization_id(records: List[Tuple[str, bytes]]) -> bytes:
    """A `.data/serialization_id` derived from the content: 20 digits of a
    combined record-name hash + 20 digits of a combined CRC-32 of the data,
    the shape torch's PyTorchStreamWriter writes ([I]: torch hashes names with
    std::hash, we use FNV-1a, so the digits differ from what torch would write)."""
    names_hash, crc_hash = 0, 0
    for name in sorted(name for name, _ in records):
        names_hash = _hash_combine(names_hash, _fnv1a64(name))
    for _, data in records:
        crc_hash = _hash_combine(crc_hash, zlib.crc32(data))
    return f"{names_hash:020d}{crc_hash:020d}".encode("ascii")


def package_records(weights: List[Tuple[str, bytes]], weights_config: bytes, model_json: bytes,
                    sample_inputs: bytes, extra: List[Tuple[str, bytes]]):
    """Records in the order package_pt2 writes them (PT2ArchiveWriter adds the
    last two on exit; byteorder is [I]: listed in the PT2 archive spec)."""
    return [
        *weights,
        ("data/weights/model_weights_config.json", weights_config),
        ("data/constants/model_constants_config.json", b'{"config": {}}'),
        ("models/model.json", model_json),
        ("data/sample_inputs/model.pt", sample_inputs),
        *[(f"extra/{name}", data) for name, data in extra],
        ("archive_format", b"pt2"),
        ("archive_version", b"0"),
        ("byteorder", b"little"),
    ]


def write_pt2_archive(path: str, records: List[Tuple[str, bytes]]) -> None:
    """Writes the zip with torch's own PyTorchFileWriter (stored entries,
    64-byte aligned data, zip64, root folder = file name without `.pt2`).

    set_min_version(6) makes the writer add `.data/version` (as torch >= 2.8's
    archives carry); torch 1.13 writes it after our `.data/serialization_id`,
    torch 2.x before it."""
    writer = torch._C.PyTorchFileWriter(path)
    writer.set_min_version(6)
    for name, data in records:
        writer.write_record(name, data, len(data))
    sid = serialization_id(records)
    writer.write_record(".data/serialization_id", sid, len(sid))
    writer.write_end_of_file()
