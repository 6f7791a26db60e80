# SPDX-License-Identifier: Apache-2.0
"""Writes constant_calls.trace.pt: a traced model whose `act` and root each call gelu on a tensor made inside the
forward's plain tensor attribute (not a buffer), which torch.jit.trace records as a tensor constant: a catalog call on constants only. A
scoped entry must serve it in its scope on every forward, under both executors, and a deactivated runtime leave the
original (test_runtime_semantics.cpp). Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_constant_calls.py"""
import os

import torch
import torch.nn.functional as F


class Act(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.ones(8)  # a plain attribute, not a buffer: the trace records a tensor constant

    def forward(self, x):
        return x + F.gelu(self.c)


class Root(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act()
        self.c = torch.ones(8)

    def forward(self, x):
        return self.act(x) + F.gelu(self.c)


here = os.path.dirname(os.path.abspath(__file__))
traced = torch.jit.trace(Root().eval(), (torch.randn(8),))
graph = str(traced.act.graph)
assert "aten::gelu" in graph and "CPUFloatType{8} ]]()" in graph, graph  # gelu of a tensor constant
traced.save(os.path.join(here, "constant_calls.trace.pt"))


class FrozenAct(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("c", torch.ones(8))
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return F.gelu(self.lin(x)) + F.gelu(self.c)


class FrozenRoot(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = FrozenAct()

    def forward(self, x):
        return self.act(x) + F.gelu(x)


# constant_calls.frozen.pt: the same kind of call on a buffer, scripted and frozen as users freeze for deployment.
# torch.jit.freeze inlines `act` and folds gelu(buffer) into a constant itself: two gelu calls remain, both at the root.
torch.manual_seed(0)
frozen = torch.jit.freeze(torch.jit.script(FrozenRoot().eval()))
assert str(frozen.graph).count("aten::gelu") == 2 and [n for n, _ in frozen.named_modules()] == [""], frozen.graph
frozen.save(os.path.join(here, "constant_calls.frozen.pt"))
