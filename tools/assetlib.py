"""Small helpers shared by the tools/ generators: environment checks,
deterministic file writing, .npy bytes, and the comparisons behind --check.

No torch import here, so the comparisons also work without torch.
"""

import argparse
import io
import json
import math
import os
import re
import sys
import zipfile

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The torch each golden is made with: Debian sid's (every asset and golden) and
# Debian trixie's (torch.ao's prepare_pt2e / convert_pt2e, gone from torch 2.14).
SID_TORCH = "2.14.1"
TRIXIE_TORCH = "2.6.0"
ROOT_OF = {SID_TORCH: "sid", TRIXIE_TORCH: "trixie"}

# Float tolerance for eager reference outputs (the convolution backend differs
# between CPUs); everything else is compared exactly.
OUTPUT_TOLERANCE = 1e-5


def require_torch(version: str, wanted: str, script: str) -> None:
    """Stops unless this is the torch the goldens are made with."""
    if not version.startswith(wanted):
        sys.exit(f"error: {script} makes its files with torch {wanted}, this is torch {version}; "
                 f"run it as: bash scripts/torch_env.sh run {ROOT_OF[wanted]} python3 {script}")


def rel(path: str) -> str:
    """A path relative to the repository root, with forward slashes."""
    return os.path.relpath(path, REPO_ROOT).replace(os.sep, "/")


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def json_text(obj, inline_depth: int = 2) -> str:
    """Our own JSON files: insertion order, 2-space indent for the outer
    `inline_depth` levels, one compact line per value below that (one line per
    graph node), trailing newline."""

    def render(value, depth):
        if depth >= inline_depth or not isinstance(value, (dict, list)) or not value:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        pad, end = "  " * (depth + 1), "  " * depth
        if isinstance(value, dict):
            items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {render(v, depth + 1)}"
                     for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + end + "}"
        items = [pad + render(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + end + "]"

    return render(obj, 0) + "\n"


def write_bytes_atomic(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def npy_bytes(array: np.ndarray) -> bytes:
    """NumPy .npy format 1.0, little-endian, C order, as bytes."""
    array = np.array(array, order="C", copy=True)  # (ascontiguousarray would make 0-d arrays 1-d)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=(1, 0), allow_pickle=False)
    return buf.getvalue()


def npy_load(data: bytes) -> np.ndarray:
    return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)


# ---------------------------------------------------------------------------
# Comparing (for --check)
# ---------------------------------------------------------------------------


def report_line(status, rel_path, detail):
    """One --check line: `ok  path`, `skipped  path (why)`, `DIFF  path: what`."""
    if status == "ok":
        return f"ok       {rel_path}"
    if status == "skipped":
        return f"skipped  {rel_path} ({detail})"
    return f"{status:<8} {rel_path}: {detail}"


# A decimal number written in text (a scale in printed code), for json_difference's rel_tol.
_DECIMAL = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def _close(e: float, a: float, rel_tol: float) -> bool:
    return e == a or (math.isfinite(e) and abs(e - a) <= rel_tol * max(abs(e), abs(a)))


def json_difference(expected, actual, path="$", rel_tol=0.0):
    """The first difference between two parsed JSON values, or None. With rel_tol > 0,
    floats (and the decimals inside strings, such as printed code's scales) may differ by
    that much relative: torch's own float results move a few ulp between CPUs."""
    if type(expected) is not type(actual):
        # 1 and 1.0 are different JSON to us (the C++ side keeps int vs float).
        return f"{path}: expected {_short(expected)}, got {_short(actual)}"
    if isinstance(expected, dict):
        if list(expected) != list(actual):
            missing = [k for k in expected if k not in actual]
            extra = [k for k in actual if k not in expected]
            if missing or extra:
                return f"{path}: keys missing {missing}, unexpected {extra}"
            return f"{path}: key order differs"
        for key in expected:
            diff = json_difference(expected[key], actual[key], f"{path}.{key}", rel_tol)
            if diff:
                return diff
        return None
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            diff = json_difference(e, a, f"{path}[{i}]", rel_tol)
            if diff:
                return diff
        return None
    if expected != actual:
        if rel_tol > 0 and isinstance(expected, float) and _close(expected, actual, rel_tol):
            return None
        if (rel_tol > 0 and isinstance(expected, str)
                and _DECIMAL.split(expected) == _DECIMAL.split(actual)
                and all(_close(float(e), float(a), rel_tol) for e, a in
                        zip(_DECIMAL.findall(expected), _DECIMAL.findall(actual)))):
            return None
        return f"{path}: expected {_short(expected)}, got {_short(actual)}"
    return None


def _short(value, limit=120) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."


def npy_difference(expected_bytes: bytes, actual_bytes: bytes, tolerance: float):
    """Compares two .npy files: dtype and shape exactly, values within tolerance
    for floats (exactly for everything else). Returns a message or None."""
    expected = npy_load(expected_bytes)
    actual = npy_load(actual_bytes)
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return (f"expected {expected.dtype}{list(expected.shape)}, "
                f"got {actual.dtype}{list(actual.shape)}")
    if np.issubdtype(expected.dtype, np.floating):
        if expected.size == 0:
            return None
        diff = float(np.max(np.abs(expected.astype(np.float64) - actual.astype(np.float64))))
        if not diff <= tolerance or math.isnan(diff):
            return f"max |diff| {diff:.3g} > {tolerance:g}"
        return None
    if not np.array_equal(expected, actual):
        return "values differ"
    return None


def zip_records(path: str):
    """{name inside the root folder: bytes} and the root folder of an archive."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        root = names[0].split("/", 1)[0] if names else ""
        records = {}
        for name in names:
            inner = name.split("/", 1)[1] if "/" in name else name
            records[inner] = zf.read(name)
    return root, records


# ---------------------------------------------------------------------------
# The command line every generator shares
# ---------------------------------------------------------------------------


def finish_check(failures: int, what: str, script: str, root: str = "sid") -> int:
    """Last line of a --check run: how many differ and how to regenerate; the exit status."""
    if failures:
        print(f"{failures} {what} differ; regenerate with: "
              f"bash scripts/torch_env.sh run {root} python3 {script}")
    return 1 if failures else 0


def generator_main(doc: str, default_out: str, generate, check, check_help: str, out_help: str, argv=None) -> int:
    """`script [--check] [--out DIR]`: generate into DIR, or compare a fresh
    generation with the committed files. `check(out_dir)` returns the exit status."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help=check_help)
    parser.add_argument("--out", metavar="DIR", default=default_out, help=out_help)
    args = parser.parse_args(argv)
    out_dir = os.path.abspath(args.out)
    if args.check:
        return check(out_dir)
    generate(out_dir)
    return 0

