# SPDX-License-Identifier: Apache-2.0
"""Writes cond_branches.pt2 (torch.export.save): a model whose `gate` module picks one of two submodules with
torch.cond, as users write data-dependent branches for export. Export records no module stack inside cond's branches,
so `hot`, `cold` and `cold`'s children run no node of their own: their calls belong to `gate`
(test_exported_program.cpp, test_cli.cpp).
Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_cond_branches.py"""
import os

import torch


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.hot = torch.nn.Linear(8, 8)
        self.cold = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())

    def forward(self, x):
        y = self.proj(x)

        def hot(v):
            return self.hot(v)

        def cold(v):
            return self.cold(v)

        return torch.cond(y.sum() > 0, hot, cold, (y,))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.gate(x))


here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
model = Model().eval()
program = torch.export.export(model, (torch.randn(2, 8),))
torch.export.save(program, os.path.join(here, "cond_branches.pt2"))
print("named_modules:", [name for name, _ in model.named_modules()])
