# SPDX-License-Identifier: Apache-2.0
"""Writes forked_pair.pt: a scripted model whose `worker` forks its child `act` twice (torch.jit.fork), on x and on
-x, and waits for both; `act` is a Linear and a gelu. The two tasks run concurrently on inter-op threads, so the
order their module calls start and end in differs from forward to forward: verify must match each of the plan's
calls to the baseline's with the same inputs and name the same module every run (test_verify.cpp). C++ TorchScript
has no fork builtin, hence Python. Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_forked_pair.py"""
import os

import torch


class Act(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.fc(x))


class Worker(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first = torch.jit.fork(self.act, x)
        second = torch.jit.fork(self.act, -x)
        return torch.jit.wait(first) + 2.0 * torch.jit.wait(second)


class Root(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.worker = Worker()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.worker(x) * 0.5


torch.manual_seed(0)
torch.jit.script(Root().eval()).save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "forked_pair.pt"))
