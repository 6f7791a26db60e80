# SPDX-License-Identifier: Apache-2.0
"""Writes exported_attention.pt2: an nn.MultiheadAttention exported with torch.export (program "forward"). Its graph
reads the attention output through permute + view, which export chose because ATen's CPU attention returns a
transposed layout: a provider returning a contiguous output must be made to fit (test_exported_program.cpp).
Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_exported_attention.py"""
import os

import torch
from torch.export.pt2_archive._package import package_pt2


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 2)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
model = Attention().eval()
program = torch.export.export(model, (torch.randn(5, 1, 16),))
package_pt2(os.path.join(here, "exported_attention.pt2"), exported_programs={"forward": program})
