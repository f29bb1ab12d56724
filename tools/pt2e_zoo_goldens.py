#!/usr/bin/env python3
"""PT2E quantization of zoo CNNs as torch.ao did it in torch 2.6 (Debian trixie, with
Debian's torchvision 0.21): tests/golden/pt2e_zoo/<name>.json plus a few small .npy files
under tests/golden/pt2e_zoo/<name>/.

    bash scripts/torch_env.sh run trixie python3 tools/pt2e_zoo_goldens.py            # write them
    bash scripts/torch_env.sh run trixie python3 tools/pt2e_zoo_goldens.py --check    # regenerate, compare

torch 2.6 cannot read the zoo's torch 2.14 archives, so each model is built again here
with tools/zoo_models.py's own builders (torchvision's classes, weights=None under
torch.manual_seed(crc32(name)), eval, sample input torch.randn from a generator seeded
with crc32("<name>/input")); GoogLeNet, whose initialisation torchvision 0.21 draws
differently, then takes the weights torch 2.14 saved in the zoo's own archive
build/zoo/googlenet/model.pt2 (read with zipfile: make the zoo cache first). The result is
proved to be the zoo's model: the SHA-256 of its weights (state_dict in name order) and of
its sample input must equal what the committed tests/golden/zoo/manifest.json says torch
2.14.1 exported; the script stops otherwise. The model is exported with
torch.export.export_for_training, its module() prepared with
prepare_pt2e(XNNPACKQuantizer().set_global(get_symmetric_quantization_config())),
calibrated on the sample input and one seeded batch, and converted with convert_pt2e
(fold_quantize=True). Recorded: the exported, prepared
and converted module code, every observer in graph order (what it observes, its users,
instance, kind, range; after calibration min/max, scale, zero point), the CRC-32 and
shape of every folded int8 weight, and the prepared and converted outputs on the sample
input. No weights and no activations are stored (the zoo's cache policy: the weights
live in build/zoo); the .npy files are the seeded batch and the outputs (tens of KB).
See docs/FORMATS.md section 9.
"""

import os
import sys

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # before torch, as in every tools/ script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import copy  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import warnings  # noqa: E402
import zipfile  # noqa: E402
import zlib  # noqa: E402

import torch  # noqa: E402
import torchvision  # noqa: E402
from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torch.ao.quantization.quantizer.xnnpack_quantizer import (  # noqa: E402
    XNNPACKQuantizer, get_symmetric_quantization_config)

import assetlib  # noqa: E402
import zoo_models  # noqa: E402
from pt2e_goldens import dtype_name, observer_modules, seeded_batch  # noqa: E402

SCRIPT = "tools/pt2e_zoo_goldens.py"
FORMAT = "pt2lab.pt2e_zoo"
VERSION = 1
LABEL = "torch 2.6 torch.ao"
GOLDEN_DIR = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "pt2e_zoo")
ZOO_MANIFEST = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "zoo", "manifest.json")
RANGE_TOLERANCE = 1e-5  # --check: relative, floats and printed code's decimals (as test_pt2e_zoo)
EXTRA_BATCHES = 1  # calibration batches after the sample input, as tools/pt2e_goldens.py
# The zoo's CNNs, built with tools/zoo_models.py's own builders. Every one but GoogLeNet
# is rebuilt from the seed: torchvision 0.21's code and initialisation give torch 2.14's
# model bit for bit (checked against the manifest's digests). GoogLeNet's init_weights
# draws other numbers in torchvision 0.21 than in 0.27, so it gets its weights from the
# zoo's own archive (FROM_ARCHIVE), still checked against the manifest.
MODELS = [
    "resnet18", "mobilenet_v2", "squeezenet1_1", "mobilenet_v3_small", "efficientnet_b0",
    "shufflenet_v2_x0_5", "mnasnet0_5", "regnet_x_400mf", "regnet_y_400mf", "densenet121",
    "inception_v3", "googlenet", "alexnet_reduced", "vgg11_reduced", "vgg11_bn_reduced",
    "resnext_reduced", "wide_resnet_reduced", "efficientnet_v2_reduced",
]
FROM_ARCHIVE = {"googlenet"}
# torch.export's serialized ScalarType codes (torch/_export/serde/schema.py) of the dtypes
# a zoo CNN's state_dict holds
ARCHIVE_DTYPES = {5: torch.int64, 7: torch.float32}

def zoo_entry(name: str) -> dict:
    with open(ZOO_MANIFEST, encoding="utf-8") as f:
        for m in json.load(f)["models"]:
            if m["name"] == name:
                return m
    raise SystemExit(f"{name} is not in {assetlib.rel(ZOO_MANIFEST)}")


def weights_digest(model) -> str:
    """tools/zoo_models.py's weights_digest: every parameter and persistent buffer in name
    order (what torch.export puts in ep.state_dict)."""
    h = hashlib.sha256()
    for fqn, t in sorted(model.state_dict().items()):
        h.update(fqn.encode("utf-8") + b"\0")
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def archive_state_dict(path: str) -> dict:
    """The weights torch 2.14 saved in a .pt2 archive (torch 2.6 cannot load the archive
    itself): each data/weights/ record is one tensor's raw little-endian storage, laid out
    as data/weights/model_weights_config.json's tensor_meta says."""
    with zipfile.ZipFile(path) as z:
        root = z.namelist()[0].split("/")[0]
        config = json.loads(z.read(f"{root}/data/weights/model_weights_config.json"))["config"]
        state = {}
        for fqn, entry in config.items():
            meta = entry["tensor_meta"]
            if entry["use_pickle"] or meta["dtype"] not in ARCHIVE_DTYPES:
                raise SystemExit(f"{assetlib.rel(path)}: {fqn}: unexpected weight encoding")
            data = bytearray(z.read(f"{root}/data/weights/{entry['path_name']}"))
            flat = torch.frombuffer(data, dtype=ARCHIVE_DTYPES[meta["dtype"]])
            state[fqn] = flat.as_strided([d["as_int"] for d in meta["sizes"]],
                                         [d["as_int"] for d in meta["strides"]],
                                         meta["storage_offset"]["as_int"]).clone()
    return state


def zoo_model(name: str):
    """The zoo's model and sample input, rebuilt as tools/zoo_models.py builds them (or, for
    FROM_ARCHIVE, with the weights of the zoo's own archive in build/zoo) and checked against
    the committed manifest's digests."""
    entry = zoo_entry(name)
    builder, _ = zoo_models.MODELS[name]
    torch.manual_seed(zlib.crc32(name.encode("utf-8")))
    model = builder().eval()
    if name in FROM_ARCHIVE:
        archive = os.path.join(zoo_models.CACHE_DIR, name, entry["files"]["export"])
        if not os.path.exists(archive):
            raise SystemExit(f"{name}: no {assetlib.rel(archive)}; make the zoo cache first: "
                             "bash scripts/torch_env.sh run sid python3 tools/zoo_models.py")
        model.load_state_dict(archive_state_dict(archive), strict=True)
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"{name}/input".encode("utf-8")))
    x = torch.randn(entry["input_shape"], generator=g)
    weights, sample = weights_digest(model), hashlib.sha256(x.numpy().tobytes()).hexdigest()
    if weights != entry["weights"] or sample != entry["input"]:
        raise SystemExit(f"{name}: torchvision {torchvision.__version__} under torch "
                         f"{torch.__version__} does not rebuild the zoo's model (weights "
                         f"{weights == entry['weights']}, input {sample == entry['input']})")
    return model, x, entry

def model_record(name: str, files: dict) -> dict:
    model, x, entry = zoo_model(name)

    def npy(key, tensor):
        path = f"{name}/{key}.npy"
        files[path] = assetlib.npy_bytes(tensor.detach().contiguous().numpy())
        return path

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notes
        module = torch.export.export_for_training(copy.deepcopy(model), (x,)).module()
        exported_code = module.code  # prepare_pt2e edits the module's graph in place
        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
        prepared = prepare_pt2e(module, quantizer)
    record = {
        "format": FORMAT,
        "version": VERSION,
        "producer": {"script": SCRIPT, "torch_version": torch.__version__,
                     "torchvision_version": torchvision.__version__, "label": LABEL},
        "model": name,
        # The zoo manifest's digests this model was checked against (the test checks the cache)
        "zoo": {"weights": entry["weights"], "input": entry["input"]},
        "quantizer": "XNNPACKQuantizer().set_global(get_symmetric_quantization_config())",
        "exported_code": exported_code,
        "prepared_code": prepared.code,
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
        })
    # The sample input is the zoo archive's own (the test reads it there); the seeded
    # batches are stored.
    batches = [x] + [seeded_batch(f"zoo/{name}", k, tuple(x.shape))
                     for k in range(1, EXTRA_BATCHES + 1)]
    record["calibration"] = ["sample"] + [npy(f"calibration_{k}", b)
                                          for k, b in enumerate(batches) if k > 0]
    with torch.no_grad():
        for b in batches:
            prepared(b)
        prepared_out = copy.deepcopy(prepared)(x)  # on a copy: running feeds the observers
    for entry_, (node, obs) in zip(observers, observer_modules(prepared)):
        scale, zero_point = obs.calculate_qparams()
        entry_.update({
            "min_val": float(obs.min_val.item()),
            "max_val": float(obs.max_val.item()),
            "scale": float(scale.item()),
            "zero_point": int(zero_point.item()),
        })
    record["observers"] = observers
    record["prepared_output"] = npy("prepared_output", prepared_out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        converted = convert_pt2e(prepared)
    record["converted_code"] = converted.code
    frozen = {}
    for node in converted.graph.nodes:
        if node.op == "get_attr" and node.target.startswith("_frozen_param"):
            t = getattr(converted, node.target).detach().contiguous()
            frozen[node.target] = {"dtype": dtype_name(t.dtype), "shape": list(t.shape),
                                   "crc32": zlib.crc32(t.numpy().tobytes())}
    record["frozen_params"] = frozen
    with torch.no_grad():
        record["converted_output"] = npy("converted_output", converted(x))
    return record


def build():
    assetlib.require_torch(torch.__version__, assetlib.TRIXIE_TORCH, SCRIPT)
    torch.set_num_threads(1)
    files = {}
    for name in MODELS:
        record = model_record(name, files)
        files[f"{name}.json"] = assetlib.json_text(record, inline_depth=3).encode("utf-8")
    return files


def generate(out_dir, quiet=False):
    files = build()
    for rel_path, data in sorted(files.items()):
        assetlib.write_bytes_atomic(os.path.join(out_dir, rel_path), data)
    if not quiet:
        print(f"wrote    {len(files)} files under tests/golden/pt2e_zoo ({LABEL})")


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
                # torch's own observer ranges and printed scales move in their last bits between
                # CPUs (alexnet_reduced: up to 1.2e-6 relative, resnext_reduced 7e-8).
                detail = assetlib.json_difference(json.loads(want), json.loads(data),
                                                  rel_tol=RANGE_TOLERANCE)
            elif rel_path.endswith("_output.npy"):
                detail = assetlib.npy_difference(want, data, assetlib.OUTPUT_TOLERANCE)
            else:
                detail = None if want == data else "bytes differ"
            status = "DIFF" if detail else "ok"
        failures += status != "ok"
        print(assetlib.report_line(status, f"tests/golden/pt2e_zoo/{rel_path}", detail))
    for rel_path in sorted(committed - set(fresh)):
        failures += 1
        print(assetlib.report_line("STALE", f"tests/golden/pt2e_zoo/{rel_path}",
                                   "nothing writes it"))
    return assetlib.finish_check(failures, "file(s)", SCRIPT, root="trixie")


def main(argv=None):
    return assetlib.generator_main(__doc__, GOLDEN_DIR, generate, check,
                                   check_help="regenerate in memory and compare with "
                                   "tests/golden/pt2e_zoo/",
                                   out_help="write DIR/... instead of tests/golden/pt2e_zoo/",
                                   argv=argv)


if __name__ == "__main__":
    sys.exit(main())
