# SPDX-License-Identifier: Apache-2.0
"""Writes forked_gelu.pt: a scripted model whose root forward forks its child's forward (torch.jit.fork) and waits
for it; the child calls gelu. The R12 async-task tests (test_runtime_threads.cpp) load it: the forked task and the
continuation after torch.jit.wait run on inter-op pool threads. C++ TorchScript has no fork builtin, hence Python.
Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_forked_gelu.py"""
import os

import torch


class Act(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x)


class Forking(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        future = torch.jit.fork(self.act, x)
        return torch.jit.wait(future) + torch.nn.functional.gelu(x)


torch.jit.script(Forking().eval()).save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "forked_gelu.pt"))
