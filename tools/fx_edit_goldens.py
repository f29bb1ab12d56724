#!/usr/bin/env python3
"""Golden replays of torch.fx graph edits: tests/golden/fx_edits/<scenario>.json
(docs/FORMATS.md section 6).

    bash scripts/torch_env.sh run sid python3 tools/fx_edit_goldens.py            # write them
    bash scripts/torch_env.sh run sid python3 tools/fx_edit_goldens.py --out DIR  # DIR/<scenario>.json
    bash scripts/torch_env.sh run sid python3 tools/fx_edit_goldens.py --check    # regenerate, compare

Each scenario traces a model with the real torch.fx.symbolic_trace of torch
2.14.1, applies a
list of edit actions to the real GraphModule (the vocabulary pt2lab's C++
Graph replays: insert, replace_all_uses_with, replace_input_with, set_args,
erase_node, eliminate_dead_code, lint, recompile) and records, after every
step, what torch returned, printed and linted, and every node's users in
torch's own order. Node names in the tables are the names torch assigns; a
wrong name fails loudly when the scenario is replayed.
"""

import os
import sys

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # before torch, as in every tools/ script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import importlib  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Callable, List, Optional, Tuple  # noqa: E402

import torch  # noqa: E402
import torch.fx  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.ao.quantization import MinMaxObserver  # noqa: E402

import assetlib  # noqa: E402
import fx_json  # noqa: E402
import lesson_models  # noqa: E402

SCRIPT = "tools/fx_edit_goldens.py"
FORMAT = "pt2lab.fx_edits"
VERSION = 1
GOLDEN_DIR = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "fx_edits")

# ---------------------------------------------------------------------------
# Models that only these scenarios use (the lesson models come from lesson_models)
# ---------------------------------------------------------------------------


class DeadCode(nn.Module):
    """A used chain (conv -> relu) next to values nobody uses: a pure function
    chain (neg -> abs), a parameter read, an in-place method, a leaf module,
    a leaf module marked `_is_impure`, and a torch._assert (side-effectful)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.probe = nn.Identity()
        self.probe._is_impure = True  # what torch.fx's Node.is_impure asks a module
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        torch._assert(x.dim() == 4, "expected a 4-d input")
        torch.abs(torch.neg(x))
        self.scale  # noqa: B018  (reading a parameter records a get_attr node)
        x.add_(1)
        self.pool(x)
        self.probe(x)
        return torch.relu(self.conv(x))


class ThreeUsers(nn.Module):
    """x feeds three ops; neg feeds two (add first, then mul)."""

    def forward(self, x):
        a = torch.neg(x)
        b = torch.abs(x)
        c = torch.relu(x)
        return (a + b) + (a * c)


class KwargsTupleOutput(nn.Module):
    """A node referenced through kwargs (`other=`) and twice inside a nested
    tuple/list output."""

    def forward(self, x):
        a = torch.neg(x)
        b = torch.add(x, other=a)
        return (a, b, [a, x])


# ---------------------------------------------------------------------------
# The scenario-table vocabulary
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """A node of the graph being edited, by its (torch-assigned) name."""

    name: str


def N(name: str) -> Ref:
    return Ref(name)


@dataclass(frozen=True)
class NewNode:
    """One node an insert action creates. `target` is written the way
    str(graph) prints it; call_module nodes carry the module to register."""

    op: str
    target: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    module: Optional[Callable[[], nn.Module]] = None


def function(target, *args, **kwargs) -> NewNode:
    return NewNode("call_function", target, args, kwargs)


def method(name, *args, **kwargs) -> NewNode:
    return NewNode("call_method", name, args, kwargs)


def module(target, factory, *args, **kwargs) -> NewNode:
    return NewNode("call_module", target, args, kwargs, factory)


def attr(target) -> NewNode:
    return NewNode("get_attr", target)


def insert(where, anchor, *nodes):
    return {"kind": "insert", "where": where, "anchor": anchor, "nodes": list(nodes)}


def replace_all_uses_with(node, with_, skip_users=None):
    return {"kind": "replace_all_uses_with", "node": node, "with": with_,
            "skip_users": skip_users}


def replace_input_with(node, old, new):
    return {"kind": "replace_input_with", "node": node, "old": old, "new": new}


def erase_node(node):
    return {"kind": "erase_node", "node": node}


def set_args(node, *args):
    return {"kind": "set_args", "node": node, "args": list(args)}


DCE = {"kind": "eliminate_dead_code"}
LINT = {"kind": "lint"}
RECOMPILE = {"kind": "recompile"}


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    model: Callable[[], nn.Module]
    start_name: str  # the `name` of the start graph record
    actions: List[dict]


OBSERVER = "activation_post_process_0"

SCENARIOS = [
    Scenario(
        "m00_4_storyline",
        "M00-4 live: insert a MinMaxObserver after relu, rewire without and then with "
        "delete_user_cb, and replace the observer by a q/dq pair (q = torch.clamp and "
        "dq = torch.round stand in for quantize/dequantize: the lesson's first look, before "
        "convert_pt2e writes the real quantized_decomposed ops).",
        lesson_models.ConvReLU, "conv_relu",
        [
            insert("after", "relu", module(OBSERVER, MinMaxObserver, N("relu"))),
            RECOMPILE,
            replace_all_uses_with("relu", OBSERVER),  # the observer now eats itself
            LINT,
            set_args(OBSERVER, N("relu")),  # undo the bad rewire ...
            replace_input_with("output", OBSERVER, "relu"),  # ... by hand
            LINT,
            replace_all_uses_with("relu", OBSERVER, skip_users=[OBSERVER]),
            LINT,
            RECOMPILE,
            insert("before", OBSERVER,
                   function("torch.clamp", N("relu"), min=0.0, max=255.0),
                   function("torch.round", N("clamp"))),
            erase_node(OBSERVER),  # refused: output still uses it
            replace_all_uses_with(OBSERVER, "round_1"),
            erase_node(OBSERVER),
            DCE,
            LINT,
            RECOMPILE,
        ]),
    Scenario(
        "pitfall_self_loop",
        "The FX docs' own snippet: torch.relu inserted after relu, then "
        "replace_all_uses_with without a callback makes the new node consume itself.",
        lesson_models.ConvReLU, "conv_relu",
        [
            insert("after", "relu", function("torch.relu", N("relu"))),
            replace_all_uses_with("relu", "relu_1"),
            LINT,
        ]),
    Scenario(
        "reverse_order",
        "Two nodes created in one inserting_after(conv) block come out in reverse "
        "creation order, so abs_1 precedes the neg it uses and lint fails.",
        lesson_models.ConvReLU, "conv_relu",
        [
            insert("after", "conv", function("torch.neg", N("conv")),
                   function("torch.abs", N("neg"))),
            LINT,
            replace_input_with("relu", "conv", "abs_1"),
            LINT,
        ]),
    Scenario(
        "reverse_order_fixed",
        "The idiom that keeps creation order after a node: re-enter "
        "inserting_after(last new node) for every node, then rewire relu to the chain.",
        lesson_models.ConvReLU, "conv_relu",
        [
            insert("after", "conv", function("torch.neg", N("conv"))),
            insert("after", "neg", function("torch.abs", N("neg"))),
            replace_input_with("relu", "conv", "abs_1"),
            LINT,
            RECOMPILE,
        ]),
    Scenario(
        "inserting_before_keeps_order",
        "Three nodes created in one inserting_before(relu) block keep creation order; "
        "relu is then rewired to the last one.",
        lesson_models.ConvReLU, "conv_relu",
        [
            insert("before", "relu", function("torch.neg", N("conv")),
                   function("torch.abs", N("neg")),
                   function("operator.add", N("neg"), N("abs_1"))),
            LINT,
            replace_input_with("relu", "conv", "add"),
            LINT,
            RECOMPILE,
        ]),
    Scenario(
        "erase_refuses_used_node",
        "erase_node refuses a node that still has users; after relu is pointed at x "
        "with set_args the erase succeeds.",
        lesson_models.ConvReLU, "conv_relu",
        [
            erase_node("conv"),
            set_args("relu", N("x")),
            erase_node("conv"),
            LINT,
            RECOMPILE,
        ]),
    Scenario(
        "dead_code",
        "eliminate_dead_code with torch.fx's impurity rules: unused call_function, "
        "get_attr, in-place call_method and plain leaf call_module are removed, "
        "torch._assert and a module with _is_impure stay.",
        DeadCode, "dead_code",
        [
            DCE,
            DCE,
            LINT,
            RECOMPILE,
        ]),
    Scenario(
        "replace_chain",
        "Replace act -> mean by torch.relu -> mean_1 inserted before act, rewire fc, "
        "erase the old chain (refused while mean still uses act), lint and recompile.",
        lesson_models.StyleModules, "style_modules",
        [
            insert("before", "act", function("torch.relu", N("conv")),
                   method("mean", N("relu"), dim=(2, 3))),
            replace_input_with("fc", "mean", "mean_1"),
            erase_node("act"),  # refused: mean still uses it
            erase_node("mean"),
            erase_node("act"),
            LINT,
            RECOMPILE,
        ]),
    Scenario(
        "multi_user_rewire",
        "x has three users; replace_all_uses_with with a skip list of two moves only "
        "the others, and rewiring one input re-appends the user to all its inputs' users.",
        ThreeUsers, "three_users",
        [
            insert("after", "x", function("torch.sigmoid", N("x"))),
            replace_all_uses_with("x", "sigmoid", skip_users=["sigmoid", "neg"]),
            replace_input_with("add", "abs_1", "relu"),
            DCE,
            LINT,
            RECOMPILE,
        ]),
    Scenario(
        "kwargs_and_tuple_output",
        "Rewiring a node used through a kwarg and twice inside a nested tuple/list "
        "output, replace_input_with across args and kwargs, and set_args on output.",
        KwargsTupleOutput, "kwargs_tuple_output",
        [
            insert("after", "neg", function("torch.sigmoid", N("neg"))),
            replace_all_uses_with("neg", "sigmoid", skip_users=["sigmoid"]),
            replace_input_with("add", "x", "sigmoid"),
            set_args("output", (N("add"), N("x"))),
            DCE,
            LINT,
            RECOMPILE,
        ]),
    Scenario(
        "none_anchor",
        "inserting_before(None) puts a node at the start of the graph (before the "
        "placeholder), inserting_after(None) at the end (after output).",
        lesson_models.ConvReLU, "conv_relu",
        [
            insert("before", None, attr("conv.weight")),
            insert("after", None, function("torch.neg", N("relu"))),
            LINT,
            RECOMPILE,
            DCE,
            RECOMPILE,
        ]),
]

# ---------------------------------------------------------------------------
# Replaying actions on a real GraphModule
# ---------------------------------------------------------------------------


def _resolve_callable(qualified: str):
    """`torch.clamp`, `operator.add`, `torch.nn.functional.relu` -> the object."""
    atoms = qualified.split(".")
    for split in range(len(atoms) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(atoms[:split]))
        except ImportError:
            continue
        for atom in atoms[split:]:
            obj = getattr(obj, atom)
        return obj
    raise ValueError(f"cannot resolve call_function target {qualified!r}")


def _first_line(error: BaseException) -> str:
    return fx_json.normalize_addresses(str(error).split("\n", 1)[0])


def _type_name(obj) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


class EditReplay:
    """Applies scenario actions to one GraphModule and records what torch did."""

    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm
        self.graph = gm.graph

    # -- helpers ------------------------------------------------------------

    def node(self, name: str) -> torch.fx.Node:
        for n in self.graph.nodes:
            if n.name == name:
                return n
        raise KeyError(f"no node named {name!r} in the graph:\n{self.graph}")

    def resolve(self, value):
        """Scenario values -> torch.fx argument values (Ref -> Node)."""
        if isinstance(value, Ref):
            return self.node(value.name)
        if isinstance(value, tuple):
            return tuple(self.resolve(v) for v in value)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def lint_error(self) -> Optional[str]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.graph.lint()
        except Exception as error:  # RuntimeError, ValueError: whatever torch raises
            return _first_line(error)
        return None

    def snapshot(self) -> dict:
        graph_text = str(self.graph)
        code = self.graph.python_code(root_module="self").src
        return {
            "graph": fx_json.normalize_addresses(graph_text),
            "code": fx_json.normalize_addresses(code),
            "lint": self.lint_error() or "ok",
            "users": {n.name: [u.name for u in n.users] for n in self.graph.nodes},
        }

    # -- actions ------------------------------------------------------------

    def apply(self, spec: dict) -> Tuple[dict, dict]:
        """Runs one action; returns (action as JSON, result as JSON)."""
        handler = getattr(self, "_" + spec["kind"])
        return handler(spec)

    def _insert(self, spec):
        anchor = None if spec["anchor"] is None else self.node(spec["anchor"])
        if spec["where"] == "after":
            point = self.graph.inserting_after(anchor)
        elif spec["where"] == "before":
            point = self.graph.inserting_before(anchor)
        else:
            raise ValueError(f"insert: where must be 'after' or 'before', not {spec['where']!r}")
        encoded, created = [], []
        with point:
            for new in spec["nodes"]:
                node, record = self._create(new)
                encoded.append(record)
                created.append(node.name)
        action = {"kind": "insert", "where": spec["where"], "anchor": spec["anchor"],
                  "nodes": encoded}
        return action, {"created": created}

    def _create(self, new: NewNode):
        args = self.resolve(tuple(new.args))
        kwargs = self.resolve(dict(new.kwargs))
        record = {"op": new.op, "target": new.target}
        if new.op == "call_function":
            node = self.graph.call_function(_resolve_callable(new.target), args, kwargs)
        elif new.op == "call_module":
            if hasattr(self.gm, new.target):
                raise ValueError(f"module {new.target!r} is already registered")
            self.gm.add_submodule(new.target, new.module())
            node = self.graph.call_module(new.target, args, kwargs)
        elif new.op == "call_method":
            node = self.graph.call_method(new.target, args, kwargs)
        elif new.op == "get_attr":
            if args or kwargs:
                raise ValueError("get_attr takes no arguments")
            node = self.graph.get_attr(new.target)
        else:
            raise ValueError(f"insert: unsupported op {new.op!r}")
        printed = fx_json.encode_node(node)["target"]
        if printed != new.target:
            raise ValueError(f"target {new.target!r} prints as {printed!r}; "
                             "write it the way str(graph) prints it")
        record["args"] = [fx_json.encode_arg(a) for a in node.args]
        record["kwargs"] = {k: fx_json.encode_arg(v) for k, v in node.kwargs.items()}
        if new.op == "call_module":
            record["module_type"] = _type_name(self.gm.get_submodule(new.target))
        return node, record

    def _replace_all_uses_with(self, spec):
        node, replacement = self.node(spec["node"]), self.node(spec["with"])
        skip = spec["skip_users"]
        if skip is None:
            changed = node.replace_all_uses_with(replacement)
        else:
            skip = list(skip)
            changed = node.replace_all_uses_with(
                replacement, delete_user_cb=lambda user: user.name not in skip)
        action = {"kind": "replace_all_uses_with", "node": spec["node"], "with": spec["with"],
                  "skip_users": skip}
        return action, {"changed": [n.name for n in changed]}

    def _replace_input_with(self, spec):
        self.node(spec["node"]).replace_input_with(self.node(spec["old"]), self.node(spec["new"]))
        action = {"kind": "replace_input_with", "node": spec["node"], "old": spec["old"],
                  "new": spec["new"]}
        return action, {}

    def _set_args(self, spec):
        node = self.node(spec["node"])
        node.args = self.resolve(tuple(spec["args"]))
        action = {"kind": "set_args", "node": spec["node"],
                  "args": [fx_json.encode_arg(a) for a in node.args]}
        return action, {}

    def _erase_node(self, spec):
        try:
            self.graph.erase_node(self.node(spec["node"]))
            error = None
        except RuntimeError as refused:
            error = fx_json.normalize_addresses(str(refused))
        return {"kind": "erase_node", "node": spec["node"]}, {"error": error}

    def _eliminate_dead_code(self, spec):
        return {"kind": "eliminate_dead_code"}, {"changed": self.graph.eliminate_dead_code()}

    def _lint(self, spec):
        return {"kind": "lint"}, {"error": self.lint_error()}

    def _recompile(self, spec):
        self.gm.recompile()
        if self.gm.code != self.graph.python_code(root_module="self").src:
            raise RuntimeError("recompile: gm.code differs from the graph's fresh code")
        return {"kind": "recompile"}, {"code": fx_json.normalize_addresses(self.gm.code)}


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------


def scenario_record(scenario: Scenario) -> dict:
    torch.manual_seed(0)  # parameter values never reach the files; fixed anyway
    model = scenario.model()
    start = fx_json.fx_graph_record(scenario.start_name, model, SCRIPT)
    gm = torch.fx.symbolic_trace(model)
    if [fx_json.encode_node(n) for n in gm.graph.nodes] != start["nodes"]:
        raise RuntimeError(f"{scenario.name}: tracing twice gave different graphs")
    replay = EditReplay(gm)
    steps = []
    for spec in scenario.actions:
        action, result = replay.apply(spec)
        steps.append({"action": action, "result": result, "after": replay.snapshot()})
    return {
        "format": FORMAT,
        "version": VERSION,
        "producer": {"script": SCRIPT, "torch_version": torch.__version__},
        "name": scenario.name,
        "description": scenario.description,
        "start": start,
        "steps": steps,
    }


_STRAY_ADDRESS = re.compile(r"0x(?!7f0000000000\b)[0-9a-fA-F]+")


def file_text(record: dict) -> str:
    text = assetlib.json_text(record, inline_depth=3)
    stray = _STRAY_ADDRESS.search(text)
    if stray:
        raise RuntimeError(f"{record['name']}: unnormalized address {stray.group(0)}")
    return text


def generate(out_dir: str, quiet: bool = False) -> List[str]:
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    names = []
    for scenario in SCENARIOS:
        path = os.path.join(out_dir, f"{scenario.name}.json")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            record = scenario_record(scenario)
        assetlib.write_bytes_atomic(path, file_text(record).encode("utf-8"))
        names.append(f"{scenario.name}.json")
        if not quiet:
            print(f"wrote    {assetlib.rel(path)}  ({len(record['steps'])} steps)")
    return names


def _compare(committed_path: str, fresh_path: str):
    status, detail = fx_json.compare_fx_files(committed_path, fresh_path)
    if status == "ok":
        with open(committed_path, "rb") as a, open(fresh_path, "rb") as b:
            if a.read() != b.read():
                return "DIFF", "same JSON, different bytes (layout); regenerate"
    return status, detail


def check(_out_dir=None) -> int:
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        names = generate(tmp, quiet=True)
        for name in names:
            status, detail = _compare(os.path.join(GOLDEN_DIR, name), os.path.join(tmp, name))
            failures += status in ("DIFF", "MISSING")
            print(assetlib.report_line(status, f"tests/golden/fx_edits/{name}", detail))
    committed = sorted(f for f in os.listdir(GOLDEN_DIR) if f.endswith(".json")) \
        if os.path.isdir(GOLDEN_DIR) else []
    for name in committed:
        if name not in names:
            failures += 1
            print(assetlib.report_line("STALE", f"tests/golden/fx_edits/{name}",
                                       "no scenario writes this file"))
    return assetlib.finish_check(failures, "golden(s)", SCRIPT)


def main(argv=None):
    return assetlib.generator_main(__doc__, GOLDEN_DIR, generate, check,
                                   check_help="regenerate into a temp folder and compare with the committed files",
                                   out_help="write DIR/<scenario>.json instead of tests/golden/fx_edits/", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
