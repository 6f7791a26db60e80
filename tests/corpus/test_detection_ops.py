#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Models that call a library's custom ops, as users deploy them: torchvision's detection models (ssdlite320 and
fasterrcnn_mobilenet_v3_large_320_fpn), scripted with random weights (weights=None), call torchvision::nms and
roi_align from torchvision's own ops library (the wheel's torchvision/_C.so, a Python extension). Without the library
kforge names the op and the option; with `--ops-library torchvision/_C.so` (loaded in kforge's process, which has no
Python interpreter) each model runs with outputs equal to Python's, its profile shows the ops, and a plan entry for
one of its catalog functions is served in its scope. Exit 77: torchvision is missing from the venv (run scripts/bootstrap)."""
import argparse
import json
import math
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, import_or_skip, kforge  # noqa: E402

torch, torchvision = import_or_skip("torch", "torchvision")


# The detection models, built as users build them with random weights; a score threshold of 0 keeps detections
# (random logits score below torchvision's default 0.05) so that the outputs compared are not empty.
MODELS = {
    "ssdlite": lambda: torchvision.models.detection.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None),
    "fasterrcnn": lambda: torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, box_score_thresh=0.0),
}
# Ops each model's profile must show, and a catalog function a plan entry scoped to one of its modules serves.
OPS = {"ssdlite": ["torchvision::nms"], "fasterrcnn": ["torchvision::nms", "torchvision::roi_align"]}
SCOPED = {"ssdlite": ("head", "conv2d", "AtenConv2dProvider"),
          "fasterrcnn": ("roi_heads.box_head.fc6", "linear", "AtenLinearProvider")}


def check_model(name, args, library, folder):
    torch.manual_seed(0)
    scripted = torch.jit.script(MODELS[name]().eval())
    images = [torch.rand(3, 320, 320)]
    with torch.no_grad():
        _, detections = scripted(images)
    path = os.path.join(folder, f"{name}.script.pt")
    inputs = os.path.join(folder, f"{name}.input.pt")
    scripted.save(path)
    torch.save((images,), inputs)

    refused = kforge(args.kforge, "run", path, "--inputs-file", inputs, expect=1)
    check("custom op 'torchvision::" in refused.stderr and "--ops-library" in refused.stderr
          and "torchvision/_C.so" in refused.stderr, f"{name}: without its library the model names the torchvision "
          "op, --ops-library and the wheel's _C.so: " + refused.stderr.strip())

    run = json.loads(kforge(args.kforge, "--ops-library", library, "run", path, "--inputs-file", inputs,
                            "--json").stdout)
    outputs = {o["path"]: o for o in run["outputs"]}
    for field in ("boxes", "scores", "labels"):
        want = detections[0][field]
        got = outputs[f"1.0.{field}"]
        check(list(want.shape) == got["shape"] and want.numel() > 0
              and math.isclose(got["sum"], float(want.double().sum()), rel_tol=1e-4, abs_tol=1e-3),
              f"{name} {field}: kforge's {got['shape']} sum {got['sum']} equals Python's {list(want.shape)} "
              f"{float(want.double().sum())}")

    profiled = json.dumps(json.loads(kforge(args.kforge, "--ops-library", library, "profile", path, "--inputs-file",
                                            inputs, "--warmup", "0", "--iterations", "1", "--group-by", "kernel",
                                            "--json").stdout))
    for op in OPS[name]:
        check(op in profiled, f"{name}: the profile shows {op} as an op")

    scope, function, provider = SCOPED[name]
    served = json.loads(kforge(args.kforge, "--ops-library", library, "run", path, "--inputs-file", inputs,
                               "--provide", f"{scope}:{function}:{provider}", "--json").stdout)
    rows = [r for r in served["calls"] if r["function"] == function and r["provider"] == provider]
    check(rows and all(r["scope"] == scope for r in rows),
          f"{name}: a {function} entry scoped to {scope} is served there: {rows}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    library = os.path.join(os.path.dirname(torchvision.__file__), "_C.so")
    with tempfile.TemporaryDirectory() as folder:
        for name in MODELS:
            check_model(name, args, library, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
