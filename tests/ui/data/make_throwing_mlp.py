# SPDX-License-Identifier: Apache-2.0
"""Writes throwing_mlp.pt: a model whose forward fails inside a child module (a few KB, checked in).

The child `act` calls gelu and then views its 2-element result as 3 elements, which throws. With a provider
scoped to `act`, the pre-hook has installed it when the error happens and the post-hook never runs: the
leftover patch the GUI must show (docs/design/runtime-semantics.md R10/R11). Forward input: float32[2].

Run with the bootstrap venv's python:  python tests/ui/data/make_throwing_mlp.py
"""
import pathlib

import torch
import torch.nn.functional as F


class Act(torch.nn.Module):
    def forward(self, x):
        return F.gelu(x).view(3)


class ThrowingMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)
        self.act = Act()

    def forward(self, x):
        return self.act(self.fc(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    out = pathlib.Path(__file__).with_name("throwing_mlp.pt")
    torch.jit.script(ThrowingMlp().eval()).save(str(out))
    print(out)
