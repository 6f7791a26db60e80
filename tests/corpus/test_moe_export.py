#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hugging Face mixture-of-experts decoders (Mixtral and Qwen2-MoE, random weights, built from their configs)
exported with torch.export as transformers 5 exports them by default: their experts call
transformers::grouped_mm_fallback, an op transformers defines in Python (torch.library.custom_op). kforge runs it with
its own C++ implementation: the program gives Python's outputs, profiles, and a plan entry serves its calls. Exported
with set_experts_implementation("batched_mm") (no Python-defined op) it runs with Python's outputs too. Exit 77:
transformers is missing from the venv."""
import argparse
import json
import math
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, import_or_skip, kforge, logits_of  # noqa: E402

import torch

(transformers,) = import_or_skip("transformers")


def decoders():
    small = dict(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                 max_position_embeddings=64)
    yield "mixtral", transformers.MixtralForCausalLM(
        transformers.MixtralConfig(intermediate_size=64, num_local_experts=4, num_experts_per_tok=2, **small))
    yield "qwen2_moe", transformers.Qwen2MoeForCausalLM(
        transformers.Qwen2MoeConfig(intermediate_size=64, moe_intermediate_size=32, shared_expert_intermediate_size=48,
                                    num_experts=4, num_experts_per_tok=2, **small))


def python_sum(model, ids):
    with torch.no_grad():
        return float(logits_of(model)(ids).double().sum())


def check_runs(binary, path, inputs, expected, what):
    run = json.loads(kforge(binary, "run", path, "--inputs-file", inputs, "--json").stdout)
    got = run["outputs"][0]["sum"]
    check(math.isclose(got, expected, rel_tol=1e-5, abs_tol=1e-5), f"{what}: kforge {got} equals Python {expected}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    ids = torch.randint(0, 128, (1, 6))
    with tempfile.TemporaryDirectory() as folder:
        inputs = os.path.join(folder, "ids.pt")
        torch.save((ids,), inputs)
        for name, model in decoders():
            model.eval()
            program = torch.export.export(logits_of(model), (ids,))
            targets = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
            default = os.path.join(folder, f"{name}_default.pt2")
            torch.export.save(program, default)
            expected = python_sum(model, ids)
            if not any("grouped_mm_fallback" in t for t in targets):
                print(f"{name}: this transformers exports no grouped_mm_fallback")
            check_runs(args.kforge, default, inputs, expected,
                       f"{name} as transformers exports it (transformers::grouped_mm_fallback) runs")
            profile = json.loads(kforge(args.kforge, "profile", default, "--inputs-file", inputs, "--iterations",
                                        "2", "--warmup", "1", "--json").stdout)
            ops = json.dumps(profile)
            check("grouped_mm_fallback" in ops, f"{name}: the profile times the experts' op")
            served = json.loads(kforge(args.kforge, "run", default, "--inputs-file", inputs, "--provide",
                                       ":linear:AtenLinearProvider", "--json").stdout)
            check(math.isclose(served["outputs"][0]["sum"], expected, rel_tol=1e-5, abs_tol=1e-5),
                  f"{name}: a plan on the program keeps its outputs")
            linear = sum(c["calls"] for c in served["calls"]
                         if c["function"] == "linear" and c["provider"] == "AtenLinearProvider")
            check(linear > 0, f"{name}: the plan's linear entry serves {linear} call(s): " + json.dumps(served["calls"]))

            model.set_experts_implementation("batched_mm")
            batched = os.path.join(folder, f"{name}_batched.pt2")
            torch.export.save(torch.export.export(logits_of(model), (ids,)), batched)
            check_runs(args.kforge, batched, inputs, python_sum(model, ids),
                       f"{name} exported with batched_mm experts runs")

        # Another Python-defined op: refused, naming its namespace and where its definition would be.
        @torch.library.custom_op("mylib::scale_rows", mutates_args=())
        def scale_rows(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        @scale_rows.register_fake
        def _(x):
            return torch.empty_like(x)

        class UsesPythonOp(torch.nn.Module):
            def forward(self, x):
                return torch.ops.mylib.scale_rows(x) + 1

        custom = os.path.join(folder, "python_op.pt2")
        torch.export.save(torch.export.export(UsesPythonOp(), (torch.ones(2, 3),)), custom)
        floats = os.path.join(folder, "ones.pt")
        torch.save((torch.ones(2, 3),), floats)
        refused = kforge(args.kforge, "run", custom, "--inputs-file", floats, expect=1)
        check("mylib::scale_rows" in refused.stderr and "'mylib' namespace" in refused.stderr
              and "torch.library.custom_op" in refused.stderr,
              "an op defined in Python elsewhere is refused naming its namespace: " + refused.stderr.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
