#!/usr/bin/env python3
"""Regenerates pt2lab's lesson assets with real PyTorch 2.14.1:
assets/graphs/<name>.pt2 (torch.export.export + torch.export.save) and
assets/fx/<name>.json (torch.fx.symbolic_trace graphs).

    bash scripts/torch_env.sh run sid python3 tools/make_assets.py            # write assets/
    bash scripts/torch_env.sh run sid python3 tools/make_assets.py --out DIR  # DIR/graphs, DIR/fx
    bash scripts/torch_env.sh run sid python3 tools/make_assets.py --check    # regenerate, compare

pt2lab's extras (eager reference outputs, train-mode buffers after one
forward, a provenance manifest) travel through torch.export.save's
extra_files, so they land at extra/pt2lab/ in the archive; the example inputs
are torch's own data/sample_inputs/model.pt. See docs/FORMATS.md section 4.
"""

import os
import sys

# Seeded data depends on the CPU kernels torch picks; pin them before torch loads.
os.environ["ATEN_CPU_CAPABILITY"] = "default"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import base64  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

import torch  # noqa: E402

import assetlib  # noqa: E402
import fx_json  # noqa: E402
import lesson_models  # noqa: E402

SCRIPT = "tools/make_assets.py"
ASSETS_DIR = os.path.join(assetlib.REPO_ROOT, "assets")
EXTRA_DIR = "pt2lab"  # extra_files keys "pt2lab/..." -> extra/pt2lab/... in the archive

REAL_NOTE = ("Written by torch.export.export and torch.export.save of torch {torch}; "
             "pt2lab's extras came in through save's extra_files.")


# ---------------------------------------------------------------------------
# extra/pt2lab/: eager reference outputs, buffers after, manifest
# ---------------------------------------------------------------------------


def eager_reference(model, example):
    """Runs the model eagerly in its export mode on a deep copy (so a train-mode
    forward does not touch the weights that get exported). Returns (output,
    buffers after the forward, or [] for eval)."""
    twin = copy.deepcopy(model)
    with torch.no_grad():
        output = twin(example)
    buffers = list(twin.named_buffers()) if twin.training else []
    return output, buffers


def npy_text(array) -> str:
    """extra_files holds text only: an .npy file as base64 (RFC 4648, one line)."""
    return base64.b64encode(assetlib.npy_bytes(array)).decode("ascii")


def extra_files(spec, model, example, output_names):
    """torch.export.save's extra_files: {"pt2lab/<name>": text}, manifest last."""
    output, buffers = eager_reference(model, example)
    folder = f"extra/{EXTRA_DIR}"
    files = {"output_0.npy.b64": npy_text(output.numpy())}
    buffers_after = []
    for i, (target, value) in enumerate(buffers):
        files[f"buffer_after_{i}.npy.b64"] = npy_text(value.numpy())
        buffers_after.append({"target": target, "file": f"{folder}/buffer_after_{i}.npy.b64"})
    manifest = {
        "format": "pt2lab.extra",
        "version": 2,
        "provenance": {
            "made_by": "torch.export",
            "torch_version": torch.__version__,
            "script": SCRIPT,
            "seed": spec.seed,
            "cpu_capability": os.environ["ATEN_CPU_CAPABILITY"],
            "model_class": type(model).__qualname__,
            "mode": spec.mode,
            "note": REAL_NOTE.format(torch=torch.__version__),
        },
        "inputs": "data/sample_inputs/model.pt",
        "outputs": [{"name": output_names[0], "file": f"{folder}/output_0.npy.b64"}],
        "buffers_after": buffers_after,
    }
    files["manifest.json"] = assetlib.json_text(manifest)
    return {f"{EXTRA_DIR}/{name}": text for name, text in files.items()}


# ---------------------------------------------------------------------------
# One archive
# ---------------------------------------------------------------------------


def write_named_archive(path, write_fn):
    """torch's zip writer names the archive's root folder after the file, so
    write under the final file name in a scratch folder, then move it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    scratch = tempfile.mkdtemp(dir=os.path.dirname(path))
    try:
        tmp_path = os.path.join(scratch, os.path.basename(path))
        write_fn(tmp_path)
        os.replace(tmp_path, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def export_asset(spec):
    """(model in its export mode, example input, ExportedProgram) of one asset."""
    model, example = lesson_models.build_asset_model(spec)
    ep = torch.export.export(copy.deepcopy(model), (example,))
    return model, example, ep


def write_archive(spec, path):
    model, example, ep = export_asset(spec)
    extras = extra_files(spec, model, example, list(ep.graph_signature.user_outputs))
    write_named_archive(path, lambda p: torch.export.save(ep, p, extra_files=extras))


# ---------------------------------------------------------------------------
# Generate / check
# ---------------------------------------------------------------------------


def generate(out_dir, quiet=False):
    """Writes every asset under out_dir."""
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    for spec in lesson_models.ASSETS:
        rel_pt2 = f"graphs/{spec.name}.pt2"
        write_archive(spec, os.path.join(out_dir, rel_pt2))
        if not quiet:
            print(f"wrote    {rel_pt2} (torch.export {torch.__version__})")
        model, _ = lesson_models.build_asset_model(spec)
        record = fx_json.fx_graph_record(spec.name, model, SCRIPT)
        rel_fx = f"fx/{spec.name}.json"
        assetlib.write_bytes_atomic(os.path.join(out_dir, rel_fx),
                                    assetlib.json_text(record).encode("utf-8"))
        if not quiet:
            print(f"wrote    {rel_fx}")


_TOLERANT_RECORD = re.compile(rf"extra/{EXTRA_DIR}/(output|buffer_after)_\d+\.npy\.b64")


# torch's from_node metadata (decomposed programs) records id() of the graph a node
# came from: an object address, different on every run, compared by pattern only.
_GRAPH_ID = re.compile(r'"graph_id": \d+')


def _without_graph_ids(value):
    if isinstance(value, str):
        return _GRAPH_ID.sub('"graph_id": 0', value)
    if isinstance(value, list):
        return [_without_graph_ids(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_graph_ids(v) for k, v in value.items()}
    return value


def pt2_difference(expected_path, actual_path):
    """First difference between two archives, record by record, or None."""
    root_e, expected = assetlib.zip_records(expected_path)
    root_a, actual = assetlib.zip_records(actual_path)
    if root_e != root_a:
        return f"root folder {root_a!r}, expected {root_e!r}"
    if list(expected) != list(actual):
        missing = [n for n in expected if n not in actual]
        extra = [n for n in actual if n not in expected]
        if missing or extra:
            return f"records missing {missing}, unexpected {extra}"
        return "record order differs"
    for name, want in expected.items():
        got = actual[name]
        if name == ".data/serialization_id":
            # Derived from all records, so it follows output values within tolerance.
            diff = None if re.fullmatch(rb"\d{40}", got) else f"not 40 digits: {got!r}"
        elif name.endswith(".json"):
            diff = assetlib.json_difference(_without_graph_ids(json.loads(want)),
                                            _without_graph_ids(json.loads(got)))
        elif _TOLERANT_RECORD.fullmatch(name):
            diff = assetlib.npy_difference(base64.b64decode(want), base64.b64decode(got),
                                           assetlib.OUTPUT_TOLERANCE)
        else:
            diff = None if want == got else f"bytes differ ({len(want)} vs {len(got)} bytes)"
        if diff:
            return f"{name}: {diff}"
    return None


def check(_out_dir=None):
    """Regenerates into a temp folder and compares with assets/. Returns 0 or 1."""
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, quiet=True)
        for spec in lesson_models.ASSETS:
            for rel_path in (f"graphs/{spec.name}.pt2", f"fx/{spec.name}.json"):
                committed = os.path.join(ASSETS_DIR, rel_path)
                fresh = os.path.join(tmp, rel_path)
                if rel_path.endswith(".json"):
                    status, detail = fx_json.compare_fx_files(committed, fresh)
                elif not os.path.exists(committed):
                    status, detail = "MISSING", "not committed"
                else:
                    detail = pt2_difference(committed, fresh)
                    status = "DIFF" if detail else "ok"
                failures += status in ("DIFF", "MISSING")
                print(assetlib.report_line(status, rel_path, detail))
    return assetlib.finish_check(failures, "asset(s)", SCRIPT)


def main(argv=None):
    return assetlib.generator_main(__doc__, ASSETS_DIR, generate, check,
                                   check_help="regenerate into a temp folder and compare with assets/",
                                   out_help="write DIR/graphs and DIR/fx instead of assets/", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
