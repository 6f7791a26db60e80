# SPDX-License-Identifier: Apache-2.0
"""Writes shared_module.script.pt (torch.jit.script) and shared_module.pt2 (torch.export.save) of a model whose
submodule is assigned to two attributes (`self.b = self.a`) and called through both. Python's named_modules() lists it
once, as "a"; these saved forms hold two: TorchScript copies the module per attribute (the loaded model's
named_modules() is "", "a", "b"), and export records each call under the path it was made through. kforge follows
the saved model (test_model_session.cpp). And shared_scripted_first.script.pt: the submodule scripted before it is
assigned to both attributes, which TorchScript does not copy: the loaded model lists "a" and "b", one object. Run with the bootstrap venv's python:
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

# A submodule scripted first and then assigned twice stays one object in the saved model.
class SharedScriptedFirst(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.a = act
        self.b = act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(x) + 2 * self.b(x)


first = torch.jit.script(SharedScriptedFirst(torch.jit.script(Act())).eval())
first.save(os.path.join(here, "shared_scripted_first.script.pt"))
loaded = torch.jit.load(os.path.join(here, "shared_scripted_first.script.pt"))
assert [name for name, _ in loaded.named_modules()] == ["", "a", "b"]
