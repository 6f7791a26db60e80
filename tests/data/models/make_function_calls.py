# SPDX-License-Identifier: Apache-2.0
"""Writes function_calls.script.pt and function_calls.trace.pt: one model whose modules call a free TorchScript
function (`scaled_gelu`, as user code and nn.LayerNorm's F.layer_norm do: a prim::CallFunction in the scripted graph),
and reshape by a traced size (prim::NumToTensor then aten::Int in the traced graph). LibTorch's graph
executor inlines such calls and removes such no-ops before it runs a graph; the runtime tests
(test_runtime_semantics.cpp) check that kforge's direct executor does the same while every call stays in its module's
scope. Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_function_calls.py"""
import os

import torch
import torch.nn.functional as F


def scaled_gelu(x: torch.Tensor, scale: float) -> torch.Tensor:
    return F.gelu(x) * scale


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return scaled_gelu(self.norm(x), 1.0).reshape(x.size(0), -1) + x


class FunctionCalls(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


torch.manual_seed(0)
here = os.path.dirname(os.path.abspath(__file__))
model = FunctionCalls().eval()
scripted = torch.jit.script(model)
assert "prim::CallFunction" in str(getattr(scripted.blocks, "0").graph), getattr(scripted.blocks, "0").graph
scripted.save(os.path.join(here, "function_calls.script.pt"))
traced = torch.jit.trace(model, torch.randn(2, 8))
assert "prim::NumToTensor" in str(getattr(traced.blocks, "0").graph), getattr(traced.blocks, "0").graph
traced.save(os.path.join(here, "function_calls.trace.pt"))
