# SPDX-License-Identifier: Apache-2.0
"""What the corpus's Python tests share: running the kforge CLI, reporting each check, wrapping a HF model."""
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
