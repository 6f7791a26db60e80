# SPDX-License-Identifier: Apache-2.0
"""Writes upsampling.script.pt and upsampling.trace.pt: a decoder head that upsamples as segmentation and diffusion
models do, `up` with F.interpolate(mode="bilinear") and `near` with mode="nearest" (scale 2, 1x4x8x8 input). Scripted,
bilinear is aten::upsample_bilinear2d.vec, a Variant form of interpolate (passed to providers as is), and nearest is
its normal form; traced, both are the overloads without `.vec`. Re-validation tests (test_revalidate.cpp) load them.
Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_upsampling.py"""
import os

import torch
import torch.nn.functional as F


class Bilinear(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)


class Nearest(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2.0, mode="nearest")


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = Bilinear()
        self.near = Nearest()

    def forward(self, x):
        return self.up(x) + self.near(x)


here = os.path.dirname(os.path.abspath(__file__))
model = Head().eval()
x = torch.randn(1, 4, 8, 8)
scripted = torch.jit.script(model)
assert "aten::upsample_bilinear2d" in str(scripted.up.inlined_graph)
scripted.save(os.path.join(here, "upsampling.script.pt"))
torch.jit.trace(model, x).save(os.path.join(here, "upsampling.trace.pt"))
