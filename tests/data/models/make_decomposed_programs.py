# SPDX-License-Identifier: Apache-2.0
"""Writes programs whose functions export decomposed into other ops, as deployment tools leave them
(test_exported_program.cpp, test_cli.cpp):
  decomposed_mlp.pt2    torch.export.save of ep.run_decompositions() (core ATen, what executorch and TensorRT take):
                        each linear is permute + addmm
  unwrapped_int8.pt2    torchao's int8 weight-only quantize_, then unwrap_tensor_subclass and torch.export.save: each
                        linear is t, reshape, to, mm, mul, add_, ... with _assert_tensor_metadata nodes between them
Both models make 3 linear, 1 relu and 1 gelu calls per forward in Python. No provider can serve a decomposed call: its
arguments are nowhere in the graph.
Run with the bootstrap venv's python (torchao installed): ~/.cache/kforge/torch-2.11.0/bin/python
make_decomposed_programs.py"""
import os

import torch
import torch.nn.functional as F


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 32)
        self.fc3 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc3(F.gelu(self.fc2(F.relu(self.fc1(x)))))


here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
x = torch.randn(4, 16)
model = Mlp().eval()
torch.export.save(torch.export.export(model, (x,)).run_decompositions(), os.path.join(here, "decomposed_mlp.pt2"))

from torchao.quantization import Int8WeightOnlyConfig, quantize_  # noqa: E402
from torchao.utils import unwrap_tensor_subclass  # noqa: E402

quantized = Mlp().eval()
quantize_(quantized, Int8WeightOnlyConfig())
unwrap_tensor_subclass(quantized)
torch.export.save(torch.export.export(quantized, (x,)), os.path.join(here, "unwrapped_int8.pt2"))
with torch.no_grad():
    print("decomposed_mlp.pt2 output sum:", model(x).sum().item(), "unwrapped_int8.pt2:", quantized(x).sum().item())
