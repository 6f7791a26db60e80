#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A Hugging Face mixture-of-experts decoder (Mixtral, random weights, built from its config) exported with
torch.export as transformers 5 exports it by default: its experts call transformers::grouped_mm_fallback, an op
transformers defines in Python (torch.library.custom_op). kforge says so and which setting avoids it; exported with
that setting (set_experts_implementation("batched_mm")) the program runs with Python's outputs. Exit 77: transformers
is missing from the venv."""
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    config = transformers.MixtralConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                        num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                                        num_experts_per_tok=2, max_position_embeddings=64)
    model = transformers.MixtralForCausalLM(config).eval()
    ids = torch.randint(0, 128, (1, 6))
    with tempfile.TemporaryDirectory() as folder:
        inputs = os.path.join(folder, "ids.pt")
        torch.save((ids,), inputs)
        default = os.path.join(folder, "moe_default.pt2")
        program = torch.export.export(logits_of(model), (ids,))
        targets = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
        if not any("grouped_mm_fallback" in t for t in targets):
            print("this transformers exports no grouped_mm_fallback: nothing to refuse")
        else:
            torch.export.save(program, default)
            refused = kforge(args.kforge, "run", default, "--inputs-file", inputs, expect=1)
            check("transformers.grouped_mm_fallback" in refused.stderr and "defines in Python" in refused.stderr
                  and 'set_experts_implementation("batched_mm")' in refused.stderr,
                  "the Python-defined op is named with the setting that avoids it: " + refused.stderr.strip())

        model.set_experts_implementation("batched_mm")
        with torch.no_grad():
            expected = float(logits_of(model)(ids).double().sum())
        batched = os.path.join(folder, "moe_batched.pt2")
        torch.export.save(torch.export.export(logits_of(model), (ids,)), batched)
        run = json.loads(kforge(args.kforge, "run", batched, "--inputs-file", inputs, "--json").stdout)
        got = run["outputs"][0]["sum"]
        check(math.isclose(got, expected, rel_tol=1e-5, abs_tol=1e-5),
              f"exported with batched_mm experts it runs: kforge {got} equals Python {expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
