# SPDX-License-Identifier: Apache-2.0
"""Writes float64_gelu.pt: a model without parameters whose child `act` calls gelu (a few KB, checked in).

Fed float64 inputs (the tests set the input spec float64[2,8]), it makes providers that only compute float32
and bfloat16, such as CpuGeluProvider, decline the call: the runtime runs the original gelu and reports the
call as the original's, and the plan editor shows the entry's declines.

Run with the bootstrap venv's python:  python tests/ui/data/make_float64_gelu.py
"""
import pathlib

import torch
import torch.nn.functional as F


class Act(torch.nn.Module):
    def forward(self, x):
        return F.gelu(x)


class Float64Gelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act()

    def forward(self, x):
        return self.act(x) + 1.0


if __name__ == "__main__":
    out = pathlib.Path(__file__).with_name("float64_gelu.pt")
    torch.jit.script(Float64Gelu().eval()).save(str(out))
    print(out)
