#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torchao-quantized exports as users make them: quantize_(model, Int8WeightOnlyConfig()) (and the int8 dynamic-
activation config), torch.export.export, torch.export.save. Their weights are tensor subclasses pickled with their
Python class, whose ops run in Python: every command refuses them naming the class, torchao and its config, and the
way out; the program exported after torchao.utils.unwrap_tensor_subclass runs with Python's outputs. Exit 77: torchao
is missing from the venv."""
import argparse
import json
import math
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, import_or_skip, kforge  # noqa: E402

import torch

(torchao,) = import_or_skip("torchao")
from torchao.quantization import Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig, quantize_  # noqa: E402
from torchao.utils import unwrap_tensor_subclass  # noqa: E402


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def quantized(config, unwrap):
    torch.manual_seed(0)
    model = Mlp().eval()
    quantize_(model, config)
    if unwrap:
        unwrap_tensor_subclass(model)
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    x = torch.randn(4, 16)
    with tempfile.TemporaryDirectory() as folder:
        inputs = os.path.join(folder, "x.pt")
        torch.save((x,), inputs)
        for config in (Int8WeightOnlyConfig(), Int8DynamicActivationInt8WeightConfig()):
            name = type(config).__name__
            model = quantized(config, unwrap=False)
            path = os.path.join(folder, name + ".pt2")
            torch.export.save(torch.export.export(model, (x,)), path)
            weight_class = type(model.fc1.weight)
            class_name = f"{weight_class.__module__}.{weight_class.__qualname__}"
            for command in (["run", path, "--inputs-file", inputs], ["modules", path], ["profile", path,
                                                                                          "--inputs-file", inputs]):
                refused = kforge(args.kforge, *command, expect=1).stderr
                check("'fc1.weight'" in refused and class_name.split(".")[-1] in refused and "torchao" in refused
                      and "unwrap_tensor_subclass" in refused and "--compiled" in refused,
                      f"{name}: {command[0]} names {class_name}, torchao and the way out: {refused.strip()}")

            unwrapped = quantized(config, unwrap=True)
            with torch.no_grad():
                expected = float(unwrapped(x).double().sum())
            plain = os.path.join(folder, name + "_unwrapped.pt2")
            torch.export.save(torch.export.export(unwrapped, (x,)), plain)
            run = json.loads(kforge(args.kforge, "run", plain, "--inputs-file", inputs, "--json").stdout)
            got = run["outputs"][0]["sum"]
            check(math.isclose(got, expected, rel_tol=1e-5, abs_tol=1e-5),
                  f"{name}: unwrapped (unwrap_tensor_subclass) it runs: kforge {got} equals Python {expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
