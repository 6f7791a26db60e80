# SPDX-License-Identifier: Apache-2.0
"""What the corpus's Python tests share: running the kforge CLI, reporting each check, skipping without a package,
comparing an output digest with Python's, wrapping a HF model."""
import importlib
import math
import subprocess
import sys


def kforge(binary, *args, expect=0, timeout=600):
    """Runs `binary args...`; exits the test with its output when the exit code is not `expect`."""
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode != expect:
        sys.exit(f"kforge {' '.join(args)} exited {done.returncode}, expected {expect}:\n{done.stdout}\n{done.stderr}")
    return done


def check(condition, what):
    """Exits the test with FAIL and `what` unless `condition`; prints ok and `what` otherwise."""
    if not condition:
        sys.exit("FAIL: " + what)
    print("ok:", what)


def import_or_skip(*names):
    """The modules, imported; exits the test as skipped (77) naming the ones missing from this Python."""
    try:
        return [importlib.import_module(name) for name in names]
    except ImportError:
        print(f"{' or '.join(names)} is not installed in this Python (scripts/bootstrap installs it)")
        sys.exit(77)


def check_same_output(got, want, what):
    """Checks that kforge's output digest (`run --json`: shape, sum, max_abs) is Python's tensor `want`'s."""
    want = want.double()
    close = [math.isclose(got["sum"], float(want.sum()), rel_tol=1e-4, abs_tol=1e-4),
             math.isclose(got["max_abs"], float(want.abs().max()), rel_tol=1e-4, abs_tol=1e-5)]
    check(got["shape"] == list(want.shape) and all(close),
          f"{what}: shape {got['shape']}, sum {got['sum']:.6f} and max |x| {got['max_abs']:.6f} equal Python's "
          f"{list(want.shape)}, {float(want.sum()):.6f}, {float(want.abs().max()):.6f}")


def logits_of(model):
    """A Hugging Face causal LM as users export and trace it for inference: input ids in, logits out, no cache."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self, wrapped):
            super().__init__()
            self.m = wrapped

        def forward(self, input_ids):
            return self.m(input_ids=input_ids, use_cache=False).logits

    return Logits(model).eval()
