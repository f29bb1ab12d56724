#!/usr/bin/env python3
"""Does the page's "Copy as Python" give, in real torch, the graph the page shows?

For every lesson (its English file: both languages take the same steps), after
every step, each graph the step changed is written by pt2lab as Copy as Python
writes it, beside what pt2lab prints of it; then real torch 2.14.1 runs each (of the
ExportedPrograms: a symbolic_trace graph is pt2lab's JSON, which torch cannot load)
script on the lesson's own .pt2 and its str(gm.graph), gm.code and
str(ep.graph) must equal pt2lab's, character for character.

Two steps, because pt2lab runs on this machine and torch in the sid root:

    python3 tools/python_roundtrip.py write [--out DIR] [--cli PATH]
    bash scripts/torch_env.sh run sid python3 tools/python_roundtrip.py check [--out DIR]

`write` (plain Python, no torch) runs `pt2lab lesson python LESSON --out DIR`
for each lesson. `check` runs each DIR/*.py with the folder of its graph as the
working directory (the script loads the file by its base name, as a user runs it
beside the file) and compares. A script that needs torch.ao's prepare_pt2e /
convert_pt2e cannot run here (torch 2.14 has none, and torch 2.6, which has
them, cannot read torch 2.14.1's archives): such scripts are listed as not run,
and the steps before them are checked. The expected values are torch's own
printouts; nothing is compared with a snapshot of pt2lab.
"""

import argparse
import contextlib
import glob
import io
import json
import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO_ROOT, "build", "python_roundtrip")
DEFAULT_CLI = os.path.join(REPO_ROOT, "build", "native", "src", "cli", "pt2lab")
NEEDS_AO = ("prepare_pt2e(", "convert_pt2e(", "_fuse_conv_bn_(")


def write(out, cli):
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "*.py")) + glob.glob(os.path.join(out, "*.json")):
        os.remove(old)
    lessons = sorted(glob.glob(os.path.join(REPO_ROOT, "assets", "lessons", "*.en.md")))
    if not lessons:
        sys.exit("no lessons under assets/lessons")
    for lesson in lessons:
        rel = os.path.relpath(lesson, REPO_ROOT)
        r = subprocess.run([cli, "lesson", "python", rel, "--out", out], cwd=REPO_ROOT,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"pt2lab lesson python {rel} failed ({r.returncode}):\n{r.stderr}")
        print(r.stdout.strip().splitlines()[-1])


def first_difference(a, b):
    for k, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {k + 1}:\n  torch:  {x!r}\n  pt2lab: {y!r}"
    return f"lengths differ ({len(a.splitlines())} vs {len(b.splitlines())} lines)"


def check(out):
    import torch  # noqa: F401  (the sid root's torch 2.14.1)

    scripts = sorted(glob.glob(os.path.join(out, "*.py")))
    if not scripts:
        sys.exit(f"no scripts in {out}: run `python3 tools/python_roundtrip.py write` first")
    failures, ran, not_run = [], 0, []
    for script in scripts:
        with open(script) as f:
            code = f.read()
        with open(script[:-3] + ".json") as f:
            want = json.load(f)
        name = os.path.basename(script)
        if any(call in code for call in NEEDS_AO):
            not_run.append(name + " (torch.ao's PT2E)")
            continue
        if "ep_graph" not in want:
            not_run.append(name + " (a symbolic_trace graph: torch cannot load pt2lab's JSON of it)")
            continue
        here = os.getcwd()
        os.chdir(os.path.join(REPO_ROOT, os.path.dirname(want["file"])))
        scope = {"__name__": "__main__"}
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(code, script, "exec"), scope)
        except Exception as e:  # noqa: BLE001  (reported with the script's name)
            failures.append(f"{name}: raised {type(e).__name__}: {e}")
            continue
        finally:
            os.chdir(here)
        ran += 1
        got = {"gm_graph": str(scope["gm"].graph), "gm_code": scope["gm"].code}
        got["ep_graph"] = str(scope["ep"].graph)
        if printed.getvalue() != got["gm_graph"] + "\n":
            failures.append(f"{name}: the script's own print(gm.graph) is not its last output")
        for key, value in got.items():
            if value != want[key]:
                failures.append(f"{name}: {key} differs, {first_difference(value, want[key])}")
    print(f"{ran} scripts ran in torch {torch.__version__} and print as pt2lab does"
          if not failures else f"{len(failures)} of {ran + len(failures)} scripts differ")
    if not_run:
        print(f"{len(not_run)} not run: " + ", ".join(not_run))
    for f in failures:
        print("FAIL " + f)
    if failures or ran == 0:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["write", "check"])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--cli", default=DEFAULT_CLI)
    args = ap.parse_args()
    if args.mode == "write":
        write(args.out, args.cli)
    else:
        check(args.out)


if __name__ == "__main__":
    main()
