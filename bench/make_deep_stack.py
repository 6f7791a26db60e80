# SPDX-License-Identifier: Apache-2.0
"""Writes the 10,000-module model (3,333 blocks of LayerNorm -> Linear -> GELU on [2, 8], plus the
ModuleList and the root), scripted, for timing the first forward of a very large graph:
    ~/.cache/kforge/torch-2.11.0/bin/python bench/make_deep_stack.py OUT.pt [BLOCKS]
Then e.g. `time kforge run OUT.pt --input 'float32[2,8]' --graph-executor optimizing|direct`."""
import sys

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(8)
        self.proj = torch.nn.Linear(8, 8)
        self.act = torch.nn.GELU()

    def forward(self, x):
        return self.act(self.proj(self.norm(x)))


class DeepStack(torch.nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(blocks)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


if __name__ == "__main__":
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 3333
    torch.manual_seed(0)
    torch.jit.script(DeepStack(blocks).eval()).save(sys.argv[1])
