#!/usr/bin/env python3
"""The model zoo: torchvision classifiers, transformer and recurrent layers exported by
torch 2.14.1, with what torch prints for them and their eager outputs, for
pt2lab's zoo test (tests/core/test_zoo.cpp, docs/FORMATS.md section 11).

    bash scripts/torch_env.sh run sid python3 tools/zoo_models.py          # cache + manifest
    bash scripts/torch_env.sh run sid python3 tools/zoo_models.py --check  # cache, compare manifest

The models' weights (tens of MB each) stay out of git: every run writes them
to the cache folder build/zoo/ (inside the clone, so the sid root sees it),
one folder per model:

    <name>/model.pt2       torch.export.export(model.eval(), (x,)) + torch.export.save
    <name>/inference.pt2   ep.run_decompositions({}), saved
    <name>/core_aten.pt2   ep.run_decompositions(), saved
    <name>/texts.json      {"export"|"inference"|"core_aten": {"graph", "code",
                           "readable", "module_code"}} as torch prints them
    <name>/output.npy      model(x), eager, x = the archive's own sample input

and tests/golden/zoo/manifest.json (committed) records, per model, the
SHA-256 of every text, of the weights' bytes and of the sample input, and the
output's sum and largest magnitude. --check regenerates the cache and compares
the manifest it would write with the committed one (texts and bytes exactly,
output figures within 1e-4), so the cache the test reads is torch's output.

weights=None (torchvision's own initialisation) under torch.manual_seed, eval
mode, batch 1; vision models at 64x64 so the whole zoo runs in seconds.
"""

import os
import sys

# Seeded data depends on the CPU kernels torch picks; pin them before torch loads.
os.environ["ATEN_CPU_CAPABILITY"] = "default"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hashlib  # noqa: E402
import json  # noqa: E402
import zlib  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchvision  # noqa: E402

import assetlib  # noqa: E402
import make_assets  # noqa: E402

SCRIPT = "tools/zoo_models.py"
FORMAT = "pt2lab.zoo"
VERSION = 1
CACHE_DIR = os.path.join(assetlib.REPO_ROOT, "build", "zoo")
MANIFEST = os.path.join(assetlib.REPO_ROOT, "tests", "golden", "zoo", "manifest.json")
LEVELS = {"inference": {}, "core_aten": None}  # run_decompositions argument (None: default)
OUTPUT_TOLERANCE = 1e-4
VISION_INPUT = (1, 3, 64, 64)


class SelfAttention(nn.Module):
    """nn.MultiheadAttention called as self-attention (query = key = value),
    returning both its outputs (the head-averaged weights too)."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x):
        out, weights = self.attn(x, x, x)
        return out, weights


class Recurrent(nn.Module):
    """nn.LSTM or nn.GRU (16 -> 32, batch_first, zero initial state), its outputs flat:
    output, h_n (, c_n)."""

    def __init__(self, cls):
        super().__init__()
        self.rnn = cls(16, 32, batch_first=True)

    def forward(self, x):
        out, state = self.rnn(x)
        return (out, *state) if isinstance(state, tuple) else (out, state)


def encoder(**kwargs):
    return lambda: nn.TransformerEncoderLayer(32, 4, 64, **kwargs)


V = torchvision.models


def vit_reduced():
    """torchvision's VisionTransformer class (vit_b_16's code: conv patches, class
    token, nn.MultiheadAttention encoder, GELU MLP) at 2 layers of width 32: its
    smallest shipped size is 86 M parameters, too big for a zoo that runs in seconds."""
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=2,
                             hidden_dim=32, mlp_dim=64, num_classes=10)


def convnext_reduced():
    """torchvision's ConvNeXt class (convnext_tiny's code: patchify stem, depthwise 7x7,
    channels-last LayerNorm, GELU MLP, layer scale) at one block per stage, widths 16/32/64:
    convnext_tiny is 28.6 M parameters (114 MB)."""
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    stages = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)]
    return ConvNeXt(stages, stochastic_depth_prob=0.0, num_classes=10)


def swin_reduced(v2=False):
    """torchvision's SwinTransformer class (swin_t's code, or swin_v2_t's with v2: shifted
    windows, relative position bias, patch merging) at embed 16, depths 1/1, 2 heads,
    window 4: swin_t is 28.3 M parameters (113 MB)."""
    from torchvision.models import swin_transformer as sw
    extra = {"block": sw.SwinTransformerBlockV2, "downsample_layer": sw.PatchMergingV2} \
        if v2 else {}
    return lambda: sw.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1],
                                      num_heads=[2, 2], window_size=[4, 4], num_classes=10,
                                      **extra)


def maxvit_reduced():
    """torchvision's MaxVit class (maxvit_t's code: MBConv with squeeze-excitation, block and
    grid attention) at stem 16, two stages of one layer (16, 32), head dim 8, partition 4
    on 64x64: maxvit_t is 30.9 M parameters (124 MB) and needs 224x224."""
    from torchvision.models.maxvit import MaxVit
    return MaxVit(input_size=(64, 64), stem_channels=16, partition_size=4,
                  block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                  stochastic_depth_prob=0.0, num_classes=10)


def alexnet_reduced():
    """torchvision's AlexNet class (alexnet's code: its five convolutions as shipped, adaptive
    average pooling to 6x6, dropout) with its classifier narrowed from 4096 to 64 units, 10
    classes: alexnet is 61.1 M parameters (244 MB), 96 % of them in the classifier's three
    Linear layers; the convolutions (2.5 M parameters) are AlexNet's own, hard-coded in the
    class. The narrowed Linear layers keep PyTorch's default initialisation (AlexNet has no
    initialisation of its own)."""
    from torchvision.models.alexnet import AlexNet
    model = AlexNet(num_classes=10)
    model.classifier = nn.Sequential(
        nn.Dropout(0.5), nn.Linear(256 * 6 * 6, 64), nn.ReLU(inplace=True),
        nn.Dropout(0.5), nn.Linear(64, 64), nn.ReLU(inplace=True), nn.Linear(64, 10))
    return model


def vgg_reduced(batch_norm):
    """torchvision's VGG class and make_layers (vgg11's code, vgg11_bn's with batch_norm:
    configuration "A", eight 3x3 convolutions and five max pools, adaptive average pooling
    to 7x7, its own initialisation of the convolutions) at a quarter of vgg11's widths
    (16 / 32 / 64 / 128 / 128), with the classifier narrowed from 4096 to 64 units, 10
    classes: vgg11 is 132.9 M parameters (531 MB), 93 % of them in the classifier, whose
    first Linear reads 512 x 7 x 7 values whatever the configuration, so VGG's classifier is
    replaced (the replacement keeps PyTorch's default initialisation, as at its width VGG's
    normal(0, 0.01) would shrink the logits to ~1e-3)."""
    from torchvision.models.vgg import VGG, make_layers

    def build():
        cfg = [16, "M", 32, "M", 64, 64, "M", 128, 128, "M", 128, 128, "M"]
        model = VGG(make_layers(cfg, batch_norm=batch_norm), num_classes=10)
        model.classifier = nn.Sequential(
            nn.Linear(128 * 7 * 7, 64), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(64, 64), nn.ReLU(True), nn.Dropout(0.5), nn.Linear(64, 10))
        return model
    return build


def _narrow_resnet():
    from torchvision.models.resnet import ResNet

    class NarrowResNet(ResNet):
        """torchvision's ResNet with every stage a quarter as wide (planes 16 / 32 / 64 / 128
        for 64 / 128 / 256 / 512; the stem stays 64): ResNet hard-codes its stage widths.
        Everything else, blocks, downsampling and initialisation, is ResNet's own code."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.fc = nn.Linear(self.inplanes, self.fc.out_features)  # the narrowed width

        def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
            return super()._make_layer(block, planes // 4, blocks, stride, dilate)
    return NarrowResNet


def resnext_reduced():
    """torchvision's ResNet class with Bottleneck, groups=32, width_per_group=4
    (resnext50_32x4d's code: grouped 3x3 convolutions, 32 groups) at one block per stage and
    a quarter of its widths (bottleneck widths 32 / 64 / 128 / 256, so 1 / 2 / 4 / 8 channels
    a group where resnext50_32x4d has 4 / 8 / 16 / 32; outputs 64 ... 512), 10 classes:
    resnext50_32x4d is 25.0 M parameters (100 MB)."""
    from torchvision.models.resnet import Bottleneck
    return _narrow_resnet()(Bottleneck, [1, 1, 1, 1], groups=32, width_per_group=4,
                            num_classes=10)


def wide_resnet_reduced():
    """torchvision's ResNet class with Bottleneck, width_per_group=128 (wide_resnet50_2's
    code: bottlenecks twice as wide as ResNet-50's) at one block per stage and a quarter of
    its widths (bottleneck widths 32 / 64 / 128 / 256, outputs 64 ... 512), 10 classes:
    wide_resnet50_2 is 68.9 M parameters (276 MB)."""
    from torchvision.models.resnet import Bottleneck
    return _narrow_resnet()(Bottleneck, [1, 1, 1, 1], width_per_group=128, num_classes=10)


def efficientnet_v2_reduced():
    """torchvision's EfficientNet class with efficientnet_v2_s's kind of configuration
    (FusedMBConv stages, then MBConv with squeeze-excitation; BatchNorm eps 1e-3) at two
    fused stages (16, 32) and two MBConv stages (48, 64) of one layer each, last channel
    256, 10 classes: efficientnet_v2_s is 21.5 M parameters (86 MB)."""
    from functools import partial

    from torchvision.models.efficientnet import (EfficientNet, FusedMBConvConfig,
                                                 MBConvConfig)
    stages = [FusedMBConvConfig(1, 3, 1, 16, 16, 1), FusedMBConvConfig(4, 3, 2, 16, 32, 1),
              MBConvConfig(4, 3, 2, 32, 48, 1), MBConvConfig(6, 3, 2, 48, 64, 1)]
    return EfficientNet(stages, dropout=0.2, stochastic_depth_prob=0.0, num_classes=10,
                        norm_layer=partial(nn.BatchNorm2d, eps=1e-03), last_channel=256)


# name -> (builder, input shape)
MODELS = {
    "resnet18": (V.resnet18, VISION_INPUT),
    "mobilenet_v2": (V.mobilenet_v2, VISION_INPUT),
    "mobilenet_v3_small": (V.mobilenet_v3_small, VISION_INPUT),
    "efficientnet_b0": (V.efficientnet_b0, VISION_INPUT),
    "squeezenet1_1": (V.squeezenet1_1, VISION_INPUT),
    "shufflenet_v2_x0_5": (V.shufflenet_v2_x0_5, VISION_INPUT),
    "regnet_y_400mf": (V.regnet_y_400mf, VISION_INPUT),
    "densenet121": (V.densenet121, VISION_INPUT),
    # GoogLeNet's auxiliary classifiers only run in training: left out (25 MB of unused weights)
    "googlenet": (lambda: V.googlenet(aux_logits=False, init_weights=True), VISION_INPUT),
    "mnasnet0_5": (V.mnasnet0_5, VISION_INPUT),
    "regnet_x_400mf": (V.regnet_x_400mf, VISION_INPUT),
    # Inception v3 needs at least 75 x 75; its auxiliary classifier only runs in training.
    # PyTorch's default initialisation: torchvision's own (truncated normal, std 0.1,
    # under eval BatchNorm's unit statistics) grows the logits to 1e9, where float32
    # steps are ~100 and no comparison within 1e-4 means anything.
    "inception_v3": (lambda: V.inception_v3(aux_logits=False, init_weights=False),
                     (1, 3, 75, 75)),
    "vit_reduced": (vit_reduced, VISION_INPUT),
    "convnext_reduced": (convnext_reduced, VISION_INPUT),
    "swin_reduced": (swin_reduced(), VISION_INPUT),
    "swin_v2_reduced": (swin_reduced(v2=True), VISION_INPUT),
    "maxvit_reduced": (maxvit_reduced, VISION_INPUT),
    "alexnet_reduced": (alexnet_reduced, VISION_INPUT),
    "vgg11_reduced": (vgg_reduced(batch_norm=False), VISION_INPUT),
    "vgg11_bn_reduced": (vgg_reduced(batch_norm=True), VISION_INPUT),
    "resnext_reduced": (resnext_reduced, VISION_INPUT),
    "wide_resnet_reduced": (wide_resnet_reduced, VISION_INPUT),
    "efficientnet_v2_reduced": (efficientnet_v2_reduced, VISION_INPUT),
    "transformer_encoder": (encoder(batch_first=True), (1, 10, 32)),
    "transformer_encoder_gelu_norm_first": (
        encoder(batch_first=True, activation="gelu", norm_first=True), (1, 10, 32)),
    "multihead_attention": (SelfAttention, (1, 10, 32)),
    "lstm": (lambda: Recurrent(nn.LSTM), (1, 10, 16)),
    "gru": (lambda: Recurrent(nn.GRU), (1, 10, 16)),
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def program_texts(ep) -> dict:
    module = ep.module()
    return {
        "graph": str(ep.graph),
        "code": ep.graph_module.code,
        "readable": ep.graph_module.print_readable(print_output=False),
        "module_code": module.code,
    }


def weights_digest(ep) -> str:
    h = hashlib.sha256()
    for fqn, t in sorted(ep.state_dict.items()):
        h.update(fqn.encode("utf-8") + b"\0")
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def build_one(name: str, folder: str) -> dict:
    builder, shape = MODELS[name]
    torch.manual_seed(zlib.crc32(name.encode("utf-8")))
    model = builder().eval()
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"{name}/input".encode("utf-8")))
    x = torch.randn(shape, generator=g)
    ep = torch.export.export(model, (x,))
    with torch.no_grad():
        out = model(x)
    outputs = list(out) if isinstance(out, tuple) else [out]
    programs = {"export": ep}
    for level, table in LEVELS.items():
        programs[level] = ep.run_decompositions({}) if table is not None else \
            ep.run_decompositions()
    files = {"export": "model.pt2", "inference": "inference.pt2", "core_aten": "core_aten.pt2"}
    for level, program in programs.items():
        make_assets.write_named_archive(os.path.join(folder, files[level]),
                                        lambda p, prog=program: torch.export.save(prog, p))
    texts = {level: program_texts(p) for level, p in programs.items()}
    assetlib.write_bytes_atomic(os.path.join(folder, "texts.json"),
                                assetlib.json_text(texts).encode("utf-8"))
    for i, o in enumerate(outputs):
        assetlib.write_bytes_atomic(os.path.join(folder, f"output_{i}.npy"),
                                    assetlib.npy_bytes(o.detach().numpy()))
    return {
        "name": name,
        "input_shape": list(shape),
        "files": files,
        "texts": {level: {k: sha256(v.encode("utf-8")) for k, v in t.items()}
                  for level, t in texts.items()},
        "weights": weights_digest(ep),
        "weight_bytes": sum(t.numel() * t.element_size() for t in ep.state_dict.values()),
        "input": sha256(x.numpy().tobytes()),
        "outputs": [{"shape": list(o.shape), "sum": round(float(o.double().sum()), 4),
                     "max_abs": round(float(o.abs().max()), 5)} for o in outputs],
    }


def build(cache_dir: str) -> dict:
    assetlib.require_torch(torch.__version__, assetlib.SID_TORCH, SCRIPT)
    torch.set_num_threads(1)
    models = []
    for name in MODELS:
        models.append(build_one(name, os.path.join(cache_dir, name)))
    doc = {"format": FORMAT, "version": VERSION, "torch_version": str(torch.__version__),
           "torchvision_version": str(torchvision.__version__), "script": SCRIPT,
           "cache": assetlib.rel(cache_dir) if cache_dir.startswith(assetlib.REPO_ROOT)
           else cache_dir, "models": models}
    assetlib.write_bytes_atomic(os.path.join(cache_dir, "manifest.json"),
                                assetlib.json_text(doc, inline_depth=3).encode("utf-8"))
    return doc


def generate(cache_dir: str) -> None:
    doc = build(cache_dir)
    assetlib.write_bytes_atomic(MANIFEST, assetlib.json_text(doc, inline_depth=3).encode("utf-8"))
    print(f"wrote    {assetlib.rel(MANIFEST)} and {len(doc['models'])} models in {doc['cache']}")


def _outputs_difference(want, got):
    if len(want) != len(got):
        return f"expected {len(want)} outputs, got {len(got)}"
    for k, (w, g) in enumerate(zip(want, got)):
        if w["shape"] != g["shape"]:
            return f"output {k}: shape {w['shape']} vs {g['shape']}"
        for key in ("sum", "max_abs"):
            if abs(w[key] - g[key]) > OUTPUT_TOLERANCE * max(1.0, abs(w[key])):
                return f"output {k}: {key} {w[key]} vs {g[key]}"
    return None


def check(cache_dir: str) -> int:
    if not os.path.exists(MANIFEST):
        print(assetlib.report_line("MISSING", assetlib.rel(MANIFEST), "not committed"))
        return 1
    with open(MANIFEST, encoding="utf-8") as f:
        committed = json.load(f)
    fresh = build(cache_dir)
    failures = 0
    head = {k: v for k, v in committed.items() if k not in ("models", "cache")}
    fresh_head = {k: v for k, v in fresh.items() if k not in ("models", "cache")}
    results = [("manifest", assetlib.json_difference(head, fresh_head))]
    old = {m["name"]: m for m in committed.get("models", [])}
    for m in fresh["models"]:
        want = old.get(m["name"])
        if want is None:
            results.append((m["name"], "not in the committed manifest"))
            continue
        exact = {k: v for k, v in want.items() if k != "outputs"}
        diff = assetlib.json_difference(exact, {k: v for k, v in m.items() if k != "outputs"})
        results.append((m["name"], diff or _outputs_difference(want["outputs"], m["outputs"])))
    for name in sorted(set(old) - set(MODELS)):
        results.append((name, "committed but no longer generated"))
    for label, diff in results:
        print(assetlib.report_line("DIFF" if diff else "ok", f"zoo/{label}", diff))
        failures += diff is not None
    return assetlib.finish_check(failures, "model(s)", SCRIPT)


def main(argv=None):
    return assetlib.generator_main(__doc__, CACHE_DIR, generate, check,
                                   check_help="regenerate the cache and compare with the "
                                   "committed manifest",
                                   out_help="the cache folder (default build/zoo)", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
