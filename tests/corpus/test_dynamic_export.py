#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Programs exported with dynamic shapes, as users export decoders: torch.export.export with Dim ranges or Dim.AUTO,
saved with torch.export.save. The symbolic-size arithmetic export leaves in the graph (operator.mul, floordiv, add,
sym_max, comparisons) runs; every length within the exported range gives Python's outputs; an input outside the range,
or a static dimension changed, is refused naming the input, the dimension and the range. Exit 77: transformers is
missing from the venv (run scripts/bootstrap)."""
import argparse
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, check_same_output, import_or_skip, kforge, logits_of  # noqa: E402

import torch
from torch.export import Dim

(transformers,) = import_or_skip("transformers")


class CachedStep(torch.nn.Module):
    """A decoder step with its key/value cache as inputs: the past length is dynamic, and the code does arithmetic
    on sizes (a causal mask over past + new positions, a view, a scale) as decoders do."""

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(16, 16)
        self.kv = torch.nn.Linear(16, 32)
        self.out = torch.nn.Linear(16, 16)

    def forward(self, x, past_k, past_v):
        batch, new = x.shape[0], x.shape[1]
        past = past_k.shape[1]
        total = past + new
        k_new, v_new = self.kv(x).chunk(2, dim=-1)
        k = torch.cat([past_k, k_new], dim=1)
        v = torch.cat([past_v, v_new], dim=1)
        q = self.q(x).view(batch, new, 2, 8).transpose(1, 2)
        k = k.view(batch, total, 2, 8).transpose(1, 2)
        v = v.view(batch, total, 2, 8).transpose(1, 2)
        mask = torch.ones(new, total, dtype=torch.bool).tril(diagonal=past)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        y = y.transpose(1, 2).reshape(batch, new, 16)
        scale = torch.sym_max(total // 4, 1) / (past % 7 + 1)
        return torch.nn.functional.gelu(self.out(y)) * scale, k.shape[2] * 2


class PairedSizes(torch.nn.Module):
    """y is twice as long as x (y: 2 * dx)."""

    def forward(self, x, y):
        return x * 2 + y.view(-1, 2).sum(-1)


class BlocksOfFour(torch.nn.Module):
    """x's length is a multiple of four (x: 4 * n)."""

    def forward(self, x):
        return x.view(-1, 4).sum(-1)


def python_targets(program):
    return sorted({str(n.target) for n in program.graph.nodes if n.op == "call_function" and "aten" not in
                   str(n.target) and "getitem" not in str(n.target)})


def same_outputs(run, expected, what):
    outputs = run["outputs"]
    check(len(outputs) >= 1, f"{what}: kforge returned outputs")
    check_same_output(outputs[0], expected, what)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as folder:
        # A cached decoder step: dynamic batch and past length, symbolic arithmetic in Python ops.
        step = CachedStep().eval()
        past = Dim("past", min=1, max=256)
        example = (torch.randn(2, 3, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16))
        program = torch.export.export(step, example, dynamic_shapes=({0: Dim("batch", max=8)}, {0: Dim("batch", max=8), 1: past},
                                                                    {0: Dim("batch", max=8), 1: past}))
        targets = python_targets(program)
        check(any(t.startswith("<built-in function") for t in targets),
              "the export holds Python ops on symbolic sizes: " + ", ".join(targets))
        path = os.path.join(folder, "cached_step.pt2")
        torch.export.save(program, path)
        for batch, length in ((1, 4), (3, 40), (2, 256)):
            inputs = (torch.randn(batch, 3, 16), torch.randn(batch, length, 16), torch.randn(batch, length, 16))
            file = os.path.join(folder, f"step_{batch}_{length}.pt")
            torch.save(inputs, file)
            with torch.no_grad():
                expected = step(*inputs)[0]
            run = json.loads(kforge(args.kforge, "run", path, "--inputs-file", file, "--json").stdout)
            same_outputs(run, expected, f"cached step, batch {batch}, past length {length}")

        too_long = os.path.join(folder, "too_long.pt")
        torch.save((torch.randn(1, 3, 16), torch.randn(1, 300, 16), torch.randn(1, 300, 16)), too_long)
        refused = kforge(args.kforge, "run", path, "--inputs-file", too_long, expect=1)
        check("dimension 1 is 300" in refused.stderr and "[1, 256]" in refused.stderr,
              "a past length outside the exported range names the dimension and the range: " + refused.stderr.strip())
        mismatched = os.path.join(folder, "mismatched.pt")
        torch.save((torch.randn(1, 3, 16), torch.randn(1, 9, 16), torch.randn(1, 8, 16)), mismatched)
        refused = kforge(args.kforge, "run", path, "--inputs-file", mismatched, expect=1)
        check("is 8 but" in refused.stderr and "same size" in refused.stderr,
              "keys and values of different past lengths are refused: " + refused.stderr.strip())
        static = os.path.join(folder, "static.pt")
        torch.save((torch.randn(1, 4, 16), torch.randn(1, 9, 16), torch.randn(1, 9, 16)), static)
        refused = kforge(args.kforge, "run", path, "--inputs-file", static, expect=1)
        check("static at 3" in refused.stderr, "a static dimension changed is refused: " + refused.stderr.strip())

        # Sizes given by expressions (`y: 2*dx`, `x: 4*n`): inputs Python's exported module refuses ("Guard failed:
        # y.size()[0] == 2 * x.size()[0]") are refused with the expression and the value it needs; those it takes run.
        dx = Dim("dx", min=2, max=32)
        pair = torch.export.export(PairedSizes(), (torch.randn(4), torch.randn(8)), dynamic_shapes=({0: dx}, {0: 2 * dx}))
        n = Dim("n", min=3, max=16)
        blocks = torch.export.export(BlocksOfFour(), (torch.randn(12),), dynamic_shapes=({0: 4 * n},))
        for name, program in (("paired", pair), ("blocks", blocks)):
            torch.export.save(program, os.path.join(folder, name + ".pt2"))
        cases = (
            ("paired", (torch.randn(5), torch.randn(10)), None),
            ("paired", (torch.randn(5), torch.randn(9)), "which is not 2*"),
            ("paired", (torch.randn(5), torch.randn(12)), "but must be 2*"),
            ("paired", (torch.randn(40), torch.randn(80)), "outside the range"),
            ("blocks", (torch.randn(20),), None),
            ("blocks", (torch.randn(10),), "which is not 4*"),
            ("blocks", (torch.randn(8),), "outside the range"),
            ("blocks", (torch.randn(68),), "outside the range"),
        )
        for i, (name, inputs, refusal) in enumerate(cases):
            file = os.path.join(folder, f"derived_{i}.pt")
            torch.save(inputs, file)
            model = os.path.join(folder, name + ".pt2")
            program = pair if name == "paired" else blocks
            try:
                expected = program.module()(*inputs)
            except Exception:  # noqa: BLE001 - Python's guard refused it
                expected = None
            check((expected is None) == (refusal is not None),
                  f"case {i}: Python's exported module {'refuses' if expected is None else 'takes'} it")
            if refusal is None:
                run = json.loads(kforge(args.kforge, "run", model, "--inputs-file", file, "--json").stdout)
                same_outputs(run, expected, f"{name} with sizes {[t.shape[0] for t in inputs]}")
            else:
                refused = kforge(args.kforge, "run", model, "--inputs-file", file, expect=1)
                check(refusal in refused.stderr,
                      f"{name} with sizes {[t.shape[0] for t in inputs]} is refused: " + refused.stderr.strip())

        # A Hugging Face decoder exported with Dim.AUTO for batch and sequence: several lengths, Python's logits.
        config = transformers.LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
        llama = transformers.LlamaForCausalLM(config).eval()

        logits = logits_of(llama)
        program = torch.export.export(logits, (torch.randint(0, 128, (2, 8)),),
                                      dynamic_shapes={"input_ids": {0: Dim.AUTO, 1: Dim.AUTO}})
        path = os.path.join(folder, "llama_dynamic.pt2")
        torch.export.save(program, path)
        for batch, length in ((1, 5), (3, 17), (2, 64)):
            ids = torch.randint(0, 128, (batch, length))
            file = os.path.join(folder, f"ids_{batch}_{length}.pt")
            torch.save((ids,), file)
            with torch.no_grad():
                expected = logits(ids)
            run = json.loads(kforge(args.kforge, "run", path, "--inputs-file", file, "--json").stdout)
            same_outputs(run, expected, f"Llama, batch {batch}, length {length}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
