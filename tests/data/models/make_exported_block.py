# SPDX-License-Identifier: Apache-2.0
"""Writes exported_block.pt2 (a torch.export package, program "forward"), exported_block_core.pt2 (the same program
decomposed to core ATen) and exported_block.expected.json (what
Python says of the same model: named_modules() paths and types, own parameter counts, the torch.nn.functional
calls each module's forward makes, and its output on the package's sample input). test_exported_program.cpp reads both. The model has what real exports have:
nested modules, a ModuleList (a container never called), a module called twice, functional calls in the root,
an in-place activation and a Linear.
Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_exported_block.py"""
import json
import os

import torch
import torch.nn.functional as F
from torch.export.pt2_archive._package import package_pt2


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.act = torch.nn.ReLU(inplace=True)
        self.down = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(16)
        self.mlp = Mlp()

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.shared = torch.nn.Linear(16, 16)

    def forward(self, x):
        x = F.gelu(x)
        for block in self.blocks:
            x = block(x)
        x = self.shared(self.shared(x))  # one module called twice
        return F.softmax(x, dim=-1)


here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
model = Model().eval()
example = (torch.randn(2, 16),)
program = torch.export.export(model, example)
package_pt2(os.path.join(here, "exported_block.pt2"), exported_programs={"forward": program})
# The same program decomposed to core ATen (linear -> permute + addmm, ...): each node still names the function it
# came from (torch_fn), which is how kforge counts and profiles the calls of decomposed functions.
package_pt2(os.path.join(here, "exported_block_core.pt2"), exported_programs={"forward": program.run_decompositions()})

# Python's view, for the test to compare with.
calls = {  # module path -> {function: calls in its own forward}, as written above
    "": {"gelu": 1, "softmax": 1},
    "blocks.0": {}, "blocks.1": {},
    "blocks.0.norm": {"layer_norm": 1}, "blocks.1.norm": {"layer_norm": 1},
    "blocks.0.mlp.up": {"linear": 1}, "blocks.1.mlp.up": {"linear": 1},
    "blocks.0.mlp.act": {"relu": 1}, "blocks.1.mlp.act": {"relu": 1},
    "blocks.0.mlp.down": {"linear": 1}, "blocks.1.mlp.down": {"linear": 1},
    "shared": {"linear": 2},
}
with torch.no_grad():
    output = model(*example)
expected = {
    # The eager output on the package's sample input (data/sample_inputs/forward.pt), flattened.
    "output_shape": list(output.shape),
    "output": output.flatten().tolist(),
    "modules": [{"path": name, "type": type(m).__name__,
                 "parameters": sum(p.numel() for p in m.parameters(recurse=False)),
                 "functions": calls.get(name, {})}
                for name, m in model.named_modules()],
}
with open(os.path.join(here, "exported_block.expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
    f.write("\n")
