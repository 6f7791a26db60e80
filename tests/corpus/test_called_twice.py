#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Traced models whose submodules run more than once per forward, as users trace them: torch.jit.trace saves the
second and later calls of a module as other methods (forward1, forward2), and each call is in that module's scope.
  - diffusers' UNet2DConditionModel (small config, random weights): every ResnetBlock2D calls its one `nonlinearity`
    (SiLU) three times;
  - Hugging Face T5's encoder (T5EncoderModel from a small config): `encoder.dropout` runs twice;
  - Hugging Face ALBERT (AlbertModel from a small config): its one shared layer runs once per hidden layer, so its
    `full_layer_layer_norm` (LayerNorm) runs three times.
For each, an entry scoped to that module serves every call of it (Python's forward hooks count them): `run` reports
them all served by the entry and none by the original in that scope, `profile` attributes every one of the module's
records of that function to the entry's provider, `verify` passes with the entry in effect, and `optimize`'s
search per module samples every call of it (the UNet's and ALBERT's; no candidate is eligible for T5's dropout). A seeded fault that
spoils only a later call (NaN on the shape of the ResnetBlock2D's second SiLU call, the time embedding's) is caught
by `verify`, naming that module and call: served only on its first call, it would pass. Exit 77: diffusers or
transformers is missing from the venv (run scripts/bootstrap)."""
import argparse
import csv
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, import_or_skip, kforge  # noqa: E402

import torch

diffusers, transformers = import_or_skip("diffusers", "transformers")

ITERATIONS = 2


class UNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.u = diffusers.UNet2DConditionModel(
            sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
            down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
            cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8)

    def forward(self, sample, timestep, context):
        return self.u(sample, timestep, encoder_hidden_states=context, return_dict=False)[0]


class Albert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.AlbertConfig(vocab_size=64, embedding_size=16, hidden_size=32, num_hidden_layers=3,
                                           num_attention_heads=4, intermediate_size=64, hidden_act="gelu")
        self.m = transformers.AlbertModel(config)

    def forward(self, input_ids):
        return self.m(input_ids=input_ids).last_hidden_state


class T5Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4)
        self.m = transformers.T5EncoderModel(config)

    def forward(self, input_ids):
        return self.m(input_ids=input_ids).last_hidden_state


# (name, model, inputs, module called more than once, its function, a provider for it, whether optimize's search per
# module is checked on it, the shape of a later call only: a seeded fault on it must be caught at that call, or None)
CASES = [
    ("unet", UNet, lambda: (torch.randn(1, 4, 8, 8), torch.tensor([10]), torch.randn(1, 4, 32)),
     "u.mid_block.resnets.0.nonlinearity", "silu", "AtenSiluProvider", True, ([1, 128], 1)),
    ("t5_encoder", T5Encoder, lambda: (torch.randint(0, 64, (1, 6)),), "m.encoder.dropout", "dropout",
     "AtenDropoutProvider", False, None),
    ("albert", Albert, lambda: (torch.randint(0, 64, (1, 6)),),
     "m.encoder.albert_layer_groups.0.albert_layers.0.full_layer_layer_norm", "layer_norm", "AtenLayerNormProvider",
     True, None),
]


def calls_in_python(model, inputs, path):
    """How many times the eager forward calls the module at `path`."""
    count = [0]
    model.get_submodule(path).register_forward_hook(lambda *_: count.__setitem__(0, count[0] + 1))
    with torch.no_grad():
        model(*inputs)
    return count[0]


def check_case(name, make, make_inputs, path, function, provider, optimize, later_call, args, folder):
    torch.manual_seed(0)
    model = make().eval()
    inputs = make_inputs()
    traced = torch.jit.trace(model, inputs)
    methods = [m for m in traced.get_submodule(path)._c._type().method_names() if m.startswith("forward")]
    calls = calls_in_python(model, inputs, path)
    check(calls > 1 and len(methods) == calls,
          f"{name}: {path} runs {calls} times per forward, saved as {methods} by the trace")
    file = os.path.join(folder, f"{name}.trace.pt")
    inputs_file = os.path.join(folder, f"{name}.input.pt")
    traced.save(file)
    torch.save(inputs, inputs_file)
    entry = f"{path}:{function}:{provider}"

    ran = json.loads(kforge(args.kforge, "run", file, "--inputs-file", inputs_file, "--iterations", str(ITERATIONS),
                            "--provide", entry, "--json").stdout)
    rows = [r for r in ran["calls"] if r["function"] == function and r["scope"] == path]
    served = sum(r["calls"] for r in rows if r["provider"] == provider)
    check(served == calls * ITERATIONS and all(r["provider"] == provider for r in rows),
          f"{name}: run serves all {calls * ITERATIONS} calls of {function} in {path}: {rows}")

    trace_csv = os.path.join(folder, f"{name}.csv")
    kforge(args.kforge, "profile", file, "--inputs-file", inputs_file, "--warmup", "1", "--iterations",
           str(ITERATIONS), "--provide", entry, "--csv", trace_csv)
    with open(trace_csv, newline="") as f:
        records = [r for r in csv.DictReader(f) if r["module"] == path and r["function"] == function]
    providers = sorted({r["provider"] for r in records})
    check(len(records) == calls * ITERATIONS and providers == [provider],
          f"{name}: profile attributes the {len(records)} records of {function} in {path} to {providers}")

    verified = json.loads(kforge(args.kforge, "verify", file, "--inputs-file", inputs_file, "--provide", entry,
                                 "--json").stdout)
    check(verified["passed"], f"{name}: verify passes with the entry in effect on every call")
    if optimize:
        # optimize's module-granularity search samples every call of the module, not the first alone.
        plan_out = os.path.join(folder, f"{name}.optimized.json")
        report = json.loads(kforge(args.kforge, "optimize", file, "--inputs-file", inputs_file, "--providers", provider,
                                   "--include-reference", "--granularity", "module", "--rounds", "3", "--iterations",
                                   "2", "--warmup", "1", "--out", plan_out, "--json").stdout)
        per_module = next((f.get("per_module", "") for f in report["functions"] if f["function"] == function), "")
        sampled = per_module.split(f"{path}: ", 1)[-1].split(";")[0] if f"{path}: " in per_module else ""
        check(f"({calls} call(s)" in sampled, f"{name}: optimize samples all {calls} calls of {path}: {sampled}")
    if later_call:
        shape, call = later_call
        fault = f"{path}:{function}:SeededNanOnShape_{function}:" + json.dumps({"shape": shape})
        caught = json.loads(kforge(args.kforge, "--provider-plugin", args.plugin, "verify", file, "--inputs-file",
                                   inputs_file, "--provide", fault, "--json", "-q", expect=1).stdout)
        first = caught.get("first_divergence") or {}
        check(not caught["passed"] and first.get("module") == path and first.get("call") == call
              and first.get("output", {}).get("shape") == shape,
              f"{name}: a fault on call {call} of {path} only (shape {shape}) is caught there: "
              f"{first.get('module')!r} call {first.get('call')}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--plugin", required=True, help="the seeded-faults provider plugin (tests/plugins)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for case in CASES:
            check_case(*case, args, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
