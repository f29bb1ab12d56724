"""The template lesson's model: a two-layer MLP, small enough to read whole.

    python3 tools/teacher_export.py tools/lesson_template/tiny_model.py:make \
        --out my_course/assets/graphs/tiny_mlp.pt2

teacher_export.py seeds torch before it calls make(), so the weights and the
example input are the same on every run. Replace this file with your own model:
make() only has to return (model, example_inputs).
"""

import torch
import torch.nn as nn


class TinyMLP(nn.Module):
    """fc1 -> relu -> fc2: 4 features in, 2 scores out."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def make():
    """(model, example_inputs): the model and one batch of 3 samples."""
    model = TinyMLP()
    return model, (torch.randn(3, 4),)
