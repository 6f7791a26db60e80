#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A Hugging Face Mamba (random weights, built from its config), traced as users trace it. Its mixer calls F.conv1d on
its conv1d submodule's weight reshaped (squeeze, then unsqueeze): a traced aten::_convolution whose weight is
computed, not read. kforge's inventory counts that call as the mixer's conv1d (it missed it, so `plan new` refused a
valid entry and `run` warned "can never fire" and then served it); an entry for it is accepted without that warning
and serves the call; the outputs equal Python's. Exit 77: transformers is missing from the venv."""
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
    config = transformers.MambaConfig(vocab_size=128, hidden_size=32, state_size=8, num_hidden_layers=2, expand=2,
                                      conv_kernel=4)
    model = logits_of(transformers.MambaForCausalLM(config).eval())
    ids = torch.randint(0, 128, (1, 8))
    with torch.no_grad():
        expected = float(model(ids).double().sum())
    mixer = "m.backbone.layers.0.mixer"
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "mamba.trace.pt")
        inputs = os.path.join(folder, "mamba.input.pt")
        torch.jit.trace(model, (ids,), check_trace=False).save(path)
        torch.save((ids,), inputs)

        modules = json.loads(kforge(args.kforge, "modules", path, "--json").stdout)
        functions = next(m for m in modules if m["path"] == mixer)["functions"]
        check(functions.get("conv1d") == 1, f"the inventory counts the mixer's F.conv1d call: {functions}")

        entry = f"{mixer}:conv1d:AtenConv1dProvider"
        validated = kforge(args.kforge, "plan", "new", "--model", path, "--provide", entry,
                           "-o", os.path.join(folder, "plan.json"))
        check("never" not in validated.stderr, "plan new accepts the entry: " + validated.stderr.strip())

        run = kforge(args.kforge, "run", path, "--inputs-file", inputs, "--provide", entry, "--json")
        check("never fire" not in run.stderr, "run does not warn that the entry can never fire: " + run.stderr.strip())
        result = json.loads(run.stdout)
        served = [c for c in result["calls"] if c["function"] == "conv1d" and c["provider"] == "AtenConv1dProvider"]
        check(len(served) == 1 and served[0]["calls"] == 1 and served[0]["scope"] == mixer,
              f"the entry serves the mixer's conv1d call: {served}")
        got = result["outputs"][0]["sum"]
        check(math.isclose(got, expected, rel_tol=1e-5, abs_tol=1e-5), f"outputs: kforge {got} equals Python {expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
