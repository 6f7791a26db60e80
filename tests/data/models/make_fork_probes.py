# SPDX-License-Identifier: Apache-2.0
"""Writes scripted models whose forwards fork tasks, for the runtime's R10-R12 tests (test_runtime_threads.cpp):
  fork_task_cse.pt     the root forks a helper method that calls the scoped `act` and gelu on the same input
                       outside it: after inlining, the optimized executor's common subexpression elimination would
                       merge the two gelus unless the scope ops order them; the task's helper is planned on the
                       inter-op thread, which must use the session's executor
  fork_wait_raise.pt   the root forks `act`, waits, then calls `failing`, which raises after its gelu: when the wait
                       resumes the forward on another thread, `failing`'s scope entries are pushed there and its exit
                       never runs (leftovers of a forward that ended on another thread)
  fork_in_block.pt     `block` forks a helper method (no module of its own) that calls gelu, waits for it and calls
                       relu after the wait: the forked gelu and the relu of the continuation are `block`'s work
                       (test_profiling.cpp, test_optimizer.cpp)
C++ TorchScript has no fork builtin, hence Python. Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_fork_probes.py"""
import os

import torch
import torch.nn.functional as F


class Act(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


class ForkTaskCse(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act()

    def _task(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x) + 2 * F.gelu(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.jit.wait(torch.jit.fork(self._task, x))


class Failing(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.gelu(x)
        if y.numel() > 0:
            raise RuntimeError("planted failure after the wait")
        return y


class ForkWaitRaise(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act()
        self.failing = Failing()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        future = torch.jit.fork(self.act, x)
        return self.failing(torch.jit.wait(future))


class ForkingBlock(torch.nn.Module):
    def _task(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        future = torch.jit.fork(self._task, x)
        return F.relu(torch.jit.wait(future))


class ForkInBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = ForkingBlock()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x) + 1


here = os.path.dirname(os.path.abspath(__file__))
torch.jit.script(ForkTaskCse().eval()).save(os.path.join(here, "fork_task_cse.pt"))
torch.jit.script(ForkWaitRaise().eval()).save(os.path.join(here, "fork_wait_raise.pt"))
torch.jit.script(ForkInBlock().eval()).save(os.path.join(here, "fork_in_block.pt"))
