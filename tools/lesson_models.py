"""The lesson models of pt2lab (DESIGN.md section 2) and how each asset is seeded.

Model definitions, the recipe that turns a model into a deterministic (weights,
example input) pair, and load_asset_model (a model with an asset's weights, for
scripts running another torch); exporting is in make_assets.py. Import this
module after ATEN_CPU_CAPABILITY is set (tools/ entry scripts set it first).
"""

import copy
import io
import json
import os
import zipfile
from dataclasses import dataclass
from typing import Callable, Dict, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---------------------------------------------------------------------------
# ConvBnReLU / ConvReLU (M00-2, M00-4)
# ---------------------------------------------------------------------------


class ConvBnReLU(nn.Module):
    """conv -> bn -> relu; the mode (eval/train) is what M00-2 compares."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.relu(x)
        return x


class ConvReLU(nn.Module):
    """conv -> relu; M00-4 inserts an observer after the relu."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        x = self.relu(x)
        return x


# ---------------------------------------------------------------------------
# The three writing styles of conv -> relu -> mean -> linear (M00-1)
# ---------------------------------------------------------------------------


class StyleFunctional(nn.Module):
    """Style 1: bare parameters and torch.nn.functional calls.

    The parameters are initialised by building the same Conv2d(3, 8, 3) and
    Linear(8, 4) that the other two styles build, in the same order, so under
    the same seed all three styles hold identical weights and give identical
    outputs (a property the lesson can show).
    """

    def __init__(self):
        super().__init__()
        conv = nn.Conv2d(3, 8, 3, padding=1)
        fc = nn.Linear(8, 4)
        self.conv_weight = nn.Parameter(conv.weight.detach().clone())
        self.conv_bias = nn.Parameter(conv.bias.detach().clone())
        self.fc_weight = nn.Parameter(fc.weight.detach().clone())
        self.fc_bias = nn.Parameter(fc.bias.detach().clone())

    def forward(self, x):
        x = F.conv2d(x, self.conv_weight, self.conv_bias, padding=1)
        x = F.relu(x)
        x = x.mean(dim=(2, 3))
        x = F.linear(x, self.fc_weight, self.fc_bias)
        return x


class StyleModules(nn.Module):
    """Style 2: one nn.Module attribute per layer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.act = nn.ReLU()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(self.act(self.conv(x)).mean(dim=(2, 3)))


class StyleSequential(nn.Module):
    """Style 3: an nn.Sequential body, then the mean and the classifier."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = self.body(x)
        x = x.mean(dim=(2, 3))
        return self.fc(x)


# ---------------------------------------------------------------------------
# A small ResNet with torchvision's attribute names
# ---------------------------------------------------------------------------


class BasicBlock(nn.Module):
    """torchvision's BasicBlock, written with `out + identity` (not +=)."""

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        out = self.relu(out)
        return out


class ResNetStyle(nn.Module):
    """Stem + two one-block stages + pool + fc, named like torchvision's resnet."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(16, 16))
        # Like torchvision's _make_layer: the downsample branch is built first.
        downsample = nn.Sequential(nn.Conv2d(16, 32, 1, stride=2, bias=False), nn.BatchNorm2d(32))
        self.layer2 = nn.Sequential(BasicBlock(16, 32, stride=2, downsample=downsample))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return x


# ---------------------------------------------------------------------------
# Asset recipes
# ---------------------------------------------------------------------------

LESSON_INPUT_SHAPE = (2, 3, 16, 16)
RESNET_INPUT_SHAPE = (2, 3, 32, 32)
BN_WARMUP_STEPS = 3
# Warm-up batches are drawn as WARMUP_SHIFT + WARMUP_SCALE * randn, unlike the
# example input (plain randn), so running statistics and the example batch's
# own statistics differ visibly (eval vs train output in M00-2).
WARMUP_SHIFT, WARMUP_SCALE = 0.5, 1.5


@dataclass(frozen=True)
class AssetSpec:
    """How one lesson asset is built: model, export mode, input, seed."""

    name: str
    factory: Callable[[], nn.Module]
    mode: str  # "eval" or "train": the mode the model is exported in
    input_shape: Tuple[int, ...]
    seed: int = 0
    warm_up_bn: bool = False  # run BN_WARMUP_STEPS train-mode passes first


ASSETS = [
    AssetSpec("conv_bn_relu_eval", ConvBnReLU, "eval", LESSON_INPUT_SHAPE, warm_up_bn=True),
    AssetSpec("conv_bn_relu_train", ConvBnReLU, "train", LESSON_INPUT_SHAPE, warm_up_bn=True),
    AssetSpec("conv_relu", ConvReLU, "eval", LESSON_INPUT_SHAPE),
    AssetSpec("style_functional", StyleFunctional, "eval", LESSON_INPUT_SHAPE),
    AssetSpec("style_modules", StyleModules, "eval", LESSON_INPUT_SHAPE),
    AssetSpec("style_sequential", StyleSequential, "eval", LESSON_INPUT_SHAPE),
    AssetSpec("resnet_style", ResNetStyle, "eval", RESNET_INPUT_SHAPE, warm_up_bn=True),
]


def _warm_up_batch_norm(model: nn.Module, input_shape) -> None:
    """Give every BatchNorm non-trivial running statistics.

    Runs BN_WARMUP_STEPS train-mode forward passes on seeded inputs under
    no_grad. The passes run on a float64 copy and the statistics are rounded
    back to float32: convolution kernels differ slightly between CPUs, and
    float64 keeps the stored float32 statistics bit-identical everywhere.
    """
    shadow = copy.deepcopy(model).double().train()
    with torch.no_grad():
        for _ in range(BN_WARMUP_STEPS):
            batch = WARMUP_SHIFT + WARMUP_SCALE * torch.randn(input_shape)
            shadow(batch.double())
    shadow_buffers = dict(shadow.named_buffers())
    with torch.no_grad():
        for name, buf in model.named_buffers():
            buf.copy_(shadow_buffers[name].to(buf.dtype))


def build_asset_model(spec: AssetSpec):
    """Returns (model in its export mode, example input) for one asset.

    Everything is drawn from torch's global generator after manual_seed, in a
    fixed order: parameters, warm-up inputs, example input. Assets with the
    same seed and model (the eval/train pair) therefore start identical.
    """
    torch.manual_seed(spec.seed)
    model = spec.factory()
    if spec.warm_up_bn:
        _warm_up_batch_norm(model, spec.input_shape)
    example = torch.randn(spec.input_shape)
    model.train(spec.mode == "train")
    return model, example


# ---------------------------------------------------------------------------
# A lesson model holding the weights a committed asset stores
# ---------------------------------------------------------------------------

ASSET_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "assets", "graphs")


def archive_records(path: str) -> Dict[str, bytes]:
    """{record name inside the root folder: bytes} of a .pt2 archive."""
    with zipfile.ZipFile(path) as zf:
        return {name.split("/", 1)[1] if "/" in name else name: zf.read(name)
                for name in zf.namelist()}


def archive_state(records: Dict[str, bytes]) -> Dict[str, torch.Tensor]:
    """Parameters and buffers from data/weights/ (docs/FORMATS.md section 1), read
    with torch's own dtype codes; works with any torch that has torch._export."""
    from torch._export.serde.serialize import _SERIALIZE_TO_TORCH_DTYPE

    dtype_of = {int(code): dtype for code, dtype in _SERIALIZE_TO_TORCH_DTYPE.items()}
    config = json.loads(records["data/weights/model_weights_config.json"])["config"]
    state = {}
    for fqn, entry in config.items():
        if entry["use_pickle"]:
            raise ValueError(f"{fqn}: pickled weights are not read here")
        meta = entry["tensor_meta"]
        dtype = dtype_of[meta["dtype"]]
        raw = records["data/weights/" + entry["path_name"]]
        storage = (torch.frombuffer(bytearray(raw), dtype=dtype) if raw
                   else torch.empty(0, dtype=dtype))
        state[fqn] = torch.as_strided(storage, [s["as_int"] for s in meta["sizes"]],
                                      [s["as_int"] for s in meta["strides"]],
                                      meta["storage_offset"]["as_int"]).clone()
    return state


def load_asset_model(name: str):
    """(model with the archive's weights in its export mode, the archive's sample input)
    for assets/graphs/<name>.pt2. Every parameter and buffer comes from the archive."""
    spec = next(s for s in ASSETS if s.name == name)
    records = archive_records(os.path.join(ASSET_DIR, f"{name}.pt2"))
    model = spec.factory()
    model.load_state_dict(archive_state(records), strict=True)
    model.train(spec.mode == "train")
    (x,), _ = torch.load(io.BytesIO(records["data/sample_inputs/model.pt"]))
    return model, x
