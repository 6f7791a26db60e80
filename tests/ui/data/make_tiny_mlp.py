# SPDX-License-Identifier: Apache-2.0
"""Writes tiny_mlp.pt, the TorchScript file the UI tests open and drop (a few KB, checked in).

Run with the bootstrap venv's python:  python tests/ui/data/make_tiny_mlp.py
"""
import pathlib

import torch
import torch.nn.functional as F


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 16)
        self.proj = torch.nn.Linear(16, 8)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class TinyMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(8)
        self.mlp = Mlp()
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return F.softmax(self.head(self.mlp(self.norm(x))), dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    out = pathlib.Path(__file__).with_name("tiny_mlp.pt")
    torch.jit.script(TinyMlp().eval()).save(str(out))
    print(out)
