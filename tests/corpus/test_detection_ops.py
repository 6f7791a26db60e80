#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Models that call a library's custom ops, as users deploy them: torchvision's detection models, scripted with random
weights (weights=None), call torchvision::nms from torchvision's own ops library (the wheel's torchvision/_C.so, a
Python extension). Without the library kforge names the op and the option; with `--ops-library torchvision/_C.so`
(loaded in kforge's process, which has no Python interpreter) the model runs with outputs equal to Python's and its
profile shows nms as an op. Exit 77: torchvision is missing from the venv (run scripts/bootstrap)."""
import argparse
import json
import math
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, kforge  # noqa: E402

try:
    import torch
    import torchvision
except ImportError:
    print("torchvision is not installed in this Python (scripts/bootstrap installs it)")
    sys.exit(77)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    library = os.path.join(os.path.dirname(torchvision.__file__), "_C.so")
    torch.manual_seed(0)
    model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    scripted = torch.jit.script(model)
    images = [torch.rand(3, 320, 320)]
    with torch.no_grad():
        _, detections = scripted(images)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "ssdlite.script.pt")
        inputs = os.path.join(folder, "ssdlite.input.pt")
        scripted.save(path)
        torch.save((images,), inputs)

        refused = kforge(args.kforge, "run", path, "--inputs-file", inputs, expect=1)
        check("custom op 'torchvision::nms'" in refused.stderr and "--ops-library" in refused.stderr
              and "torchvision/_C.so" in refused.stderr, "without its library the model names torchvision::nms, "
              "--ops-library and the wheel's _C.so: " + refused.stderr.strip())

        run = json.loads(kforge(args.kforge, "--ops-library", library, "run", path, "--inputs-file", inputs,
                                "--json").stdout)
        outputs = {o["path"]: o for o in run["outputs"]}
        for name in ("boxes", "scores", "labels"):
            expected = float(detections[0][name].double().sum())
            got = outputs[f"1.0.{name}"]["sum"]
            check(list(detections[0][name].shape) == outputs[f"1.0.{name}"]["shape"]
                  and math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-3),
                  f"{name}: kforge's sum {got} equals Python's {expected}")

        profiled = json.loads(kforge(args.kforge, "--ops-library", library, "profile", path, "--inputs-file", inputs,
                                     "--warmup", "0", "--iterations", "1", "--group-by", "kernel", "--json").stdout)
        check("torchvision::nms" in json.dumps(profiled), "the profile shows torchvision::nms as an op")
    return 0


if __name__ == "__main__":
    sys.exit(main())
