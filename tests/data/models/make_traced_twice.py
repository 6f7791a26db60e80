# SPDX-License-Identifier: Apache-2.0
"""Writes traced_twice.trace.pt: a torch.jit.trace'd model whose submodules run more than once per forward, as in
diffusers' ResnetBlock2D (one `nonlinearity` SiLU called twice) and Hugging Face models that reuse one dropout or
activation: the trace saves the second and later calls as other methods (forward1, forward2). `block.act` (nn.GELU)
runs twice inside `block`, `act` (nn.GELU) three times in the root, `block.proj` (nn.Linear) twice. The runtime and
the inventory tests (test_runtime_semantics.cpp) load it. Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_traced_twice.py"""
import os

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = torch.nn.GELU()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.proj(self.act(x))
        return self.proj(self.act(h)) + x


class TracedTwice(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.act = torch.nn.GELU()

    def forward(self, x):
        y = self.block(self.act(x))
        return self.act(y) + self.act(x)


torch.manual_seed(0)
traced = torch.jit.trace(TracedTwice().eval(), torch.randn(2, 8))
assert traced.block.act._c._type().method_names() == ["forward", "forward1"], traced.block.act._c._type().method_names()
traced.save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "traced_twice.trace.pt"))
