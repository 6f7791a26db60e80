#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seeded faults through `kforge verify` on one real model of the corpus, in every form it was saved in (scripted,
traced, torch.export): providers that spoil a function in a known way (tests/plugins/seeded_faults.h, loaded with
--provider-plugin) must fail the verdict with the first diverging module named as the case says, and an exact
provider must never fail. Each case names where the fault is put (SCOPE:FUNCTION) and the module call the divergence
is made in, known from the model's code:
  noise      the original times (1 + 0.01 N(0, 1))
  zero-head  one attention head's output zeroed
  nan-shape  all NaN for one input shape only
  exact      the original (must pass, nothing located)
The results print as the table docs/verify.md shows. Exit 1 when a case fails, 77 (skip) when the model or the
plugin is missing.

  test_verify_faults.py --kforge build/bin/kforge --plugin build/lib/libkforge_seeded_faults.so \
      --corpus DIR --model resnet18
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# model -> [(fault, scope, function, settings, expected module, expected call)]
CASES = {
    "resnet18": [
        ("noise", "layer2", "relu", {}, "layer2.0.relu", 0),
        # 64x64 input: layer3 runs at 4x4; its first block's first ReLU is the first call of that shape
        ("nan-shape", "", "relu", {"shape": [1, 256, 4, 4]}, "layer3.0.relu", 0),
        ("exact", "", "conv2d", {}, None, None),
    ],
    "vit": [
        # MLPBlock is Sequential(Linear, GELU, Dropout, Linear, Dropout)
        ("noise", "encoder.layers.encoder_layer_1", "gelu", {}, "encoder.layers.encoder_layer_1.mlp.1", 0),
        ("nan-shape", "", "linear", {"shape": [1, 197, 1024]}, "encoder.layers.encoder_layer_0.mlp.3", 0),
        ("exact", "", "layer_norm", {}, None, None),
    ],
    "timm_vit_tiny": [
        # timm's Attention calls F.scaled_dot_product_attention in its own forward, then its proj Linear
        ("zero-head", "blocks.1.attn", "scaled_dot_product_attention", {"head": 1}, "blocks.1.attn", 0),
        ("noise", "blocks.2", "gelu", {}, "blocks.2.mlp.act", 0),
        ("exact", "", "scaled_dot_product_attention", {}, None, None),
    ],
    "hf_llama": [
        ("zero-head", "model.layers.0.self_attn", "scaled_dot_product_attention", {"head": 1},
         "model.layers.0.self_attn", 0),
        ("noise", "model.layers.1.mlp", "silu", {}, "model.layers.1.mlp.act_fn", 0),
        # intermediate_size 128: down_proj's input is the only [1, 16, 128] linear input
        ("nan-shape", "", "linear", {"shape": [1, 16, 128]}, "model.layers.0.mlp.down_proj", 0),
        ("exact", "", "linear", {}, None, None),
    ],
}
PROVIDER = {"noise": "SeededNoise", "zero-head": "SeededZeroHead", "nan-shape": "SeededNanOnShape",
            "exact": "SeededExact"}
FORMS = (("script", ".script.pt"), ("trace", ".trace.pt"), ("pt2", ".pt2"))


def run_case(args, path: str, case) -> tuple[bool, str]:
    fault, scope, function, settings, module, call = case
    spec = f"{scope}:{function}:{PROVIDER[fault]}_{function}" + (":" + json.dumps(settings) if settings else "")
    command = [args.kforge, "--provider-plugin", args.plugin, "verify", path,
               "--inputs-file", os.path.join(args.corpus, args.model + ".input.pt"), "--provide", spec, "--json", "-q"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return False, f"no JSON (exit {done.returncode}): {done.stderr.strip()[-400:]}"
    if "error" in report and "passed" not in report:
        return False, f"error: {report['error'].get('message')}"
    if fault == "exact":
        ok = report["passed"] and done.returncode == 0
        worst = max((o["max_abs_error"] for o in report["outputs"]), default=0.0)
        return ok, f"passed, max abs error {worst:.3g}" if ok else f"rejected: {report['outputs']}"
    if report["passed"] or done.returncode != 1:
        return False, f"not caught (exit {done.returncode}): {report['outputs']}"
    first = report.get("first_divergence")
    if not first:
        return False, f"caught, no module named: {report.get('localisation_note')}"
    named = (first["module"], first["call"])
    problem = first["output"].get("problem", "")
    if named != (module, call):
        return False, f"caught, but named {named[0]!r} call {named[1]} (expected {module!r} call {call}): {problem}"
    return True, f"caught at {module or '(root)'} call {call} ({first['module_calls']} module calls): {problem}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    if args.model not in CASES or not os.path.exists(args.plugin):
        print(f"skip: no cases for {args.model} or no plugin {args.plugin}")
        return 77
    failures = 0
    ran = 0
    for form, suffix in FORMS:
        path = os.path.join(args.corpus, args.model + suffix)
        if not os.path.exists(path):
            continue
        for case in CASES[args.model]:
            ok, what = run_case(args, path, case)
            ran += 1
            failures += not ok
            print(f"| {args.model} | {form} | {case[0]} | {case[1] or '(root)'}:{case[2]} | "
                  f"{'ok' if ok else 'FAIL'} | {what} |", flush=True)
    if ran == 0:
        print(f"skip: the corpus has no {args.model} files in {args.corpus}")
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
