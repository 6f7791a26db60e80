# SPDX-License-Identifier: Apache-2.0
"""Writes scripted_constant_calls.script.pt, its input (scripted_constant_calls.input.pt) and what Python computes
from that input (scripted_constant_calls.expected.json): a scripted model whose `act` calls catalog functions on
constants through TorchScript functions, as users write them: F.relu and F.layer_norm of torch.linspace (the scripted
torch.nn.functional wrappers are prim::CallFunctions), a @torch.jit.script helper that calls F.gelu on a constant, a
helper whose constant result is F.silu's operand, and a helper given a constant operand by its caller (F.softmax).
The root makes the same relu call outside `act`. LibTorch's optimized executor inlines the functions and would fold
every one of these calls into a constant while it optimises; the runtime tests (test_runtime_constant_functions.cpp)
check that each is served in `act` on every forward under both executors and that deactivation restores the output
Python computes. Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_scripted_constant_calls.py"""
import json
import os

import torch
import torch.nn.functional as F


@torch.jit.script
def helper_gelu() -> torch.Tensor:
    return F.gelu(torch.linspace(-3.0, 3.0, 8))


def ramp() -> torch.Tensor:
    return torch.linspace(-1.0, 1.0, 8) * 2.0


def softmax_of(t: torch.Tensor) -> torch.Tensor:
    return F.softmax(t, dim=0)


class Act(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x + F.relu(torch.linspace(-2.0, 2.0, 8)) + F.layer_norm(torch.linspace(0.0, 1.0, 8), [8])
                + helper_gelu() + F.silu(ramp()) + softmax_of(torch.linspace(0.0, 1.0, 8)))


class Root(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x) + F.relu(torch.linspace(-2.0, 2.0, 8))


here = os.path.dirname(os.path.abspath(__file__))
scripted = torch.jit.script(Root().eval())
graph = str(scripted.act.graph)
assert graph.count("prim::CallFunction") == 6 and "aten::relu" not in graph, graph
scripted.save(os.path.join(here, "scripted_constant_calls.script.pt"))

x = torch.arange(8, dtype=torch.float32) / 4.0
torch.save(x, os.path.join(here, "scripted_constant_calls.input.pt"))
with torch.no_grad():
    output = scripted(x)
with open(os.path.join(here, "scripted_constant_calls.expected.json"), "w") as out:
    json.dump({"output": output.tolist(), "output_sum": output.sum().item()}, out, indent=1)
    out.write("\n")
