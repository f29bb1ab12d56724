#!/usr/bin/env python3
"""Real torch.save files for pt2lab's restricted unpickler (src/core/io/pickle.cpp):
tests/golden/pickle/<case>.pt, what each holds (cases.json, tensors as .npy),
and the files it must refuse.

    bash scripts/torch_env.sh run sid python3 tools/pickle_goldens.py            # write them
    bash scripts/torch_env.sh run sid python3 tools/pickle_goldens.py --check    # regenerate, compare

"accepted" cases are torch.save of values a torch.export sample-inputs file
(or a user's own) holds: tensors of every lesson dtype, views with offsets and
strides, shared storages, tuples, lists, dicts, OrderedDicts, scalars, at
pickle protocols 2 and 4. "refused" cases are what the unpickler must turn
down with a message naming the opcode or global: an nn.Parameter (another
rebuild function), a pickle that calls os.system, a class instance. See
docs/FORMATS.md section 8.
"""

import os
import sys

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # before torch, as in every tools/ script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import collections  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import pickle  # noqa: E402
import tempfile  # noqa: E402
import zipfile  # noqa: E402

import torch  # noqa: E402

import assetlib  # noqa: E402

SCRIPT = "tools/pickle_goldens.py"
FORMAT = "pt2lab.pickle_cases"
VERSION = 1
GOLDEN_DIR = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "pickle")


def seeded(*shape, seed, dtype=torch.float32):
    g = torch.Generator()
    g.manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000) + 1, shape, generator=g,
                         dtype=dtype)


def accepted_cases():
    """{name: (value, pickle protocol)}; every tensor is rebuilt by _rebuild_tensor_v2."""
    base = seeded(4, 6, seed=1)
    shared = seeded(12, seed=2)
    return {
        "sample_inputs": (((seeded(2, 3, 16, 16, seed=3),), {}), 2),
        "sample_inputs_kwargs": (((seeded(2, 3, seed=4), seeded(3, seed=5)),
                                  {"scale": seeded(1, seed=6), "bias": None}), 2),
        "dtypes": (tuple(seeded(2, 3, seed=10 + k, dtype=d) for k, d in enumerate(
            [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
             torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool])), 2),
        "views_and_strides": ((base.t(), base[1:, ::2], base[2], base.reshape(24)[5:17]), 2),
        "shared_storage": ((shared, shared.view(3, 4), shared[6:]), 2),
        "zero_dim_and_empty": ((torch.tensor(3.5), torch.tensor(7, dtype=torch.int64),
                                torch.zeros(0, 4), torch.zeros(2, 0, 3)), 2),
        "containers_and_scalars": (collections.OrderedDict([
            ("list", [1, -2, 2**40, -(2**63), 2**63 - 1]),
            ("floats", (0.1, -0.0, 1e-300, math.inf, -math.inf)),
            ("flags", {"yes": True, "no": False, "none": None}),
            ("text", "Grüße, 世界"),
            ("tensor", seeded(3, seed=20)),
            ("nested", ((((seeded(2, seed=21),),),),)),
        ]), 2),
        "protocol_4": (((seeded(2, 3, seed=30),), {"y": seeded(3, seed=31)}), 4),
        "requires_grad": ((seeded(3, seed=40).requires_grad_(),), 2),
    }


class _Hostile:
    """Unpickling it would run a shell command."""

    def __reduce__(self):
        return (os.system, ("echo pt2lab-pickle-test",))


class _Plain:
    def __init__(self):
        self.weight = 1.5


def refused_cases():
    """{name: (data.pkl bytes or a value for torch.save, phrase pt2lab's error must contain)}."""
    return {
        "parameter": (torch.nn.Parameter(seeded(3, seed=50)),
                      "global 'torch._utils _rebuild_parameter' is not allowed"),
        "os_system": (pickle.dumps(((_Hostile(),), {}), protocol=2),
                      "global 'posix system' is not allowed"),
        "class_instance": (pickle.dumps(_Plain(), protocol=2),
                           "global '__main__ _Plain' is not allowed"),
        "class_instance_protocol_4": (pickle.dumps(_Plain(), protocol=4),
                                      "global '__main__ _Plain' is not allowed"),
    }


def torch_save_bytes(value, protocol):
    buf = io.BytesIO()
    torch.save(value, buf, pickle_protocol=protocol)
    return buf.getvalue()


def zip_with_pickle(data_pkl: bytes) -> bytes:
    """A torch.save-shaped zip around a pickle torch did not write."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in (("archive/data.pkl", data_pkl), ("archive/byteorder", b"little")):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, data)
    return buf.getvalue()


def expected(value, case, files, counter):
    """The value as cases.json describes it: section 2 encoding, tensors as .npy files."""
    if isinstance(value, torch.Tensor):
        path = f"{case}/t{counter[0]}.npy"
        counter[0] += 1
        t = value.detach()
        if t.dtype in (torch.float16, torch.bfloat16):
            raw = t.contiguous().view(torch.int16).numpy()  # npy has no bfloat16: bits as int16
            files[path] = assetlib.npy_bytes(raw)
            return {"tensor": path, "dtype": str(t.dtype).replace("torch.", ""),
                    "bits": True, "requires_grad": value.requires_grad}
        files[path] = assetlib.npy_bytes(t.contiguous().numpy())
        return {"tensor": path, "dtype": str(t.dtype).replace("torch.", ""),
                "requires_grad": value.requires_grad}
    if isinstance(value, (list, tuple)):
        items = [expected(v, case, files, counter) for v in value]
        return {"tuple": items} if isinstance(value, tuple) else {"list": items}
    if isinstance(value, dict):
        return {"dict": [[expected(k, case, files, counter), expected(v, case, files, counter)]
                         for k, v in value.items()]}
    if isinstance(value, float):
        if math.isinf(value):
            return {"float": "inf" if value > 0 else "-inf"}
        if value == 0.0 and math.copysign(1.0, value) < 0:
            return {"float": "-0.0"}
        return value
    return value  # None, bool, int, str


def build():
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    files = {}
    accepted, refused = [], []
    for name, (value, protocol) in accepted_cases().items():
        files[f"{name}.pt"] = torch_save_bytes(value, protocol)
        accepted.append({"name": name, "file": f"{name}.pt", "protocol": protocol,
                         "value": expected(value, name, files, [0])})
    for name, (value, phrase) in refused_cases().items():
        data = zip_with_pickle(value) if isinstance(value, bytes) else torch_save_bytes(value, 2)
        files[f"{name}.pt"] = data
        refused.append({"name": name, "file": f"{name}.pt", "error": phrase,
                        "made_by": "pickle.dumps" if isinstance(value, bytes) else "torch.save"})
    doc = {"format": FORMAT, "version": VERSION,
           "producer": {"script": SCRIPT, "torch_version": torch.__version__},
           "accepted": accepted, "refused": refused}
    files["cases.json"] = assetlib.json_text(doc, inline_depth=3).encode("utf-8")
    return files


def generate(out_dir, quiet=False):
    files = build()
    for rel_path, data in sorted(files.items()):
        assetlib.write_bytes_atomic(os.path.join(out_dir, rel_path), data)
    if not quiet:
        print(f"wrote    {len(files)} files under tests/golden/pickle")


def check(_out_dir=None):
    files = build()
    failures = 0
    committed = set()
    for folder, _, names in os.walk(GOLDEN_DIR):
        committed |= {os.path.relpath(os.path.join(folder, n), GOLDEN_DIR) for n in names}
    for rel_path, data in sorted(files.items()):
        path = os.path.join(GOLDEN_DIR, rel_path)
        if not os.path.exists(path):
            status, detail = "MISSING", "not committed"
        else:
            with open(path, "rb") as f:
                want = f.read()
            if rel_path.endswith(".pt"):
                # torch.save's .data/serialization_id differs on every call; compare records.
                status, detail = _pt_difference(want, data)
            else:
                status, detail = ("ok", None) if want == data else ("DIFF", "bytes differ")
        failures += status != "ok"
        print(assetlib.report_line(status, f"tests/golden/pickle/{rel_path}", detail))
    for rel_path in sorted(committed - set(files)):
        failures += 1
        print(assetlib.report_line("STALE", f"tests/golden/pickle/{rel_path}", "no case writes it"))
    return assetlib.finish_check(failures, "file(s)", SCRIPT)


def _pt_difference(want: bytes, got: bytes):
    with zipfile.ZipFile(io.BytesIO(want)) as a, zipfile.ZipFile(io.BytesIO(got)) as b:
        if a.namelist() != b.namelist():
            return "DIFF", f"records {a.namelist()} vs {b.namelist()}"
        for name in a.namelist():
            if name.endswith(".data/serialization_id"):
                continue
            if a.read(name) != b.read(name):
                return "DIFF", f"{name} differs"
    return "ok", None


def main(argv=None):
    return assetlib.generator_main(__doc__, GOLDEN_DIR, generate, check,
                                   check_help="regenerate in memory and compare with tests/golden/pickle/",
                                   out_help="write DIR/... instead of tests/golden/pickle/", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
