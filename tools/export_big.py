"""Real torch.export archives of big torchvision models for the page benchmark
(tools/big_bench.js); not committed, written under build/bench/ by default.
Run in the sid root (torch 2.14.1, torchvision 0.27):
    scripts/torch_env.sh run sid python3 tools/export_big.py build/bench densenet121 resnet50
Models are made with weights=None and a fixed seed (no download); they are
exported in eval mode on one f32[1, 3, 224, 224] input."""
import os
import sys

os.environ.setdefault("ATEN_CPU_CAPABILITY", "default")

import torch  # noqa: E402
import torchvision  # noqa: E402


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/bench"
    names = sys.argv[2:] or ["densenet121"]
    os.makedirs(out, exist_ok=True)
    for name in names:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        ep = torch.export.export(model, (x,))
        path = os.path.join(out, name + ".pt2")
        torch.export.save(ep, path)
        print(f"{path}: {len(ep.graph.nodes)} nodes, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
