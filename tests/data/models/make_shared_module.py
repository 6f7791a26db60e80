# SPDX-License-Identifier: Apache-2.0
"""Writes shared_module.script.pt (torch.jit.script) and shared_module.pt2 (torch.export.save) of a model whose
submodule is assigned to two attributes (`self.b = self.a`) and called through both. Python's named_modules() lists it
once, as "a"; every saved form holds two: TorchScript copies the module per attribute (the loaded model's
named_modules() is "", "a", "b"), and export records each call under the path it was made through. kforge follows
the saved model (test_model_session.cpp). Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_shared_module.py"""
import os

import torch
import torch.nn.functional as F


class Act(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


class Shared(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Act()
        self.b = self.a

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(x) + 2 * self.b(x)


here = os.path.dirname(os.path.abspath(__file__))
model = Shared().eval()
assert [name for name, _ in model.named_modules()] == ["", "a"]
scripted = torch.jit.script(model)
scripted.save(os.path.join(here, "shared_module.script.pt"))
assert [name for name, _ in torch.jit.load(os.path.join(here, "shared_module.script.pt")).named_modules()] == ["", "a", "b"]
torch.export.save(torch.export.export(model, (torch.randn(4),)), os.path.join(here, "shared_module.pt2"))
