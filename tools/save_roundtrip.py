#!/usr/bin/env python3
"""Does real torch read what pt2lab saves? Every lesson graph (and the model
zoo's exports, when build/zoo holds them) is saved by `pt2lab save` as it
loads, after run_decompositions at both levels, after prepare_pt2e and after
convert_pt2e; then torch 2.14.1's torch.export.load reads each file, runs
ep.module() on the archive's own sample inputs and compares with pt2lab.

Two steps, because pt2lab runs on this machine and torch in the sid root:

    python3 tools/save_roundtrip.py write [--zoo] [--out DIR] [--cli PATH]
    bash scripts/torch_env.sh run sid python3 tools/save_roundtrip.py check [--out DIR]

`write` (no torch; plain Python) runs, for each file and action,
`pt2lab save FILE DIR/<name>.<action>.pt2 ...`, then `pt2lab graph` and
`pt2lab code --module` of the saved file and `pt2lab run --module --out` on
its sample inputs, and lists what it made in DIR/manifest.json. `check`
compares, per saved file: print(ep.graph) and ep.module().code with pt2lab's
printouts (exactly), ep.module()'s outputs with pt2lab's (float outputs within
1e-5, 1e-4 for the zoo; a converted program's within one step of the
quantization scale of the dequantize that makes the output, three for the zoo's
deep networks, since pt2lab's float convolution and torch's oneDNN round
differently; integers exactly).
prepare_pt2e's result must be refused by pt2lab, as torch.export refuses to
export a model with observers (one without any, an nn.LSTM's, is checked as any
saved file); torch 2.14 has no prepare_pt2e, so the third
step checks that refusal in the trixie root's torch 2.6 (HistogramObserver's
forward branches on its data):

    bash scripts/torch_env.sh run trixie python3 tools/save_roundtrip.py refusal

The expected values are torch's; nothing is compared with a snapshot of pt2lab.
"""

import argparse
import glob
import json
import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = "tools/save_roundtrip.py"
DEFAULT_OUT = os.path.join(REPO_ROOT, "build", "save_roundtrip")
DEFAULT_CLI = os.path.join(REPO_ROOT, "build", "native", "src", "cli", "pt2lab")
# action -> `pt2lab save` options
ACTIONS = {
    "export": [],
    "inference": ["--decompose", "inference"],
    "core_aten": ["--decompose", "core"],
    "prepare": ["--prepare"],
    "convert": ["--convert"],
}
REFUSED = {"prepare": "a prepared model has no ExportedProgram"}
FLOAT_TOLERANCE = {"lesson": 1e-5, "zoo": 1e-4}
# A converted program's outputs: quantization steps of the output's scale. One rounding
# difference of pt2lab's float convolution against torch's oneDNN moves a value across a
# quantization boundary; over the zoo's deep networks (DenseNet-121: 120 quantized
# convolutions) a few such moves add up (seen: a third of the outputs one step off, 0.3 %
# two steps).
QUANT_STEPS = {"lesson": 1, "zoo": 3}


def sources(zoo: bool):
    """(name, kind, path) of every file to save: lesson graphs, then zoo exports."""
    out = [(os.path.basename(p)[:-4], "lesson", p)
           for p in sorted(glob.glob(os.path.join(REPO_ROOT, "assets", "graphs", "*.pt2")))]
    if zoo:
        for p in sorted(glob.glob(os.path.join(REPO_ROOT, "build", "zoo", "*", "model.pt2"))):
            out.append((os.path.basename(os.path.dirname(p)), "zoo", p))
    return out


def rel(path: str) -> str:
    return os.path.relpath(path, REPO_ROOT).replace(os.sep, "/")


def pt2lab(cli, *args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


def observed(cli: str, pt2: str) -> bool:
    """Whether the saved module holds an observer: a prepared module without one (XNNPACKQuantizer
    annotates nothing in an nn.LSTM or nn.GRU) is the export's and exports again in torch."""
    return "activation_post_process" in pt2lab(cli, "code", pt2, "--module").stdout


def write(out_dir: str, cli: str, zoo: bool) -> int:
    """Saves every source after every action with pt2lab; DIR/manifest.json lists them."""
    if not os.path.exists(cli):
        sys.exit(f"error: no pt2lab at {cli}; build it: cmake --build --preset native --target pt2lab")
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, "*")):
        os.remove(old)
    entries, failures = [], 0
    for name, kind, src in sources(zoo):
        for action, opts in ACTIONS.items():
            base = f"{name}.{action}"
            pt2 = os.path.join(out_dir, base + ".pt2")
            entry = {"name": base, "kind": kind, "source": rel(src), "action": action}
            saved = pt2lab(cli, "save", src, pt2, *opts)
            if action in REFUSED and saved.returncode == 0 and not observed(cli, pt2):
                pass  # prepare placed no observer (nn.LSTM, nn.GRU): torch reads it back as any
            elif action in REFUSED:
                entry["refused"] = saved.stderr.strip()
                ok = saved.returncode == 1 and REFUSED[action] in saved.stderr
                print(f"{'refused ' if ok else 'FAILED  '} {base}" +
                      ("" if ok else f": expected a refusal, got {saved.returncode}: {saved.stderr.strip()}"))
                failures += not ok
                entries.append(entry)
                continue
            if saved.returncode != 0:
                print(f"FAILED   {base}: pt2lab save: {saved.stderr.strip()}")
                failures += 1
                continue
            graph = pt2lab(cli, "graph", pt2)
            code = pt2lab(cli, "code", pt2, "--module")
            run = pt2lab(cli, "run", pt2, "--module", "--out", os.path.join(out_dir, base + ".out.npy"))
            for what, r in (("graph", graph), ("code --module", code), ("run --module", run)):
                if r.returncode != 0:
                    print(f"FAILED   {base}: pt2lab {what}: {r.stderr.strip()}")
                    failures += 1
            entry.update({
                "file": base + ".pt2",
                "graph": graph.stdout,
                "module_code": code.stdout,
                "outputs": sorted(os.path.basename(p) for p in
                                  glob.glob(os.path.join(out_dir, base + ".out*.npy"))),
            })
            entries.append(entry)
            print(f"saved    {base}")
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"format": "pt2lab.save_roundtrip", "version": 1, "entries": entries}, f,
                  indent=1)
    return 1 if failures else 0


def check(out_dir: str) -> int:
    """torch.export.load of every saved file: graph, module code and outputs vs pt2lab's."""
    os.environ["ATEN_CPU_CAPABILITY"] = "default"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import numpy as np
    import torch
    import torch.ao.quantization.fx._decomposed  # noqa: F401  registers quantized_decomposed ops

    import assetlib
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    path = os.path.join(out_dir, "manifest.json")
    if not os.path.exists(path):
        sys.exit(f"error: no {rel(path)}; run `python3 {SCRIPT} write` first")
    with open(path) as f:
        entries = json.load(f)["entries"]
    failures = 0
    for e in entries:
        name = e["name"]
        if "refused" in e:
            print(assetlib.report_line("ok", name, "") + f"  (refused: {REFUSED[e['action']]})")
            continue
        problems = []
        try:
            ep = torch.export.load(os.path.join(out_dir, e["file"]))
        except Exception as exc:  # noqa: BLE001  any load failure is the finding
            print(f"DIFF     {name}: torch.export.load failed: {type(exc).__name__}: "
                  f"{str(exc).splitlines()[0] if str(exc) else ''}")
            failures += 1
            continue
        graph = str(ep.graph) + "\n"
        if graph != e["graph"]:
            problems.append("print(ep.graph) differs: " + first_difference(graph, e["graph"]))
        module = ep.module()
        code = module.code + "\n"
        if code != e["module_code"]:
            problems.append("ep.module().code differs: " + first_difference(code, e["module_code"]))
        args, kwargs = ep.example_inputs
        with torch.no_grad():
            out = module(*args, **kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        ours = [np.load(os.path.join(out_dir, n)) for n in e["outputs"]]
        if len(outs) != len(ours):
            problems.append(f"{len(outs)} outputs, pt2lab wrote {len(ours)}")
        scales = output_scales(ep)
        worst = 0.0
        for k, (t, a) in enumerate(zip(outs, ours)):
            t = t.detach().numpy()
            if t.dtype != a.dtype or t.shape != a.shape:
                problems.append(f"output {k}: torch {t.dtype}{list(t.shape)}, pt2lab {a.dtype}{list(a.shape)}")
                continue
            if np.issubdtype(t.dtype, np.floating):
                tol = FLOAT_TOLERANCE[e["kind"]]
                if e["action"] == "convert" and k < len(scales) and scales[k]:
                    tol = max(tol, QUANT_STEPS[e["kind"]] * scales[k] * 1.01)
                diff = float(np.max(np.abs(t.astype(np.float64) - a.astype(np.float64)))) if t.size else 0.0
                worst = max(worst, diff)
                if not diff <= tol:
                    problems.append(f"output {k}: max |diff| {diff:.3g} > {tol:.3g}")
            elif not np.array_equal(t, a):
                problems.append(f"output {k}: values differ")
        if problems:
            failures += 1
            print(f"DIFF     {name}: " + "; ".join(problems))
        else:
            print(assetlib.report_line("ok", name, "") + f"  (outputs max |diff| {worst:.2g})")
    if failures:
        print(f"{failures} of {len(entries)} saved files differ from what torch reads")
    return 1 if failures else 0


def refusal() -> int:
    """torch 2.6's torch.export.export of every eval lesson model after prepare_pt2e and
    one calibration batch must fail, as pt2lab's save refuses a prepared model."""
    import copy
    import warnings
    os.environ["ATEN_CPU_CAPABILITY"] = "default"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    from torch.ao.quantization.quantize_pt2e import prepare_pt2e
    from torch.ao.quantization.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)

    import assetlib
    import lesson_models
    assetlib.require_torch(torch.__version__, assetlib.TRIXIE_TORCH, SCRIPT)
    failures = 0
    for spec in lesson_models.ASSETS:
        if spec.mode != "eval":
            continue
        model, x = lesson_models.load_asset_model(spec.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = torch.export.export_for_training(copy.deepcopy(model), (x,)).module()
            prepared = prepare_pt2e(module, XNNPACKQuantizer().set_global(
                get_symmetric_quantization_config()))
            with torch.no_grad():
                prepared(x)
            try:
                torch.export.export(prepared, (x,))
                why = None
            except Exception as exc:  # noqa: BLE001  the refusal is the expected outcome
                why = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        if why:
            print(assetlib.report_line("ok", f"{spec.name}.prepare", "") + f"  (torch: {why})")
        else:
            print(f"DIFF     {spec.name}.prepare: torch 2.6 exported the prepared model, "
                  "pt2lab refuses to save it")
            failures += 1
    return 1 if failures else 0


def output_scales(ep):
    """Per user output: the scale of the dequantize_per_tensor that makes it, else None."""
    out = [n for n in ep.graph.nodes if n.op == "output"][0]
    values = out.args[0] if isinstance(out.args[0], (tuple, list)) else [out.args[0]]
    user = [s.arg.name for s in ep.graph_signature.output_specs if s.kind.name == "USER_OUTPUT"]
    scales = []
    for v in values:
        if getattr(v, "name", None) not in user:
            continue
        ok = getattr(v, "target", None) is not None and "dequantize_per_tensor" in str(v.target)
        scales.append(float(v.args[1]) if ok else None)
    return scales


def first_difference(expected: str, actual: str) -> str:
    a, b = expected.splitlines(), actual.splitlines()
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {k + 1}: torch {x!r}, pt2lab {y!r}"
    return f"torch has {len(a)} lines, pt2lab {len(b)}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    w = sub.add_parser("write", help="save every file with pt2lab (run on this machine)")
    w.add_argument("--out", metavar="DIR", default=DEFAULT_OUT)
    w.add_argument("--cli", metavar="PATH", default=DEFAULT_CLI, help="the pt2lab binary")
    w.add_argument("--zoo", action="store_true", help="also the zoo's exports in build/zoo")
    c = sub.add_parser("check", help="read them with torch.export.load (run in the sid root)")
    c.add_argument("--out", metavar="DIR", default=DEFAULT_OUT)
    sub.add_parser("refusal", help="torch 2.6 refuses to export a prepared model (trixie root)")
    args = parser.parse_args(argv)
    if args.step == "refusal":
        return refusal()
    if args.step == "write":
        return write(os.path.abspath(args.out), args.cli, args.zoo)
    return check(os.path.abspath(args.out))


if __name__ == "__main__":
    sys.exit(main())
