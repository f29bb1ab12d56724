#!/usr/bin/env python3
"""What torch 2.14.1 prints for every lesson program, and torch's own
decomposed programs of them: tests/golden/export/<asset>.json plus
tests/golden/export/<asset>.inference.pt2 and <asset>.core_aten.pt2.

    bash scripts/torch_env.sh run sid python3 tools/export_goldens.py            # write them
    bash scripts/torch_env.sh run sid python3 tools/export_goldens.py --out DIR  # write DIR/...
    bash scripts/torch_env.sh run sid python3 tools/export_goldens.py --check    # regenerate, compare

For each asset (assets/graphs/<asset>.pt2, read back with torch.export.load)
the JSON holds the texts of five programs: the export itself, the in-memory
result of ep.run_decompositions({}) ("inference") and ep.run_decompositions()
("core_aten"), and those two read back from the .pt2 files written here
("inference_file", "core_aten_file": torch.export.load names the unused
outputs of multi-output nodes, so they print differently). pt2lab's tests
print the same programs from its own loader and its own decompositions and
compare byte for byte. See docs/FORMATS.md section 7.
"""

import os
import sys

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # before torch, as in every tools/ script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import copy  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import assetlib  # noqa: E402
import fx_json  # noqa: E402
import lesson_models  # noqa: E402
import make_assets  # noqa: E402

SCRIPT = "tools/export_goldens.py"
FORMAT = "pt2lab.export_texts"
VERSION = 1
GOLDEN_DIR = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "export")
LEVELS = {"inference": {}, "core_aten": None}  # run_decompositions argument (None: default table)


# Printer corner cases beyond the lesson models: programs pt2lab loads and prints
# (tests/golden/export/cases/<name>.pt2), compared on the export program only.
class BuiltinInput(nn.Module):
    """A forward argument named `input` (a Python builtin): codegen aliases it
    (`input_1 = input`); reshape, flatten and t are lowered to view/permute."""

    def forward(self, input):
        y = input.reshape(2, -1)
        z = torch.flatten(input, 1)
        return y + z, y.t()


class Lstm(nn.Module):
    """A multi-output ATen op pt2lab has no schema for: the node is named `lstm`
    (schema 8.20's node name), its outputs are getitems."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, batch_first=True)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return out, h


CASES = {
    "builtin_input": (BuiltinInput, (2, 3, 4)),
    "lstm": (Lstm, (2, 5, 4)),
}


def node_meta(ep) -> dict:
    """The metadata of every node as torch.export.load gives it: what pt2lab's
    inspector and print_readable's "# File:" lines show."""
    out = {}
    for node in ep.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        m = node.meta
        entry = {"stack_trace": m.get("stack_trace")}
        entry["nn_module_stack"] = [[key, path, ty if isinstance(ty, str) else
                                     f"{ty.__module__}.{ty.__qualname__}"]
                                    for key, (path, ty) in m.get("nn_module_stack", {}).items()]
        entry["source_fn_stack"] = [[name, fn if isinstance(fn, str) else repr(fn)]
                                    for name, fn in m.get("source_fn_stack", [])]
        torch_fn = m.get("torch_fn")
        entry["torch_fn"] = list(torch_fn) if torch_fn else None
        out[node.name] = entry
    return out


def program_texts(ep) -> dict:
    """Everything pt2lab prints for a program, as torch 2.14.1 prints it."""
    module = ep.module()
    return {
        "ep": str(ep),
        "graph": str(ep.graph),
        "code": ep.graph_module.code,
        "readable": ep.graph_module.print_readable(print_output=False),
        "tabular": fx_json._tabular_text(ep.graph),
        "signature": str(ep.graph_signature),
        "module_graph": str(module.graph),
        "module_code": module.code,
        "module_readable": module.print_readable(print_output=False),
    }


def decomposed_extras(asset_path: str, level: str) -> dict:
    """The asset's own extras (same model, same reference outputs), with a
    provenance that says which decomposition of which file this is."""
    _, records = assetlib.zip_records(asset_path)
    extras = {}
    for name, data in records.items():
        if name.startswith(f"extra/{make_assets.EXTRA_DIR}/"):
            extras[name[len("extra/"):]] = data.decode("utf-8")
    key = f"{make_assets.EXTRA_DIR}/manifest.json"
    manifest = json.loads(extras[key])
    call = "run_decompositions({})" if level == "inference" else "run_decompositions()"
    manifest["provenance"].update({
        "script": SCRIPT,
        "note": (f"torch.export.load(\"{assetlib.rel(asset_path)}\").{call}, saved by "
                 f"torch.export.save of torch {torch.__version__}; the reference outputs are "
                 "the asset's."),
    })
    extras[key] = assetlib.json_text(manifest)
    return extras


def generate(out_dir, quiet=False):
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    for spec in lesson_models.ASSETS:
        asset = os.path.join(make_assets.ASSETS_DIR, "graphs", f"{spec.name}.pt2")
        ep = torch.export.load(asset)
        programs = {"export": program_texts(ep)}
        programs["export"]["meta"] = node_meta(ep)
        files = {"export": assetlib.rel(asset)}
        for level, table in LEVELS.items():
            decomposed = ep.run_decompositions() if table is None else ep.run_decompositions(table)
            programs[level] = program_texts(decomposed)
            path = os.path.join(out_dir, f"{spec.name}.{level}.pt2")
            extras = decomposed_extras(asset, level)
            make_assets.write_named_archive(
                path, lambda p: torch.export.save(decomposed, p, extra_files=extras))
            programs[f"{level}_file"] = program_texts(torch.export.load(path))
            files[level] = f"tests/golden/export/{spec.name}.{level}.pt2"
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "producer": {"script": SCRIPT, "torch_version": torch.__version__},
            "asset": spec.name,
            "files": files,
            "programs": programs,
        }
        path = os.path.join(out_dir, f"{spec.name}.json")
        assetlib.write_bytes_atomic(path, assetlib.json_text(doc, inline_depth=3).encode("utf-8"))
        if not quiet:
            print(f"wrote    {spec.name}.json, {spec.name}.inference.pt2, "
                  f"{spec.name}.core_aten.pt2")
    for name, (factory, shape) in CASES.items():
        torch.manual_seed(0)
        model = factory().eval()
        example = torch.randn(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LSTM's _flat_weights note, not about the program
            exported = torch.export.export(copy.deepcopy(model), (example,))
        path = os.path.join(out_dir, "cases", f"{name}.pt2")
        make_assets.write_named_archive(path, lambda p: torch.export.save(exported, p))
        ep = torch.export.load(path)
        texts = program_texts(ep)
        texts["meta"] = node_meta(ep)
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "producer": {"script": SCRIPT, "torch_version": torch.__version__},
            "case": name,
            "description": " ".join(factory.__doc__.split()),
            "files": {"export": f"tests/golden/export/cases/{name}.pt2"},
            "programs": {"export": texts},
        }
        assetlib.write_bytes_atomic(os.path.join(out_dir, "cases", f"{name}.json"),
                                    assetlib.json_text(doc, inline_depth=3).encode("utf-8"))
        if not quiet:
            print(f"wrote    cases/{name}.json, cases/{name}.pt2")


def _listing(folder):
    """Files under folder, relative, sorted (cases/ included)."""
    found = []
    for root, _, names in os.walk(folder):
        found += [os.path.relpath(os.path.join(root, n), folder) for n in names]
    return sorted(found)


def check(_out_dir=None):
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, quiet=True)
        expected = _listing(tmp)
        committed = _listing(GOLDEN_DIR) if os.path.isdir(GOLDEN_DIR) else []
        for name in expected:
            rel_path = f"tests/golden/export/{name}"
            mine = os.path.join(GOLDEN_DIR, name)
            fresh = os.path.join(tmp, name)
            if not os.path.exists(mine):
                status, detail = "MISSING", "not committed"
            elif name.endswith(".json"):
                status, detail = fx_json.compare_fx_files(mine, fresh)
            else:
                detail = make_assets.pt2_difference(mine, fresh)
                status = "DIFF" if detail else "ok"
            failures += status != "ok"
            print(assetlib.report_line(status, rel_path, detail))
        for name in sorted(set(committed) - set(expected)):
            failures += 1
            print(assetlib.report_line("STALE", f"tests/golden/export/{name}",
                                       "no asset writes it"))
    return assetlib.finish_check(failures, "golden(s)", SCRIPT)


def main(argv=None):
    return assetlib.generator_main(__doc__, GOLDEN_DIR, generate, check,
                                   check_help="regenerate into a temp folder and compare with tests/golden/export/",
                                   out_help="write DIR/<asset>.json and DIR/<asset>.<level>.pt2 instead", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
