# SPDX-License-Identifier: Apache-2.0
"""Writes custom_op.script.pt: a scripted model whose forward calls a custom op, kforge_test::scale(x, s) = x * s, as
models calling torchvision::nms or a team's own kernels do. The op is defined here with torch.library (a Python
implementation) and in C++ by tests/plugins/custom_ops.cpp (the library the tests load with --ops-library): the saved
model names the op and loads only where a library defines it. Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_custom_op.py"""
import os

import torch

library = torch.library.Library("kforge_test", "DEF")
library.define("scale(Tensor x, float s) -> Tensor")
library.impl("scale", lambda x, s: x * s, "CompositeExplicitAutograd")


class Scaled(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.kforge_test.scale(torch.relu(x), 2.0)


scripted = torch.jit.script(Scaled().eval())
assert "kforge_test::scale" in str(scripted.graph)
scripted.save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "custom_op.script.pt"))
