# SPDX-License-Identifier: Apache-2.0
"""Writes no_inputs.script.pt: a scripted model whose forward takes no argument (a generator of a fixed tensor, a
model with its input baked into a buffer). Every command runs it without --input. Run with the
bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_no_inputs.py"""
import os

import torch
import torch.nn.functional as F


class Head(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x) * 2.0


class NoInputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seed", torch.linspace(-2.0, 2.0, 16).reshape(1, 16))
        self.head = Head()

    def forward(self) -> torch.Tensor:
        return self.head(self.seed)


here = os.path.dirname(os.path.abspath(__file__))
torch.jit.script(NoInputs().eval()).save(os.path.join(here, "no_inputs.script.pt"))
