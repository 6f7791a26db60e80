# SPDX-License-Identifier: Apache-2.0
"""Writes traced_branches.trace.pt: a traced model whose `blk` is called twice with a flag that takes another branch,
`self.blk(x, False) + self.blk(x, True)`: the tracer records the two calls as two methods of `blk`, forward (relu)
and forward1 (gelu). The inventory must read both (test_model_session.cpp): it read `forward` only, so `plan
validate` said gelu was called nowhere while `run` served it. Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_traced_branches.py"""
import os

import torch
import torch.nn.functional as F


class Blk(torch.nn.Module):
    def forward(self, x: torch.Tensor, act: bool) -> torch.Tensor:
        return F.gelu(x) if act else F.relu(x)


class Root(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blk = Blk()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blk(x, False) + self.blk(x, True)


traced = torch.jit.trace(Root().eval(), (torch.randn(2, 8),))
traced.save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "traced_branches.trace.pt"))
