# SPDX-License-Identifier: Apache-2.0
"""Python's side of bench_exported: the forward latency of one corpus model in eager PyTorch, of its exported
program run by Python (ExportedProgram.module()), and of its TorchScript file loaded in Python, timed the way
bench_exported times the C++ rows (warm-up, then the median of repeated batches). Prints one JSON object.
    python bench_exported_eager.py CORPUS_DIR MODEL"""
import json
import os
import statistics
import sys
import time

import torch
import torchvision  # noqa: F401 (the corpus records each architecture as a torchvision constructor)
from torch.export.pt2_archive._package import load_pt2


def median_ms(forward, inputs, warmup=3, batches=7, per_batch=5):
    with torch.no_grad():
        for _ in range(warmup):
            forward(*inputs)
        times = []
        for _ in range(batches):
            start = time.perf_counter()
            for _ in range(per_batch):
                forward(*inputs)
            times.append((time.perf_counter() - start) * 1e3 / per_batch)
    return statistics.median(times)


def main():
    corpus, model = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    meta = json.load(open(os.path.join(corpus, f"{model}.json")))
    inputs = torch.load(os.path.join(corpus, meta["input_file"]), weights_only=False)
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    script = torch.jit.load(os.path.join(corpus, f"{model}.script.pt")).eval()
    eager = eval(meta["architecture"], {"torchvision": torchvision, "torch": torch}).eval()  # noqa: S307 (our file)
    eager.load_state_dict(script.state_dict())
    exported = load_pt2(os.path.join(corpus, f"{model}.pt2")).exported_programs["forward"].module()
    print(json.dumps({
        "eager_ms": median_ms(eager, inputs),
        "exported_module_ms": median_ms(exported, inputs),
        "torchscript_in_python_ms": median_ms(script, inputs),
    }))


if __name__ == "__main__":
    main()
