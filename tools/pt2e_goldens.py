#!/usr/bin/env python3
"""PT2E quantization as torch.ao did it in torch 2.6 (Debian trixie; torch 2.14
moved it to torchao, which Debian does not ship): tests/golden/pt2e/<asset>.json
plus .npy files under tests/golden/pt2e/<asset>/.

    bash scripts/torch_env.sh run trixie python3 tools/pt2e_goldens.py            # write them
    bash scripts/torch_env.sh run trixie python3 tools/pt2e_goldens.py --check    # regenerate, compare

For every eval-mode lesson asset: the lesson model holding the archive's
weights is exported with torch.export.export_for_training, its module()
prepared with prepare_pt2e(XNNPACKQuantizer().set_global(
get_symmetric_quantization_config())), calibrated on the archive's sample
input and one more seeded batch, and converted with convert_pt2e
(fold_quantize=True). The file records what pt2lab's prepare/convert must
reproduce: the prepared and converted code and graph, every observer (name,
what it observes, which instance it is, kind, dtype, range, eps; after
calibration min/max, the histogram, scale and zero point, and the tensors
each instance was fed, in call order), the folded int8 weights, and the
outputs of the prepared and the converted module on the sample input, and every
node.meta["quantization_annotation"] the quantizer wrote, as repr() prints it. Every file says
"torch 2.6 torch.ao". See docs/FORMATS.md section 9.
"""

import os
import sys

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # before torch, as in every tools/ script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import copy  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import operator  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402

import torch  # noqa: E402
from torch.ao.quantization.pt2e.utils import _fuse_conv_bn_  # noqa: E402
from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torch.ao.quantization.quantizer.xnnpack_quantizer import (  # noqa: E402
    XNNPACKQuantizer, get_symmetric_quantization_config)

import assetlib  # noqa: E402
import fx_json  # noqa: E402
import lesson_models  # noqa: E402

SCRIPT = "tools/pt2e_goldens.py"
FORMAT = "pt2lab.pt2e"
VERSION = 1
LABEL = "torch 2.6 torch.ao"
GOLDEN_DIR = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "pt2e")
EXTRA_BATCHES = 1  # calibration batches after the sample input (2: the histograms merge)
# The course lesson courses/pt2e/m01-2 (conv_bn_relu_eval): its calibrate steps, as the
# Workspace runs them: one batch (the sample input), then repeat 3 (the sample input again,
# then pt2lab's seeded inputs 1 and 2), its fold step's graph, and its run step's per-layer
# and output SQNR. Recorded under
# "lesson_m01_2" in the asset's file.
LESSON_ASSET = "conv_bn_relu_eval"
LESSON_CALIBRATE = [["sample"], ["sample", 1, 2]]


def seeded_batch(name: str, k: int, shape) -> torch.Tensor:
    """1.5 * randn from a generator seeded with crc32("<asset>/calibration_<k>")."""
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"{name}/calibration_{k}".encode("utf-8")))
    return 1.5 * torch.randn(shape, generator=g)


def pt2lab_seeded(shape, seed: int) -> torch.Tensor:
    """pt2lab's seeded_inputs (src/core/util/rng.h): SeededRng(seed).normal() per element,
    splitmix64, 12 float32 uniforms (multiples of 2**-24) summed in float32, minus 6."""
    import numpy as np
    mask = (1 << 64) - 1
    state = seed
    n = 1
    for d in shape:
        n *= d
    out = np.empty(n, dtype=np.float32)
    inv = np.float32(1.0 / 16777216.0)
    for i in range(n):
        s = np.float32(0.0)
        for _ in range(12):
            state = (state + 0x9e3779b97f4a7c15) & mask
            z = state
            z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & mask
            z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & mask
            z = z ^ (z >> 31)
            s = np.float32(s + np.float32(z >> 40) * inv)
        out[i] = np.float32(s - np.float32(6.0))
    return torch.from_numpy(out.reshape(shape))


def lesson_record(model, x) -> dict:
    """The lesson's calibrate steps on a fresh prepared module, every observer after each,
    and convert_pt2e with fold_quantize False and True on what they leave."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = torch.export.export_for_training(copy.deepcopy(model), (x,)).module()
        # The fold step: prepare_pt2e's first job alone (torch.ao's _fuse_conv_bn_).
        folded = copy.deepcopy(module)
        _fuse_conv_bn_(folded)
        folded.recompile()
        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
        prepared = prepare_pt2e(module, quantizer)
    steps = []
    with torch.no_grad():
        for batches in LESSON_CALIBRATE:
            for b in batches:
                prepared(x if b == "sample" else pt2lab_seeded(tuple(x.shape), b))
            observers = []
            for node, obs in observer_modules(prepared):
                scale, zero_point = obs.calculate_qparams()
                observers.append({
                    "name": node.target,
                    "min_val": float(obs.min_val.item()),
                    "max_val": float(obs.max_val.item()),
                    "scale": float(scale.item()),
                    "zero_point": int(zero_point.item()),
                })
            steps.append({"batches": batches, "observers": observers})
    record = {"folded": {"code": folded.code, "graph": str(folded.graph)}, "calibrate": steps}
    for fold in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            converted = convert_pt2e(copy.deepcopy(prepared), fold_quantize=fold)
        record[f"converted_fold_{str(fold).lower()}"] = {
            "code": converted.code, "graph": str(converted.graph)}
    # The lesson's run step: the converted module (fold_quantize=True) against the float
    # module on the sample input, layer by layer.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        floating = torch.export.export_for_training(copy.deepcopy(model), (x,)).module()
    record["layers"] = layer_sqnr(converted, floating, x)
    with torch.no_grad():
        record["output_sqnr_db"] = sqnr_db(converted(x), floating(x))
    return record


def node_values(gm, x) -> dict:
    """Every node's value when `gm` runs on x (torch.fx's Interpreter)."""
    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            values[n.name] = out
            return out

    with torch.no_grad():
        Recorder(gm).run(x)
    return values


def sqnr_db(a, b) -> float:
    """10 log10(sum b^2 / sum (a - b)^2) in float64: a quantized value against the float one."""
    a, b = a.double(), b.double()
    noise = float(((a - b) ** 2).sum())
    return float("inf") if noise == 0.0 else 10.0 * math.log10(float((b ** 2).sum()) / noise)


def layer_sqnr(converted, floating, x) -> list:
    """Each call_function of the converted graph that is not a quantize / dequantize and whose
    name and target the float graph has, against its float twin; a conv that took over a
    folded batch norm against that batch norm's output. In graph order."""
    quantized_values, float_values = node_values(converted, x), node_values(floating, x)
    float_nodes = {n.name: n for n in floating.graph.nodes}
    rows = []
    for n in converted.graph.nodes:
        if n.op != "call_function" or "quantized_decomposed" in str(n.target):
            continue
        f = float_nodes.get(n.name)
        if f is None or f.target != n.target:
            continue
        ref = f
        bn = [u for u in f.users if "batch_norm" in str(u.target)]
        if len(f.users) == 1 and bn:
            ref = bn[0]
            getitem = [u for u in ref.users if u.target is operator.getitem and u.args[1] == 0]
            if getitem:
                ref = getitem[0]
        a, b = quantized_values[n.name], float_values[ref.name]
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            continue
        rows.append({"node": n.name, "reference": ref.name, "sqnr_db": sqnr_db(a, b)})
    return rows


def observer_modules(gm):
    """(node, module) of every observer call, in graph order."""
    out = []
    for node in gm.graph.nodes:
        if node.op == "call_module" and node.target.startswith("activation_post_process_"):
            out.append((node, gm.get_submodule(node.target)))
    return out


def dtype_name(d) -> str:
    return str(d).replace("torch.", "")


def asset_record(name: str, files: dict) -> dict:
    model, x = lesson_models.load_asset_model(name)
    folder = name

    def npy(key, tensor):
        path = f"{folder}/{key}.npy"
        files[path] = assetlib.npy_bytes(tensor.detach().contiguous().numpy())
        return path

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notes
        exported = torch.export.export_for_training(copy.deepcopy(model), (x,))
        module = exported.module()
        exported_code = module.code  # prepare_pt2e edits the module's graph in place
        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
        prepared = prepare_pt2e(module, quantizer)
    record = {
        "format": FORMAT,
        "version": VERSION,
        "producer": {"script": SCRIPT, "torch_version": torch.__version__, "label": LABEL},
        "asset": f"assets/graphs/{name}.pt2",
        "quantizer": "XNNPACKQuantizer().set_global(get_symmetric_quantization_config())",
        "exported_code": exported_code,
        "prepared": {"code": prepared.code, "graph": str(prepared.graph)},
        # What the quantizer wrote into meta, as torch prints it: every prepared node that
        # has node.meta["quantization_annotation"], in graph order.
        "annotations": [[n.name, repr(n.meta["quantization_annotation"])]
                        for n in prepared.graph.nodes if "quantization_annotation" in n.meta],
    }
    observers = []
    instance_of = {}  # id(observer module) -> the first name it has (torch shares instances)
    for node, obs in observer_modules(prepared):
        instance_of.setdefault(id(obs), node.target)
        observers.append({
            "name": node.target,
            "instance": instance_of[id(obs)],
            "observes": node.args[0].name,
            "users": [u.name for u in node.users],
            "class": type(obs).__name__,
            "dtype": dtype_name(obs.dtype),
            "qscheme": str(obs.qscheme).replace("torch.", ""),
            "quant_min": obs.quant_min,
            "quant_max": obs.quant_max,
            "eps": float(obs.eps.item()),
            "bins": getattr(obs, "bins", None),
        })
    batches = [x] + [seeded_batch(name, k, tuple(x.shape)) for k in range(1, EXTRA_BATCHES + 1)]
    record["calibration"] = [npy(f"calibration_{k}", b) for k, b in enumerate(batches)]
    # What each observer instance is fed during calibration, in call order: torch's own
    # activations, so pt2lab can check its observers bit for bit on the same data.
    seen = {}
    hooks = []
    for node, obs in observer_modules(prepared):
        if instance_of[id(obs)] == node.target:
            seen[node.target] = []
            hooks.append(obs.register_forward_pre_hook(
                lambda mod, args, key=node.target: seen[key].append(args[0].detach().clone())))
    with torch.no_grad():
        for b in batches:
            prepared(b)
        for h in hooks:
            h.remove()
        # on a copy: running the prepared module feeds its observers
        prepared_out = copy.deepcopy(prepared)(x)
    for entry, (node, obs) in zip(observers, observer_modules(prepared)):
        scale, zero_point = obs.calculate_qparams()
        entry.update({
            "min_val": float(obs.min_val.item()),
            "max_val": float(obs.max_val.item()),
            "scale": float(scale.item()),
            "zero_point": int(zero_point.item()),
        })
        if hasattr(obs, "histogram"):
            entry["histogram"] = npy(f"{node.target}_histogram", obs.histogram)
        if node.target in seen:
            entry["fed"] = [npy(f"{node.target}_fed_{k}", t) for k, t in enumerate(seen[node.target])]
    record["observers"] = observers
    record["prepared_output"] = npy("prepared_output", prepared_out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        converted = convert_pt2e(prepared)
    record["converted"] = {"code": converted.code, "graph": str(converted.graph)}
    frozen = {}
    for node in converted.graph.nodes:
        if node.op == "get_attr" and node.target.startswith("_frozen_param"):
            frozen[node.target] = npy(node.target, getattr(converted, node.target))
    record["frozen_params"] = frozen
    with torch.no_grad():
        record["converted_output"] = npy("converted_output", converted(x))
    if name == LESSON_ASSET:
        record["lesson_m01_2"] = lesson_record(model, x)
    return record


def assets():
    return [s.name for s in lesson_models.ASSETS if s.mode == "eval"]


def build():
    assetlib.require_torch(torch.__version__, assetlib.TRIXIE_TORCH, SCRIPT)
    torch.set_num_threads(1)
    files = {}
    for name in assets():
        record = asset_record(name, files)
        files[f"{name}.json"] = assetlib.json_text(record, inline_depth=3).encode("utf-8")
    return files


def generate(out_dir, quiet=False):
    files = build()
    for rel_path, data in sorted(files.items()):
        assetlib.write_bytes_atomic(os.path.join(out_dir, rel_path), data)
    if not quiet:
        print(f"wrote    {len(files)} files under tests/golden/pt2e ({LABEL})")


def check(_out_dir=None):
    fresh = build()
    committed = set()
    for folder, _, names in os.walk(GOLDEN_DIR):
        committed |= {os.path.relpath(os.path.join(folder, n), GOLDEN_DIR) for n in names}
    failures = 0
    for rel_path, data in sorted(fresh.items()):
        path = os.path.join(GOLDEN_DIR, rel_path)
        if not os.path.exists(path):
            status, detail = "MISSING", "not committed"
        else:
            with open(path, "rb") as f:
                want = f.read()
            if rel_path.endswith(".json"):
                detail = assetlib.json_difference(json.loads(want), json.loads(data))
            elif rel_path.endswith("_output.npy"):
                detail = assetlib.npy_difference(want, data, assetlib.OUTPUT_TOLERANCE)
            else:
                detail = None if want == data else "bytes differ"
            status = "DIFF" if detail else "ok"
        failures += status != "ok"
        print(assetlib.report_line(status, f"tests/golden/pt2e/{rel_path}", detail))
    for rel_path in sorted(committed - set(fresh)):
        failures += 1
        print(assetlib.report_line("STALE", f"tests/golden/pt2e/{rel_path}", "nothing writes it"))
    return assetlib.finish_check(failures, "file(s)", SCRIPT, root="trixie")


def main(argv=None):
    return assetlib.generator_main(__doc__, GOLDEN_DIR, generate, check,
                                   check_help="regenerate in memory and compare with tests/golden/pt2e/",
                                   out_help="write DIR/... instead of tests/golden/pt2e/", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
