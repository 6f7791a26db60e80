# SPDX-License-Identifier: Apache-2.0
"""Writes TorchScript files whose calls the static inventory must follow (test_model_session.cpp), made as users
make them:
  helpers.script.pt    torch.jit.script of a model whose calls are made in methods other than forward: nn.Conv2d's
                       _conv_forward, an attention helper `_attn` (pad, softmax), a task forked on a helper method
                       (torch.jit.fork), and a tied weight (head.weight is embed.weight)
  weight_norm.trace.pt torch.jit.trace of a weight-normed Conv1d (parametrizations.weight_norm): its convolution is
                       aten::_convolution on a weight computed at run time, as in wav2vec2's positional convolution
Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_scripted_inventory.py"""
import os

import torch
import torch.nn.functional as F


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def _attn(self, x: torch.Tensor) -> torch.Tensor:
        x = F.pad(x, [0, 0])
        return F.softmax(x, -1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self._attn(x))


class Helpers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 2, 1)
        self.attn = Attention()
        self.embed = torch.nn.Linear(8, 8, bias=False)
        self.head = torch.nn.Linear(8, 8, bias=False)
        self.head.weight = self.embed.weight

    def _task(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [1, 2, 4, 8]
        y = self.conv(x)
        future = torch.jit.fork(self._task, y)
        y = self.attn(torch.jit.wait(future))
        return self.head(self.embed(y))


here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
torch.jit.script(Helpers().eval()).save(os.path.join(here, "helpers.script.pt"))

conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3, padding=1))
with torch.no_grad():
    traced = torch.jit.trace(conv.eval(), torch.randn(1, 2, 16))
traced.save(os.path.join(here, "weight_norm.trace.pt"))
print(traced.graph)
