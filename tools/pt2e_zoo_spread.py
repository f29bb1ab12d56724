#!/usr/bin/env python3
"""How far torch 2.6's own PT2E-converted zoo CNNs move between torch's own CPU settings:
the yardstick for pt2lab's one- and two-step differences from tests/golden/pt2e_zoo/.
Prints a table; writes nothing.

    bash scripts/torch_env.sh run trixie python3 tools/pt2e_zoo_spread.py [names...]

Each model (all of tools/pt2e_zoo_goldens.py's MODELS, or the names given) is built,
exported, prepared, calibrated and converted by pt2e_zoo_goldens.model_record itself,
under the golden's own settings (ATEN_CPU_CAPABILITY=default, oneDNN capped at AVX2 by
scripts/torch_env.sh, torch.set_num_threads(1)); the calibrated prepared module and the
converted module are caught on their way into and out of convert_pt2e. The converted
output must equal the committed tests/golden/pt2e_zoo/<name>/converted_output.npy bit for
bit and the last scale the committed one (a model where they do not is marked "!"); the
prepared output is reported against the committed one (it may differ in its last bits).
GoogLeNet needs the zoo cache's build/zoo/googlenet/model.pt2 and is skipped without it.

Both modules are then saved (torch.save, in a temporary folder) and run on the sample
input again in one fresh process per ATEN_CPU_CAPABILITY (default, avx2, avx512) and
oneDNN ISA cap (AVX2 as the root pins it, or none: the machine's own), set before torch is
imported, each with torch.backends.mkldnn on and off (off: ATen's native convolution; run
in the AVX2-capped process only, oneDNN being unused) and 1 and 2 threads. With mkldnn on,
torch 2.6 still gives oneDNN only some convolutions of these batch-1 64x64 inputs (its own
heuristic); the rest run through ATen's Slow2d (im2col and a GEMM) either way. The
converted module keeps the golden's qparams throughout, so only torch's float arithmetic
changes. Per model and setting the table gives the converted output's largest |difference|
from the committed one in quantization steps (the last observer's scale,
observers[-1]["scale"] of tests/golden/pt2e_zoo/<name>.json) and how many output values
differ; and the same for the prepared (float, observers passing through) output against
the prepared output of the golden's own settings in this run, in the same steps. See
docs/FORMATS.md section 9.
"""

import os
import sys

WORKER = len(sys.argv) > 1 and sys.argv[1] == "--worker"
if not WORKER:
    os.environ["ATEN_CPU_CAPABILITY"] = "default"  # before torch, as in every tools/ script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

SCRIPT = "tools/pt2e_zoo_spread.py"
CAPABILITIES = ["default", "avx2", "avx512"]  # ATEN_CPU_CAPABILITY
ONEDNN_CAPS = ["AVX2", None]  # ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA; None: unset
THREADS = [1, 2]
GOLDEN_SETTING = ("default", "AVX2", True, 1)


def setting_label(cap, isa, mkldnn, threads) -> str:
    backend = f"onednn<={isa or 'native'}" if mkldnn else "aten-conv"
    return f"{cap}/{backend}/t{threads}"


# -------------------------------------------------------------------------------------------
# worker: one fresh process per (ATEN_CPU_CAPABILITY, oneDNN cap), env set by the parent


def worker(work_dir: str, names) -> int:
    import copy
    import warnings

    import numpy as np
    import torch

    cap = os.environ.get("ATEN_CPU_CAPABILITY", "")
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA")
    reported = torch.backends.cpu.get_cpu_capability()
    for name in names:
        folder = os.path.join(work_dir, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            converted = torch.load(os.path.join(folder, "converted.pt"), weights_only=False)
            prepared = torch.load(os.path.join(folder, "prepared.pt"), weights_only=False)
        x = torch.from_numpy(np.load(os.path.join(folder, "input.npy")))
        want_q = np.load(os.path.join(folder, "converted_output.npy"))
        want_f = np.load(os.path.join(folder, "prepared_output.npy"))
        step = json.load(open(os.path.join(folder, "step.json")))["step"]
        for mkldnn in ([True, False] if isa == "AVX2" else [True]):
            for threads in THREADS:
                torch.set_num_threads(threads)
                with torch.no_grad(), torch.backends.mkldnn.flags(enabled=mkldnn):
                    got_q = converted(x).numpy()
                    # on a copy: running the prepared module feeds its observers
                    got_f = copy.deepcopy(prepared)(x).numpy()
                dq = np.abs(got_q.astype(np.float64) - want_q.astype(np.float64))
                df = np.abs(got_f.astype(np.float64) - want_f.astype(np.float64))
                print(json.dumps({
                    "model": name, "cap": cap, "isa": isa, "mkldnn": mkldnn,
                    "threads": threads, "reported": reported,
                    "q_steps": float(dq.max()) / step, "q_diff": int((got_q != want_q).sum()),
                    "f_steps": float(df.max()) / step, "f_diff": int((got_f != want_f).sum()),
                    "size": int(want_q.size)}), flush=True)
    return 0


# -------------------------------------------------------------------------------------------
# parent: the golden's own pipeline, then the workers


def golden_modules(name: str, folder: str) -> dict:
    """Runs pt2e_zoo_goldens.model_record (the golden's own code, seeds and batches) and
    saves the calibrated prepared module, the converted module and the sample input under
    folder; returns what it checked against the committed files."""
    import copy

    import numpy as np
    import torch

    import pt2e_zoo_goldens as pzg

    caught = {}
    real_convert, real_zoo_model = pzg.convert_pt2e, pzg.zoo_model

    def convert_pt2e(prepared, *args, **kwargs):
        caught["prepared"] = copy.deepcopy(prepared)  # calibrated; convert_pt2e edits it
        caught["converted"] = real_convert(prepared, *args, **kwargs)
        return caught["converted"]

    def zoo_model(model_name):
        model, x, entry = real_zoo_model(model_name)
        caught["x"] = x
        return model, x, entry

    pzg.convert_pt2e, pzg.zoo_model = convert_pt2e, zoo_model
    try:
        files = {}
        record = pzg.model_record(name, files)
    finally:
        pzg.convert_pt2e, pzg.zoo_model = real_convert, real_zoo_model
    golden = os.path.join(pzg.GOLDEN_DIR, name)
    with open(os.path.join(pzg.GOLDEN_DIR, f"{name}.json"), encoding="utf-8") as f:
        committed = json.load(f)
    step = committed["observers"][-1]["scale"]
    status = {}
    for key in ("converted_output", "prepared_output"):
        with open(os.path.join(golden, f"{key}.npy"), "rb") as f:
            status[key] = f.read() == files[f"{name}/{key}.npy"]
    shutil.copy(os.path.join(golden, "converted_output.npy"),
                os.path.join(folder, "converted_output.npy"))
    # the prepared (float) output of this run, the baseline of the float spread: the
    # committed one may differ in its last bits (checked within 1e-5 by --check)
    with open(os.path.join(folder, "prepared_output.npy"), "wb") as f:
        f.write(files[f"{name}/prepared_output.npy"])
    status["step"] = record["observers"][-1]["scale"] == step
    status["prepared_diff"] = float(np.abs(
        np.load(os.path.join(golden, "prepared_output.npy")).astype(np.float64)
        - np.load(os.path.join(folder, "prepared_output.npy")).astype(np.float64)).max())
    for key in ("converted", "prepared"):
        gm = caught[key]
        # torch.export's module() pins train/eval as bound methods in the instance's
        # __dict__, which pickle cannot take (they hold the module itself); the class's
        # own do (the workers only run forward, under no_grad); and unpickling traces the
        # saved code again with _tracer_cls, export's _ModuleStackTracer, which cannot be
        # made without its scope root: fx's plain Tracer gives the same ops.
        for attr in ("train", "eval"):
            gm.__dict__.pop(attr, None)
        gm._tracer_cls = None
        torch.save(gm, os.path.join(folder, f"{key}.pt"))
    np.save(os.path.join(folder, "input.npy"), caught["x"].numpy())
    with open(os.path.join(folder, "step.json"), "w", encoding="utf-8") as f:
        json.dump({"step": step}, f)
    return status


def main(argv) -> int:
    import warnings

    import torch

    import assetlib
    import pt2e_zoo_goldens as pzg
    import zoo_models

    assetlib.require_torch(torch.__version__, assetlib.TRIXIE_TORCH, SCRIPT)
    torch.set_num_threads(1)  # as pt2e_zoo_goldens.build
    names = argv or list(pzg.MODELS)
    unknown = [n for n in names if n not in pzg.MODELS]
    if unknown:
        sys.exit(f"error: not in pt2e_zoo_goldens.MODELS: {', '.join(unknown)}")
    print(f"torch {torch.__version__}; get_cpu_capability() here: "
          f"{torch.backends.cpu.get_cpu_capability()} (ATEN_CPU_CAPABILITY="
          f"{os.environ.get('ATEN_CPU_CAPABILITY')}, ONEDNN_MAX_CPU_ISA="
          f"{os.environ.get('ONEDNN_MAX_CPU_ISA')})", flush=True)
    work_dir = tempfile.mkdtemp(prefix="pt2e_zoo_spread.")
    try:
        checks, done = {}, []
        for name in names:
            if name in pzg.FROM_ARCHIVE:
                archive = os.path.join(zoo_models.CACHE_DIR, name,
                                       pzg.zoo_entry(name)["files"]["export"])
                if not os.path.exists(archive):
                    print(f"skipped  {name}: no {assetlib.rel(archive)} (make the zoo cache)",
                          flush=True)
                    continue
            folder = os.path.join(work_dir, name)
            os.makedirs(folder)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                checks[name] = golden_modules(name, folder)
            done.append(name)
            c = checks[name]
            prepared = ("bit-equal" if c["prepared_output"]
                        else f"max |diff| {c['prepared_diff']:.3g}")
            print(f"golden   {name}: converted output "
                  f"{'bit-equal' if c['converted_output'] else 'DIFFERS FROM'} the committed, "
                  f"prepared output {prepared}, "
                  f"last scale {'equal' if c['step'] else 'DIFFERS'}", flush=True)
        rows = []
        for cap in CAPABILITIES:
            for isa in ONEDNN_CAPS:
                env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
                for var in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
                    if isa:
                        env[var] = isa
                    else:
                        env.pop(var, None)
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker",
                                      work_dir] + done, env=env, stdout=subprocess.PIPE,
                                     check=True, text=True).stdout
                rows += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)

    def steps(v):
        return f"{v:.0f}" if abs(v - round(v)) < 1e-3 else f"{v:.3f}"

    reported = sorted({(r["cap"], r["reported"]) for r in rows})
    print("get_cpu_capability() per ATEN_CPU_CAPABILITY: "
          + ", ".join(f"{c} -> {r}" for c, r in reported))
    head = ("model", "setting", "max steps off", "values differing",
            "prepared max steps", "prepared differing")
    table = []
    for name in done:
        for r in (r for r in rows if r["model"] == name):
            label = setting_label(r["cap"], r["isa"], r["mkldnn"], r["threads"])
            if (r["cap"], r["isa"], r["mkldnn"], r["threads"]) == GOLDEN_SETTING:
                label += " (golden)"
            flag = "" if checks[name]["converted_output"] and checks[name]["step"] else " !"
            table.append((name + flag, label, steps(r["q_steps"]),
                          f"{r['q_diff']}/{r['size']}", f"{r['f_steps']:.3g}",
                          f"{r['f_diff']}/{r['size']}"))
    widths = [max(len(str(row[i])) for row in table + [head]) for i in range(len(head))]
    print()
    for row in [head] + table:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
    print()
    print("per model, over all settings: max steps off (converted) / max steps (prepared)")
    for name in done:
        mine = [r for r in rows if r["model"] == name]
        print(f"  {name:24} {steps(max(r['q_steps'] for r in mine)):>6}   "
              f"{max(r['f_steps'] for r in mine):.3g}")
    bad = [n for n in done if not (checks[n]["converted_output"] and checks[n]["step"])]
    if bad:
        print(f"NOT the golden's converted output under its own settings (marked !): "
              f"{', '.join(bad)}")
    return 0


if __name__ == "__main__":
    if WORKER:
        sys.exit(worker(sys.argv[2], sys.argv[3:]))
    sys.exit(main(sys.argv[1:]))
