#!/usr/bin/env python3
"""Goldens for the lessons: tests/golden/lessons/<id>.json, made by replaying
every step of assets/lessons/<id>.zh-TW.md with real PyTorch (docs/LESSONS.md
section 5).

    scripts/torch_env.sh run sid python3 tools/lesson_goldens.py           # write tests/golden/lessons/
    scripts/torch_env.sh run sid python3 tools/lesson_goldens.py --check   # regenerate into a temp dir, compare
    scripts/torch_env.sh run sid python3 tools/lesson_goldens.py --out DIR

It needs torch 2.14 (Debian sid's python3-torch): the lesson graphs are the
real .pt2 archives in assets/graphs, loaded with torch.export.load; the
symbolic_trace graphs are traced again from tools/lesson_models.py. Each step's
actions run on the real objects: torch.fx edits on ep.module(), undo as a
restored deep copy, run_decompositions on the ExportedProgram (decompose_node
as a table holding that op's decomposition only), runs under no_grad,
ep.module().train() / .eval() as called. convert follows torch.ao 2.6's
convert_pt2e for a per-tensor MinMaxObserver (the code of fx/convert.py,
read in Debian trixie's torch 2.6; see convert_observers) with torch 2.14's own
quantized_decomposed ops, since torch 2.14 ships no convert_pt2e. After every step it records what torch printed, linted and
computed for each graph the step shows or touches.
"""

import os
import sys

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # before torch, as in every tools/ script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import base64  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
import zipfile  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.fx  # noqa: E402

import assetlib  # noqa: E402
import lesson_models  # noqa: E402

SCRIPT = "tools/lesson_goldens.py"
FORMAT = "pt2lab.lesson_golden"
VERSION = 1
TORCH_NEEDED = (2, 14)   # the lesson goldens
TORCH_PT2E = (2, 6)      # the convert cross-check (tests/golden/lessons/pt2e): torch.ao's convert_pt2e
LESSON_DIR = os.path.join(assetlib.REPO_ROOT, "assets", "lessons")
GOLDEN_DIR = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "lessons")
PT2E_DIR = os.path.join(GOLDEN_DIR, "pt2e")
REFERENCE_LANG = "zh-TW"  # the C++ tests check that every language has the same steps
SAMPLE = 16  # output values kept per run (with sums, min and max)
FLOAT_TOLERANCE = 1e-6  # --check: numbers may move this much (relative) between CPUs


def torch_version():
    return tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2])


# ---------------------------------------------------------------------------
# Lesson files: only the ```lesson and ```step JSON blocks matter here
# ---------------------------------------------------------------------------


def read_lesson(path):
    """(lesson block, [step blocks]) of one lesson file, in file order."""
    lines = open(path, encoding="utf-8").read().split("\n")
    lesson, steps, i = None, [], 0
    while i < len(lines):
        info = lines[i][3:].strip() if lines[i].startswith("```") else None
        if info is None:
            i += 1
            continue
        end = i + 1
        while not lines[end].startswith("```"):
            end += 1
        if info in ("lesson", "step"):
            block = json.loads("\n".join(lines[i + 1:end]))
            if info == "lesson":
                lesson = block
            else:
                steps.append(block)
        i = end + 1
    return lesson, steps


# ---------------------------------------------------------------------------
# The lesson graphs in torch
# ---------------------------------------------------------------------------


def archive_records(path):
    """({record under the root folder: bytes} without extra/, {extra/...: bytes})."""
    records, extras = {}, {}
    with zipfile.ZipFile(path) as src:
        for info in src.infolist():
            inner = info.filename.split("/", 1)[1] if "/" in info.filename else info.filename
            (extras if inner.startswith("extra/") else records)[inner] = src.read(info.filename)
    return records, extras


def model_from_archive(path):
    """The lesson model (tools/lesson_models.py) holding the archive's weights and
    buffers, in the archive's export mode: how torch 2.6, which cannot read a
    torch >= 2.8 archive, gets the same module."""
    records, extras = archive_records(path)
    manifest = json.loads(extras["extra/pt2lab/manifest.json"])
    name = os.path.splitext(os.path.basename(path))[0]
    spec = next(s for s in lesson_models.ASSETS if s.name == name)
    model, _ = lesson_models.build_asset_model(spec)
    config = json.loads(records["data/weights/model_weights_config.json"])["config"]
    dtypes = {7: torch.float32, 5: torch.int64}
    state = {}
    for fqn, entry in config.items():
        meta = entry["tensor_meta"]
        shape = [d["as_int"] for d in meta["sizes"]]
        data = records["data/weights/" + entry["path_name"]]
        state[fqn] = torch.frombuffer(bytearray(data), dtype=dtypes[meta["dtype"]]).reshape(shape).clone()
    model.load_state_dict(state)
    model.train(manifest["provenance"]["mode"] == "train")
    return model


def load_archive(path):
    """torch.export.load of a lesson archive, with its extra/pt2lab/ records
    returned separately (left out of the copy torch reads)."""
    extras = {}
    with zipfile.ZipFile(path) as src, tempfile.TemporaryDirectory() as tmp:
        copy_path = os.path.join(tmp, os.path.basename(path))
        with zipfile.ZipFile(copy_path, "w", zipfile.ZIP_STORED) as dst:
            for info in src.infolist():
                inner = info.filename.split("/", 1)[1] if "/" in info.filename else info.filename
                if inner.startswith("extra/"):
                    extras[inner] = src.read(info.filename)
                else:
                    dst.writestr(info.filename, src.read(info.filename))
        ep = torch.export.load(copy_path)
    return ep, extras


def npy(data):
    return torch.from_numpy(np.load(io.BytesIO(data), allow_pickle=False).copy())


def archive_inputs(path):
    """The archive's sample inputs (torch.export.save's data/sample_inputs/model.pt)."""
    records, _ = archive_records(path)
    args, _ = torch.load(io.BytesIO(records["data/sample_inputs/model.pt"]))
    return list(args)


def archive_reference(path):
    """The eager reference outputs of extra/pt2lab/ (.npy files as base64 text)."""
    _, extras = archive_records(path)
    manifest = json.loads(extras["extra/pt2lab/manifest.json"])
    return [npy(base64.b64decode(extras[e["file"]])) for e in manifest["outputs"]]


def resolve_target(text):
    """"torch.ops.aten.clone.default" -> the OpOverload (no eval)."""
    obj = torch
    for part in text.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def resolve_class(text):
    module, _, name = text.rpartition(".")
    __import__(module)
    return getattr(sys.modules[module], name)


def fx_value(v, graph):
    """docs/FORMATS.md section 2 argument encoding -> Python value."""
    if isinstance(v, list):
        return [fx_value(x, graph) for x in v]
    if isinstance(v, dict):
        if "node" in v:
            return next(n for n in graph.nodes if n.name == v["node"])
        if "tuple" in v:
            return tuple(fx_value(x, graph) for x in v["tuple"])
        raise ValueError(f"unsupported argument {v}")
    return v


def first_line(text):
    return str(text).split("\n", 1)[0]


class ExportGraph:
    """One lesson graph from a .pt2 archive: the live ExportedProgram and its
    ep.module(), the actions that changed it (undo replays all but the last
    from a fresh load, so the restored state is exactly the earlier one, stale
    code included, which a deep copy would not keep: copying recompiles), and
    the baseline for parity: the original ep.module() run once on the example input."""

    def __init__(self, path, build=None):
        self.path = path
        self.build = build or (lambda: load_archive(os.path.join(assetlib.REPO_ROOT, path))[0])
        self.applied = []
        self.reset()
        self.inputs = archive_inputs(os.path.join(assetlib.REPO_ROOT, path))
        self.reference = archive_reference(os.path.join(assetlib.REPO_ROOT, path))
        with torch.no_grad():
            self.baseline = flat_outputs(self.build().module()(*self.inputs))

    def reset(self):
        self.ep = self.build()
        self.gm = self.ep.module()

    def undo(self):
        self.applied.pop()
        self.reset()
        for a in self.applied:
            apply_action(self, a)

    def state(self):
        out = {}
        for name, buf in self.gm.named_buffers():
            if "activation_post_process" in name or name.endswith(".eps"):
                continue
            out[name] = [float(x) if buf.is_floating_point() else int(x) for x in buf.flatten()]
        for name, mod in self.gm.named_modules():
            if isinstance(mod, torch.ao.quantization.observer.MinMaxObserver):
                # an observer that has seen nothing holds min inf / max -inf: recorded as null
                lo, hi = float(mod.min_val), float(mod.max_val)
                entry = {"min_val": lo if math.isfinite(lo) else None,
                         "max_val": hi if math.isfinite(hi) else None}
                if math.isfinite(lo):
                    scale, zp = mod.calculate_qparams()
                    entry.update(scale=float(scale), zero_point=int(zp))
                out[name] = entry
        return out

    def record(self):
        fresh = self.gm.graph.python_code(root_module="self").src
        try:
            self.gm.graph.lint()
            lint = "ok"
        except Exception as e:  # torch raises RuntimeError; the message is the golden
            lint = first_line(e)
        return {
            "program_graph": str(self.ep.graph),
            "program_code": self.ep.graph_module.code,
            "module_graph": str(self.gm.graph),
            "module_code": self.gm.code,
            "module_code_stale": self.gm.code != fresh,
            "lint": lint,
            "state": self.state(),
        }


class TracedGraph:
    """A symbolic_trace graph (assets/fx/<name>.json), traced again with this torch."""

    def __init__(self, path):
        name = os.path.splitext(os.path.basename(path))[0]
        spec = next(s for s in lesson_models.ASSETS if s.name == name)
        model, _ = lesson_models.build_asset_model(spec)
        self.gm = torch.fx.symbolic_trace(model)

    def record(self):
        return {"module_graph": str(self.gm.graph), "module_code": self.gm.code}


def flat_outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def output_record(t):
    t64 = t.detach().to(torch.float64)
    flat = t.detach().flatten()
    return {
        "shape": list(t.shape),
        "sum": float(t64.sum()),
        "abs_sum": float(t64.abs().sum()),
        "min": float(t64.min()),
        "max": float(t64.max()),
        "first": [float(x) for x in flat[:SAMPLE]],
    }


# ---------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------


def convert_observers(gm):
    """torch.ao 2.6's convert_pt2e for per-tensor observers
    (fx/convert.py: _replace_observer_with_quantize_dequantize_node_decomposed,
    then the end of convert()): each observer call becomes
    quantize_per_tensor -> dequantize_per_tensor with its qparams as literals,
    its users move to the dequantize and the observer node is erased; then
    eliminate_dead_code, the unused submodules go, and the code is regenerated."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401  registers quantized_decomposed
    q_op = torch.ops.quantized_decomposed.quantize_per_tensor.default
    dq_op = torch.ops.quantized_decomposed.dequantize_per_tensor.default
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_module":
            continue
        obs = gm.get_submodule(node.target)
        if not isinstance(obs, torch.ao.quantization.observer.ObserverBase):
            continue
        scale, zero_point = obs.calculate_qparams()
        dtype = {torch.quint8: torch.uint8, torch.qint8: torch.int8}[obs.dtype]
        qparams = [float(scale), int(zero_point), obs.quant_min, obs.quant_max, dtype]
        input_node = node.args[0]
        dq_kwargs = {}
        if "val" in input_node.meta and input_node.meta["val"].dtype != torch.float32:
            dq_kwargs = {"out_dtype": input_node.meta["val"].dtype}
        with graph.inserting_before(node):
            quantized = graph.create_node("call_function", q_op, (input_node, *qparams), {})
            dequantized = graph.call_function(dq_op, (quantized, *qparams), dq_kwargs)
            node.replace_all_uses_with(dequantized)
            graph.erase_node(node)
    graph.eliminate_dead_code()
    gm.delete_all_unused_submodules()
    gm.recompile()


def decomposition_table(level, keep=(), only=None):
    if level == "inference":
        return {}
    table = torch.export.default_decompositions()
    if only is not None:
        return {only: table[only]}
    for op in keep:
        del table[resolve_target(op if op.startswith("torch.ops.") else "torch.ops." + op)]
    return table


REAL_CONVERT = None  # set to torch.ao's convert_pt2e in the trixie (torch 2.6) mode


def apply_action(g, a):
    """Runs one action on graph g; returns what it reported (the golden's action record)."""
    kind = a["kind"]
    rec = {"kind": kind}
    graph = g.gm.graph if isinstance(g, ExportGraph) else None
    if kind == "run":
        assert a.get("inputs", "auto") in ("auto", "sample"), "goldens run on the sample input"
        with torch.no_grad():
            for _ in range(a.get("repeat", 1)):
                outs = flat_outputs(g.gm(*g.inputs))
        rec["outputs"] = [output_record(o) for o in outs]
        rec["parity"] = [{"bit_identical": bool(torch.equal(o, b)),
                          "max_abs": float((o.to(torch.float64) - b.to(torch.float64)).abs().max())}
                         for o, b in zip(outs, g.baseline)]
        rec["reference_max_abs"] = [float((o.to(torch.float64) - r.to(torch.float64)).abs().max())
                                    for o, r in zip(outs, g.reference)]
        return rec
    if kind in ("decompose", "decompose_node"):
        if kind == "decompose":
            table = decomposition_table(a["level"], a.get("keep", ()))
        else:
            node = next(n for n in g.ep.graph.nodes if n.name == a["node"])
            table = decomposition_table(a["level"], only=node.target)
        g.ep = g.ep.run_decompositions(table)
        g.gm = g.ep.module()
        return rec
    if kind == "insert":
        anchor = next(n for n in graph.nodes if n.name == a["anchor"]) if a.get("anchor") else None
        scope = graph.inserting_after(anchor) if a.get("where", "after") == "after" \
            else graph.inserting_before(anchor)
        created = []
        with scope:
            for spec in a["nodes"]:
                target = spec["target"]
                if spec["op"] == "call_module":
                    if not hasattr(g.gm, target):
                        g.gm.add_submodule(target, resolve_class(spec["module_type"])())
                elif spec["op"] == "call_function":
                    target = resolve_target(target)
                args = tuple(fx_value(x, graph) for x in spec.get("args", []))
                kwargs = {k: fx_value(v, graph) for k, v in spec.get("kwargs", {}).items()}
                created.append(graph.create_node(spec["op"], target, args, kwargs,
                                                 name=spec.get("name")).name)
        rec["created"] = created
        return rec
    if kind == "replace_all_uses_with":
        node = next(n for n in graph.nodes if n.name == a["node"])
        new = next(n for n in graph.nodes if n.name == a["with"])
        skip = a.get("skip_users")
        if skip is None:
            changed = node.replace_all_uses_with(new)
        else:
            changed = node.replace_all_uses_with(new, delete_user_cb=lambda u: u.name not in skip)
        rec["changed"] = [n.name for n in changed]
        return rec
    if kind == "erase_node":
        node = next(n for n in graph.nodes if n.name == a["node"])
        try:
            graph.erase_node(node)
        except RuntimeError as e:
            rec["torch_error"] = {"type": type(e).__name__, "message": first_line(e)}
        return rec
    if kind == "lint":
        try:
            graph.lint()
        except RuntimeError as e:
            rec["torch_error"] = {"type": type(e).__name__, "message": first_line(e)}
        return rec
    if kind == "eliminate_dead_code":
        rec["dce_changed"] = bool(graph.eliminate_dead_code())
        return rec
    if kind == "recompile":
        g.gm.recompile()
        return rec
    if kind == "convert":
        assert a.get("fold_quantize", True), "fold_quantize=False is not replayed"
        if REAL_CONVERT:
            # convert_pt2e takes what prepare_pt2e returns: torch.ao's own prepare
            # step (pt2e/prepare.py) run with no annotations inserts no observer
            # (the lesson placed its own by hand) and leaves the bookkeeping
            # convert asserts on; then the real convert_pt2e.
            from torch.ao.quantization.pt2e.prepare import prepare
            from torch.ao.quantization.pt2e.utils import _get_node_name_to_scope
            prepared = prepare(g.gm, _get_node_name_to_scope(g.gm), is_qat=False)
            g.gm = REAL_CONVERT(prepared, fold_quantize=True)
        else:
            convert_observers(g.gm)
        return rec
    if kind in ("train", "eval"):
        try:
            g.gm.train() if kind == "train" else g.gm.eval()
        except NotImplementedError as e:
            rec["torch_error"] = {"type": type(e).__name__, "message": first_line(e)}
        return rec
    raise ValueError(f"{SCRIPT} cannot replay a '{kind}' action yet; add it here first")


def fingerprint(g):
    r = g.record()
    return json.dumps([r["program_graph"], r["module_graph"], r["module_code"], r["state"]],
                      sort_keys=True)


def lesson_record(lesson_id):
    lesson, steps = read_lesson(os.path.join(LESSON_DIR, f"{lesson_id}.{REFERENCE_LANG}.md"))
    graphs = {}
    for key, path in lesson["graphs"].items():
        graphs[key] = TracedGraph(path) if path.startswith("assets/fx/") else ExportGraph(path)
    out_steps = []
    for index, step in enumerate(steps, start=1):
        actions = []
        changed = False
        for a in step.get("actions", []):
            key = a.get("graph", step["graph"])
            g = graphs[key]
            action = {k: v for k, v in a.items() if k not in ("graph", "label")}
            if action["kind"] in ("undo", "redo"):
                assert action["kind"] == "undo", "redo is not replayed"
                g.undo()
                actions.append({"graph": key, "kind": "undo", "changed": True})
                changed = True
                continue
            before = fingerprint(g)
            rec = apply_action(g, action)
            rec["changed"] = fingerprint(g) != before
            if rec["changed"]:
                g.applied.append(action)
            changed = changed or rec["changed"]
            actions.append({"graph": key, "action": action, **rec})
        shown = [step["graph"]] + step.get("compare", []) + \
            [a.get("graph", step["graph"]) for a in step.get("actions", [])]
        keys = list(dict.fromkeys(shown))
        out_steps.append({
            "index": index,
            "actions": actions,
            "changed": changed,
            "graphs": {k: graphs[k].record() for k in keys},
        })
    return {
        "format": FORMAT,
        "version": VERSION,
        "producer": {"script": SCRIPT, "torch_version": torch.__version__,
                     "note": "each step of the lesson replayed with real torch; see the script's docstring"},
        "lesson": lesson_id,
        "source": f"assets/lessons/{lesson_id}.{REFERENCE_LANG}.md",
        "steps": out_steps,
    }


def qdq_lines(text):
    """The lines of a printed graph or code that convert wrote (q/dq and the return)."""
    return [line for line in text.split("\n")
            if "quantize_per_tensor" in line or "return" in line.lstrip()[:7]]


def pt2e_record(lesson_id):
    """torch 2.6 (Debian trixie): the lesson's steps up to its last convert, on
    the same model and weights exported by torch 2.6 itself (it cannot read the
    newer archives), with torch.ao's real convert_pt2e. Records, per convert
    step, the q/dq lines convert wrote and the runs after it. None when the
    lesson has no convert."""
    global REAL_CONVERT
    from torch.ao.quantization.quantize_pt2e import convert_pt2e
    REAL_CONVERT = convert_pt2e
    lesson, steps = read_lesson(os.path.join(LESSON_DIR, f"{lesson_id}.{REFERENCE_LANG}.md"))
    convert_steps = [i for i, st in enumerate(steps, 1)
                     if any(a["kind"] == "convert" for a in st.get("actions", []))]
    if not convert_steps:
        return None
    graphs = {}
    for key, path in lesson["graphs"].items():
        if path.startswith("assets/fx/"):
            continue
        full = os.path.join(assetlib.REPO_ROOT, path)
        x = tuple(archive_inputs(full))

        def build(full=full, x=x):
            return torch.export.export_for_training(model_from_archive(full), x)
        graphs[key] = ExportGraph(path, build)
    out_steps = []
    for index, step in enumerate(steps[: convert_steps[-1]], start=1):
        runs = []
        for a in step.get("actions", []):
            g = graphs[a.get("graph", step["graph"])]
            action = {k: v for k, v in a.items() if k not in ("graph", "label")}
            if action["kind"] == "undo":
                g.undo()
                continue
            before = fingerprint(g)
            rec = apply_action(g, action)
            if fingerprint(g) != before:
                g.applied.append(action)
            if action["kind"] == "run" and index in convert_steps:
                runs.append(rec)
        if index in convert_steps:
            g = graphs[step["graph"]]
            out_steps.append({"index": index, "graph": step["graph"],
                              "qdq_graph_lines": qdq_lines(str(g.gm.graph)),
                              "qdq_code_lines": qdq_lines(g.gm.code),
                              "runs": runs})
    return {
        "format": FORMAT + ".pt2e",
        "version": VERSION,
        "producer": {"script": SCRIPT, "torch_version": torch.__version__,
                     "note": "the lesson's steps up to convert with torch.ao's real convert_pt2e "
                             "(torch 2.6, Debian trixie) on the same model and weights"},
        "lesson": lesson_id,
        "source": f"assets/lessons/{lesson_id}.{REFERENCE_LANG}.md",
        "steps": out_steps,
    }


def lesson_ids():
    suffix = f".{REFERENCE_LANG}.md"
    return sorted(f[: -len(suffix)] for f in os.listdir(LESSON_DIR) if f.endswith(suffix))


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def mode():
    """"sid" (torch 2.14: the lesson goldens) or "trixie" (torch 2.6: the convert cross-check)."""
    if torch_version()[:2] == TORCH_NEEDED:
        return "sid"
    if torch_version()[:2] == TORCH_PT2E:
        return "trixie"
    sys.exit(f"error: {SCRIPT} needs torch 2.14 (lesson goldens) or 2.6 (the convert_pt2e "
             f"cross-check); this is {torch.__version__}. Run it with "
             f"scripts/torch_env.sh run sid|trixie python3 {SCRIPT}")


def golden_dir(default_dir):
    """Where this mode writes: the default folder maps to pt2e/ under trixie."""
    if mode() == "trixie" and os.path.abspath(default_dir) == os.path.abspath(GOLDEN_DIR):
        return PT2E_DIR
    return default_dir


def generate(out_dir, quiet=False):
    out_dir = golden_dir(out_dir)
    make = lesson_record if mode() == "sid" else pt2e_record
    os.makedirs(out_dir, exist_ok=True)
    names = []
    for lesson_id in lesson_ids():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            record = make(lesson_id)
        if record is None:
            continue
        path = os.path.join(out_dir, f"{lesson_id}.json")
        assetlib.write_bytes_atomic(path, assetlib.json_text(record, inline_depth=5).encode("utf-8"))
        names.append(f"{lesson_id}.json")
        if not quiet:
            print(f"wrote    {assetlib.rel(path)}  ({len(record['steps'])} steps)")
    return names


def close_enough(expected, actual, path="$"):
    """Like assetlib.json_difference, but floats may differ by FLOAT_TOLERANCE (relative)."""
    if isinstance(expected, float) and isinstance(actual, float):
        if abs(expected - actual) <= FLOAT_TOLERANCE * max(1.0, abs(expected)):
            return None
        return f"{path}: expected {expected!r}, got {actual!r}"
    if isinstance(expected, dict) and isinstance(actual, dict) and list(expected) == list(actual):
        for k in expected:
            d = close_enough(expected[k], actual[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (e, a) in enumerate(zip(expected, actual)):
            d = close_enough(e, a, f"{path}[{i}]")
            if d:
                return d
        return None
    return assetlib.json_difference(expected, actual, path)


def check(_out_dir=None):
    committed_dir = golden_dir(GOLDEN_DIR)
    rel_dir = assetlib.rel(committed_dir)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        names = generate(tmp, quiet=True)
        for name in names:
            committed = os.path.join(committed_dir, name)
            rel = f"{rel_dir}/{name}"
            if not os.path.exists(committed):
                failures += 1
                print(assetlib.report_line("MISSING", rel, "not generated yet"))
                continue
            with open(committed, encoding="utf-8") as f:
                expected = json.load(f)
            with open(os.path.join(tmp, name), encoding="utf-8") as f:
                actual = json.load(f)
            diff = close_enough(expected, actual)
            failures += diff is not None
            print(assetlib.report_line("DIFF" if diff else "ok", rel, diff))
    committed = sorted(f for f in os.listdir(committed_dir) if f.endswith(".json")) \
        if os.path.isdir(committed_dir) else []
    for name in committed:
        if name not in names:
            failures += 1
            print(assetlib.report_line("STALE", f"{rel_dir}/{name}", "no lesson writes this file"))
    if failures:
        print(f"{failures} golden(s) differ; regenerate with: "
              f"scripts/torch_env.sh run {mode()} python3 {SCRIPT}")
    return 1 if failures else 0


def main(argv=None):
    return assetlib.generator_main(__doc__, GOLDEN_DIR, generate, check,
                                   check_help="regenerate into a temp folder and compare with the committed files",
                                   out_help="write DIR/<lesson>.json instead of tests/golden/lessons/", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
