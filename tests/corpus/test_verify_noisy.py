#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seeded faults through `kforge verify` on models that are not deterministic or change what they are given, made in
Python as users make them and saved in every form (torch.jit.script, torch.jit.trace, torch.export.save):

  classifier   Linear, GELU, Linear, plus 1e-3 * randn_like (10 logits per row)
  mc_dropout   Linear, GELU, dropout left on (training=True), Linear
  diffusion    GELU(Linear(x)) + sigma[:, None] * randn_like, sigma = [0, 0, 0, 1] (the first samples at t = 0)
  in_place     x.sub_(0.5).div_(0.25) (a preprocessing wrapper), then Linear, GELU
  counter      a buffer counting forwards, GELU(Linear(x)) * count

The GELU is a module `act`. Faults on it (tests/plugins/seeded_faults.h, loaded with --provider-plugin):
  zero        all zeros
  bias        plus a constant 5x the output noise's standard deviation (0.05 where there is none)
  negative    wrong on negative inputs only (minus the input there)
  exact       the original: must pass every run
Every fault must fail (exit 1) with `act` named as the first diverging module (random draws replayed: the
default). With --fresh-random the outputs that move are judged against their spread over 8 forwards: a fault must
still fail where its effect stands out of that spread; where it does not (FRESH_NOT_ASSERTED: dropout noise as large
as the fault's effect, a bias that reaches the logits through a Linear as +-3 standard deviations of mixed sign) the
outcome is printed, not asserted. Exact plans must pass (exit 0) every run in both modes. Prints the table
docs/verify.md shows. Exit 1 when a case fails, 77 (skip) when the plugin is missing.

  test_verify_noisy.py --kforge build/bin/kforge --plugin build/lib/libkforge_seeded_faults.so [--exact-runs 100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 10)

    def forward(self, x):
        logits = self.fc2(self.act(self.fc1(x)))
        return logits + 1e-3 * torch.randn_like(logits)


class McDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(F.dropout(self.act(self.fc1(x)), 0.2, training=True))


class Diffusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.act = nn.Linear(64, 64), nn.GELU()
        self.register_buffer("sigma", torch.tensor([0.0, 0.0, 0.0, 1.0]))

    def forward(self, x):
        h = self.act(self.fc(x))
        return h + self.sigma[:, None] * torch.randn_like(h)


class InPlace(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.act = nn.Linear(16, 16), nn.GELU()

    def forward(self, x):
        x.sub_(0.5).div_(0.25)
        return self.act(self.fc(x))


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.act = nn.Linear(16, 16), nn.GELU()
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x):
        self.count.add_(1.0)
        return self.act(self.fc(x)) * self.count


MODELS = {
    "classifier": (Classifier, (4, 16)),
    "mc_dropout": (McDropout, (4, 16)),
    "diffusion": (Diffusion, (4, 64)),
    "in_place": (InPlace, (8, 16)),
    "counter": (Counter, (8, 16)),
}
FRESH_NOT_ASSERTED = {("mc_dropout", "zero"), ("mc_dropout", "bias"), ("mc_dropout", "negative"),
                      ("classifier", "bias")}
FAULTS = {"zero": "SeededZero_gelu", "bias": "SeededBias_gelu", "negative": "SeededWrongOnNegative_gelu",
          "exact": "SeededExact_gelu"}


def save_forms(name: str, folder: str) -> tuple[dict[str, str], str, float]:
    """The model saved as scripted, traced and exported; its inputs file; the output noise's standard deviation."""
    factory, shape = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    x = torch.randn(*shape)
    inputs = os.path.join(folder, name + ".input.pt")
    torch.save(x, inputs)
    with torch.no_grad():
        draws = torch.stack([model(x.clone()) for _ in range(20)]) if name not in ("counter",) else None
    noise = float(draws.std(0).mean()) if draws is not None else 0.0
    forms = {}
    fresh = factory  # each form from the same weights
    torch.manual_seed(0)
    forms["script"] = os.path.join(folder, name + ".script.pt")
    torch.jit.save(torch.jit.script(fresh().eval()), forms["script"])
    torch.manual_seed(0)
    forms["trace"] = os.path.join(folder, name + ".trace.pt")
    torch.jit.save(torch.jit.trace(fresh().eval(), (x.clone(),), check_trace=False), forms["trace"])
    torch.manual_seed(0)
    forms["pt2"] = os.path.join(folder, name + ".pt2")
    torch.export.save(torch.export.export(fresh().eval(), (x.clone(),)), forms["pt2"])
    return forms, inputs, noise


def verify(args, path: str, inputs: str, fault: str, bias: float, fresh: bool) -> tuple[int, dict]:
    spec = f"act:gelu:{FAULTS[fault]}" + (":" + json.dumps({"bias": bias}) if fault == "bias" else "")
    command = [args.kforge, "--provider-plugin", args.plugin, "verify", path, "--inputs-file", inputs,
               "--provide", spec, "--json", "-q"] + (["--fresh-random"] if fresh else [])
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        return done.returncode, {"error": done.stderr.strip()[-400:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--exact-runs", type=int, default=2, help="runs of each exact case (the study: 100)")
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--forms", nargs="*", default=["script", "trace", "pt2"])
    parser.add_argument("--modes", nargs="*", default=["replayed", "fresh"])
    parser.add_argument("--faults", nargs="*", default=list(FAULTS))
    args = parser.parse_args()
    if not os.path.exists(args.plugin):
        print(f"skip: no seeded-faults plugin at {args.plugin}")
        return 77
    failures = []
    print("| model | noise sd | form | mode | fault | runs | result | first diverging module |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            forms, inputs, noise = save_forms(name, folder)
            bias = 5 * noise if noise > 0 else 0.05
            for form, path in forms.items():
                if form not in args.forms:
                    continue
                for fresh in (False, True):
                    mode = "fresh" if fresh else "replayed"
                    if mode not in args.modes:
                        continue
                    for fault in args.faults:
                        runs = args.exact_runs if fault == "exact" else 1
                        outcomes, module = [], ""
                        for _ in range(runs):
                            code, report = verify(args, path, inputs, fault, bias, fresh)
                            if fault == "exact":
                                ok = code == 0 and report.get("passed") is True
                            else:
                                ok = code == 1 and report.get("passed") is False
                                first = report.get("first_divergence")
                                module = first["module"] if first else report.get("localisation_note", "")[:60]
                                # Located where random draws are replayed (or nothing moves): the fault's module.
                                if not fresh and ok and (not first or first["module"] != "act"):
                                    ok = False
                            outcomes.append(ok)
                            asserted = not (fresh and (name, fault) in FRESH_NOT_ASSERTED)
                            if not ok and asserted:
                                failures.append(f"{name} {form} {mode} {fault}: exit {code}: "
                                                f"{json.dumps(report)[:600]}")
                        result = f"{sum(outcomes)} of {runs} " + ("passed" if fault == "exact" else "caught")
                        if fresh and (name, fault) in FRESH_NOT_ASSERTED:
                            result += " (not asserted)"
                        print(f"| {name} | {noise:.3g} | {form} | {mode} | {fault} | {runs} | {result} | {module} |",
                              flush=True)
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
