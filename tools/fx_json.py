"""The symbolic_trace graph JSON of docs/FORMATS.md section 2, built from a real
torch.fx GraphModule, plus the three texts torch itself printed for it.

Used by make_assets.py (assets/fx/) and fx_cases.py (tests/golden/fx/).
"""

import contextlib
import io
import json
import math
import os
import re

import torch
import torch.fx

from assetlib import json_difference

FORMAT = "pt2lab.fx_graph"
VERSION = 1

# Object addresses in reprs (`<function relu at 0x7f...>`) change on every run.
# They are replaced by one fixed address so the files are reproducible; pt2lab
# compares addresses by pattern, never by value.
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
FIXED_ADDRESS = "0x7f0000000000"


def normalize_addresses(text: str) -> str:
    return _ADDRESS.sub(FIXED_ADDRESS, text)


def _type_name(obj) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def encode_arg(value):
    """One torch.fx argument value as JSON (the table in FORMATS.md section 2)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return {"float": "nan"}
        if math.isinf(value):
            return {"float": "inf" if value > 0 else "-inf"}
        return value
    if isinstance(value, torch.fx.Node):
        return {"node": value.name}
    if isinstance(value, list):
        return [encode_arg(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [encode_arg(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode_arg(k), encode_arg(v)] for k, v in value.items()]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).replace("torch.", "")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    return {"repr": normalize_addresses(repr(value))}


def _node_target(node: torch.fx.Node) -> str:
    if node.op == "call_function":
        # Exactly what str(graph) prints inside call_function[target=...].
        return node._pretty_print_target(node.target)
    return str(node.target)


def encode_node(node: torch.fx.Node) -> dict:
    record = {
        "op": node.op,
        "name": node.name,
        "target": _node_target(node),
    }
    if node.op == "call_function":
        record["target_repr"] = normalize_addresses(str(node.target))
    record["args"] = [encode_arg(a) for a in node.args]
    record["kwargs"] = {k: encode_arg(v) for k, v in node.kwargs.items()}
    return record


def _modules_used(root: torch.nn.Module, graph: torch.fx.Graph) -> dict:
    """Type of every call_module target and of each of its parents, in
    named_modules order (the root itself is left out)."""
    wanted = set()
    for node in graph.nodes:
        if node.op == "call_module":
            parts = node.target.split(".")
            for i in range(1, len(parts) + 1):
                wanted.add(".".join(parts[:i]))
    return {name: _type_name(module)
            for name, module in root.named_modules()
            if name in wanted}


def _attributes_read(root: torch.nn.Module, graph: torch.fx.Graph) -> dict:
    attributes = {}
    for node in graph.nodes:
        if node.op != "get_attr" or node.target in attributes:
            continue
        value = root
        for atom in node.target.split("."):
            value = getattr(value, atom)
        if isinstance(value, torch.Tensor):
            attributes[node.target] = {
                "dtype": str(value.dtype).replace("torch.", ""),
                "shape": list(value.shape),
            }
    return attributes


def _tabular_text(graph: torch.fx.Graph) -> str:
    """stdout of graph.print_tabular(), with object addresses fixed *before*
    tabulate measures the columns (so the alignment stays what torch prints)."""
    import tabulate as tabulate_module

    real_tabulate = tabulate_module.tabulate

    def tabulate_with_fixed_addresses(rows, *args, **kwargs):
        fixed = [[c if isinstance(c, str) or not callable(c) else normalize_addresses(str(c))
                  for c in row] for row in rows]
        return real_tabulate(fixed, *args, **kwargs)

    out = io.StringIO()
    tabulate_module.tabulate = tabulate_with_fixed_addresses
    try:
        with contextlib.redirect_stdout(out):
            graph.print_tabular()
    finally:
        tabulate_module.tabulate = real_tabulate
    return out.getvalue()


def expected_texts(gm: torch.fx.GraphModule) -> dict:
    """What torch printed: str(graph), code, tabular (object addresses fixed)."""
    graph_text = str(gm.graph)
    return {
        "graph": graph_text,
        "code": gm.code,
        "tabular": _tabular_text(gm.graph),
    }


def fx_graph_record(name: str, model: torch.nn.Module, script: str) -> dict:
    """Traces `model` with torch.fx.symbolic_trace and returns the JSON record."""
    gm = torch.fx.symbolic_trace(model)
    record = {
        "format": FORMAT,
        "version": VERSION,
        "producer": {"script": script, "torch_version": torch.__version__},
        "name": name,
        "module_class": type(model).__qualname__,
        "modules": _modules_used(model, gm.graph),
    }
    # Modules dead-code elimination must keep (their `_is_impure` flag), when any.
    impure = sorted(path for path in record["modules"] if getattr(gm.get_submodule(path), "_is_impure", False))
    if impure:
        record["impure_modules"] = impure
    record.update({
        "attributes": _attributes_read(model, gm.graph),
        "nodes": [encode_node(n) for n in gm.graph.nodes],
        "expected": expected_texts(gm),
    })
    return record


def compare_fx_files(committed_path: str, fresh_path: str):
    """--check for one FX JSON: ("ok" | "DIFF" | "MISSING", detail)."""
    if not os.path.exists(committed_path):
        return "MISSING", "not committed"
    with open(committed_path, encoding="utf-8") as f:
        committed = json.load(f)
    with open(fresh_path, encoding="utf-8") as f:
        fresh = json.load(f)
    diff = json_difference(committed, fresh)
    return ("DIFF", diff) if diff else ("ok", "")
