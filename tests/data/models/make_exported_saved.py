# SPDX-License-Identifier: Apache-2.0
"""Writes the .pt2 packages made as their users make them (test_exported_program.cpp):
  saved_block.pt2       torch.export.save of a small block (program "model"), with a tied weight: `head` and `embed`
                        hold one tensor
  two_programs.pt2      package_pt2 with two programs, "encode" and "decode" (no "model" or "forward")
  higher_order.pt2      torch.export.save of a model whose forward uses the higher-order ops export emits for ordinary
                        code: autocast turned off around a submodule (wrap_with_autocast), a no_grad block
                        (wrap_with_set_grad_enabled) and torch.cond with a submodule in each branch
  higher_order.positive.pt, higher_order.negative.pt   its inputs for each branch (ones, minus ones)
Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_exported_saved.py"""
import os

import torch
import torch.nn.functional as F
from torch.export.pt2_archive._package import package_pt2


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 8, bias=False)
        self.norm = torch.nn.LayerNorm(8)
        self.head = torch.nn.Linear(8, 8, bias=False)
        self.head.weight = self.embed.weight  # tied, as a language model ties its head to its embedding

    def forward(self, x):
        return self.head(F.gelu(self.norm(self.embed(x))))


class Act(torch.nn.Module):
    def forward(self, x):
        return F.gelu(x)


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(8, 8)
        self.quiet = Act()
        self.loud = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
        self.calm = Act()
        self.out = torch.nn.Linear(8, 4)

    def forward(self, x):
        with torch.autocast("cpu", enabled=False):
            y = self.inner(x)
        with torch.no_grad():
            y = F.silu(y)

        def positive(v):
            return self.loud(v)

        def negative(v):
            return self.calm(v)

        y = torch.cond(x.sum() > 0, positive, negative, (y,))  # the input's sign picks the branch
        return self.out(self.quiet(y))


here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
x = torch.randn(2, 8)
torch.export.save(torch.export.export(Block().eval(), (x,)), os.path.join(here, "saved_block.pt2"))

encode = torch.export.export(torch.nn.Linear(8, 4).eval(), (x,))
decode = torch.export.export(Act().eval(), (torch.randn(2, 4),))
package_pt2(os.path.join(here, "two_programs.pt2"), exported_programs={"encode": encode, "decode": decode})

model = Branchy().eval()
program = torch.export.export(model, (x,))
torch.export.save(program, os.path.join(here, "higher_order.pt2"))
for name, sign in (("positive", 1.0), ("negative", -1.0)):
    torch.save(sign * torch.ones(2, 8), os.path.join(here, f"higher_order.{name}.pt"))
with torch.no_grad():
    # The references the test checks against: both branches' outputs, from the eager model.
    print("higher_order.pt2 targets:", sorted({str(n.target) for n in program.graph.nodes if n.op == "call_function"}))
    print("positive:", model(torch.ones(2, 8)).sum().item(), "negative:", model(-torch.ones(2, 8)).sum().item())
