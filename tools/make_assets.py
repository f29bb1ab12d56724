#!/usr/bin/env python3
"""Regenerates pt2lab's lesson assets: assets/graphs/<name>.pt2 (torch.export
archives) and assets/fx/<name>.json (symbolic_trace graphs).

    /usr/bin/python3 tools/make_assets.py            # write assets/
    /usr/bin/python3 tools/make_assets.py --out DIR  # write DIR/graphs, DIR/fx
    /usr/bin/python3 tools/make_assets.py --check    # regenerate into a temp dir, compare

With torch >= 2.8 the archives come from the real torch.export; with older
torch (Debian's 1.13 here) pt2_emulator.py writes what torch 2.11 would. An
archive made by the real exporter is never replaced by the emulation.
See docs/FORMATS.md, "Regenerating assets".
"""

import os
import sys

# Seeded data depends on the CPU kernels torch picks; pin them before torch loads.
os.environ["ATEN_CPU_CAPABILITY"] = "default"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

import torch  # noqa: E402

import assetlib  # noqa: E402
import fx_json  # noqa: E402
import lesson_models  # noqa: E402
import pt2_emulator  # noqa: E402

SCRIPT = "tools/make_assets.py"
ASSETS_DIR = os.path.join(assetlib.REPO_ROOT, "assets")
REAL_EXPORT_MIN = (2, 8)
EXTRA_DIR = "pt2lab"  # extra/pt2lab/... inside each archive

EMULATION_NOTE = (
    "Written by pt2lab's emulation of torch 2.11's torch.export with torch {torch} "
    "(no torch.export there): weights, inputs, outputs, ops, arguments, shapes and "
    "the file layout are real or follow torch's source; node metadata strings "
    "(stack_trace, nn_module_stack, source_fn_stack, torch_fn) are predictions.")
REAL_NOTE = "Written by torch.export.export and torch.export.save of torch {torch}."


def torch_version() -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2])


def real_export_available() -> bool:
    return torch_version() >= REAL_EXPORT_MIN and hasattr(torch, "export")


# ---------------------------------------------------------------------------
# extra/pt2lab/: inputs, eager reference outputs, buffers after, manifest
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


def extra_records(spec, model, example, output_names, made_by):
    """The files of extra/pt2lab/ as (name under extra/, bytes), manifest last."""
    output, buffers = eager_reference(model, example)
    folder = f"extra/{EXTRA_DIR}"
    files = [("input_0.npy", assetlib.npy_bytes(example.numpy())),
             ("output_0.npy", assetlib.npy_bytes(output.numpy()))]
    buffers_after = []
    for i, (target, value) in enumerate(buffers):
        files.append((f"buffer_after_{i}.npy", assetlib.npy_bytes(value.numpy())))
        buffers_after.append({"target": target, "file": f"{folder}/buffer_after_{i}.npy"})

    provenance = {"made_by": made_by, "torch_version": torch.__version__}
    if made_by == "emulation":
        provenance["emulates_torch"] = pt2_emulator.EMULATED_TORCH
    provenance.update({
        "script": SCRIPT,
        "seed": spec.seed,
        "cpu_capability": os.environ["ATEN_CPU_CAPABILITY"],
        "model_class": type(model).__qualname__,
        "mode": spec.mode,
        "note": (EMULATION_NOTE if made_by == "emulation" else REAL_NOTE).format(
            torch=torch.__version__),
    })
    manifest = {
        "format": "pt2lab.extra",
        "version": 1,
        "provenance": provenance,
        "inputs": [{"name": "x", "file": f"{folder}/input_0.npy"}],
        "outputs": [{"name": output_names[0], "file": f"{folder}/output_0.npy"}],
        "buffers_after": buffers_after,
    }
    files.append(("manifest.json", assetlib.json_text(manifest).encode("utf-8")))
    return [(f"{EXTRA_DIR}/{name}", data) for name, data in files]


# ---------------------------------------------------------------------------
# One archive
# ---------------------------------------------------------------------------


def _write_named_archive(path, write_fn):
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


def write_emulated_archive(spec, path):
    model, example = lesson_models.build_asset_model(spec)
    program = pt2_emulator.emulate_export(model, (example,))
    _check_emulation_numerics(spec, program, model, example)
    version = (f"{pt2_emulator.EMULATED_TORCH} (emulated by pt2lab {SCRIPT} "
               f"with torch {torch.__version__})")
    weights, weights_config = pt2_emulator.weight_records(program)
    records = pt2_emulator.package_records(
        weights, weights_config,
        pt2_emulator.model_json_bytes(program, (example,), version),
        pt2_emulator.sample_inputs_bytes((example,)),
        extra_records(spec, model, example, [r.name for r in program.outputs], "emulation"))
    _write_named_archive(path, lambda p: pt2_emulator.write_pt2_archive(p, records))


def _check_emulation_numerics(spec, program, model, example):
    """The emulated ATen graph, run with torch 1.13, must give the eager output."""
    expected, _ = eager_reference(model, example)
    got = program.values[program.outputs[0].name].detach()
    diff = float((expected - got).abs().max())
    if diff > assetlib.OUTPUT_TOLERANCE:
        raise AssertionError(f"{spec.name}: emulated graph output differs from eager by {diff}")


def write_real_archive(spec, path):
    """torch >= 2.8: real export. torch.export.save's extra_files only takes
    text (it writes extra/<key> with write_string), so the archive is written
    with the same PT2ArchiveWriter sequence package_pt2 uses, plus write_bytes
    for the binary .npy extras."""
    from torch.export.pt2_archive._package import PT2ArchiveWriter, _package_exported_programs

    model, example = lesson_models.build_asset_model(spec)
    ep = torch.export.export(copy.deepcopy(model), (example,))
    extra = extra_records(spec, model, example, list(ep.graph_signature.user_outputs),
                          "torch.export")

    def write(p):
        with PT2ArchiveWriter(p) as writer:
            _package_exported_programs(writer, {"model": ep})
            for name, data in extra:
                writer.write_bytes(f"extra/{name}", data)

    _write_named_archive(path, write)


def committed_maker(name):
    """`made_by` and torch version of the committed archive, or (None, None)."""
    path = os.path.join(ASSETS_DIR, "graphs", f"{name}.pt2")
    if not os.path.exists(path):
        return None, None
    _, records = assetlib.zip_records(path)
    manifest = records.get(f"extra/{EXTRA_DIR}/manifest.json")
    if manifest is None:
        return None, None
    provenance = json.loads(manifest)["provenance"]
    return provenance.get("made_by"), provenance.get("torch_version")


def real_asset_protected(name):
    """A committed real torch.export archive that this torch cannot remake."""
    made_by, version = committed_maker(name)
    if made_by == "torch.export" and not real_export_available():
        return version
    return None


# ---------------------------------------------------------------------------
# Generate / check
# ---------------------------------------------------------------------------


def generate(out_dir, quiet=False):
    """Writes every asset under out_dir; returns {relative path: skip reason}."""
    skipped = {}
    if not real_export_available():
        pt2_emulator.check_schemas_against_torch()
    for spec in lesson_models.ASSETS:
        rel_pt2 = f"graphs/{spec.name}.pt2"
        protected = real_asset_protected(spec.name)
        if protected:
            skipped[rel_pt2] = f"made by torch.export {protected}; needs torch >= 2.8"
            if not quiet:
                print(f"skipped  {rel_pt2} ({skipped[rel_pt2]})")
        else:
            path = os.path.join(out_dir, rel_pt2)
            if real_export_available():
                write_real_archive(spec, path)
                how = f"torch.export {torch.__version__}"
            else:
                write_emulated_archive(spec, path)
                how = f"emulation of torch {pt2_emulator.EMULATED_TORCH}"
            if not quiet:
                print(f"wrote    {rel_pt2} ({how})")

        model, _ = lesson_models.build_asset_model(spec)
        record = fx_json.fx_graph_record(spec.name, model, SCRIPT)
        rel_fx = f"fx/{spec.name}.json"
        assetlib.write_bytes_atomic(os.path.join(out_dir, rel_fx),
                                    assetlib.json_text(record).encode("utf-8"))
        if not quiet:
            print(f"wrote    {rel_fx}")
    return skipped


_TOLERANT_RECORD = re.compile(rf"extra/{EXTRA_DIR}/(output|buffer_after)_\d+\.npy")


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
            diff = assetlib.json_difference(json.loads(want), json.loads(got))
        elif _TOLERANT_RECORD.fullmatch(name):
            diff = assetlib.npy_difference(want, got, assetlib.OUTPUT_TOLERANCE)
        else:
            diff = None if want == got else f"bytes differ ({len(want)} vs {len(got)} bytes)"
        if diff:
            return f"{name}: {diff}"
    return None


def check(_out_dir=None):
    """Regenerates into a temp folder and compares with assets/. Returns 0 or 1."""
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        skipped = generate(tmp, quiet=True)
        for spec in lesson_models.ASSETS:
            for rel_path in (f"graphs/{spec.name}.pt2", f"fx/{spec.name}.json"):
                committed = os.path.join(ASSETS_DIR, rel_path)
                fresh = os.path.join(tmp, rel_path)
                if rel_path in skipped:
                    status, detail = "skipped", skipped[rel_path]
                elif rel_path.endswith(".json"):
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
