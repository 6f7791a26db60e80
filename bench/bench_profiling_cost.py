# SPDX-License-Identifier: Apache-2.0
"""What does profiling cost, kforge's against torch.profiler's? Per corpus model, in one process pair and interleaved in
rounds (bench_executor_gap.py's server and protocol): Python's torch.jit.load forward plain and inside
torch.profiler.profile(activities=[CPU]),
and kforge's plain direct forward and forwards inside one kforge::profile on the CPU (module scopes, function calls
and every top-level op recorded). Both sides time a forward in a running profile, its first forward dropped: the cost
per recorded forward, without the profile's start and end (torch.profiler's start and end alone cost more than a
small model's forward). A round runs each variant `--forwards` times after one warm-up and keeps
the median. Prints each side's cost (profiled / plain, per round) and the ratio of the two costs with the sign test's
95% interval (docs/verify.md's speed verdict): "faster" means kforge's profiling costs less than torch.profiler's.

    ~/.cache/kforge/torch-2.11.0/bin/python bench/bench_profiling_cost.py [--models resnet18,hf_llama]
        [--forms script,trace] [--rounds 12] [--forwards 3] [--warmup 3] [--threads 1] [--corpus DIR]
Nothing passes or fails: the figures are printed for people to judge."""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from bench_executor_gap import Server, default_corpus, interleave, model_files, python_times, verdict  # noqa: E402

VARIANTS = ["python", "python_profiled", "kforge_direct", "kforge_profiled"]


def python_profiled_times(module, inputs, forwards):
    """Forwards recorded inside one running torch.profiler session: one forward after entering it (not kept, as kforge's
    first), then `forwards` forwards timed each; leaving the session (parsing its events) is not timed."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        python_times(module, inputs, 1)
        return python_times(module, inputs, forwards)


def measure(path, inputs_path, args):
    inputs = torch.load(inputs_path)
    module = torch.jit.load(path).eval()
    server = Server(args.binary, path, inputs_path, args.threads, ["kforge_direct", "kforge_profiled"])
    run = {
        "python": lambda n: python_times(module, inputs, n),
        "python_profiled": lambda n: python_profiled_times(module, inputs, n),
        "kforge_direct": lambda n: server.times("kforge_direct", n),
        "kforge_profiled": lambda n: server.times("kforge_profiled", n),
    }
    per_round = interleave(run, VARIANTS, args)
    server.close()
    return per_round


def cell(ratios):
    word, interval = verdict(ratios)
    span = f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
    return f"{statistics.median(ratios):.3f}x{span} {word}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,hf_llama,timm_vit_tiny,mobilenet_v3_small")
    parser.add_argument("--forms", default="script,trace")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--forwards", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corpus", default=default_corpus())
    parser.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin",
                                                         "bench_executor_gap"))
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads or 'default'} intra-op thread(s), {args.rounds} rounds of "
          f"{args.forwards} forwards per variant (median per round), corpus {args.corpus}\n")
    print("| model, form | Python ms | kforge ms | torch.profiler cost | kforge profile cost | "
          "kforge cost / torch.profiler cost |")
    print("|---|---|---|---|---|---|")
    for label, path, inputs in model_files(args):
        rounds = measure(path, inputs, args)
        torch_cost = [p / b for p, b in zip(rounds["python_profiled"], rounds["python"])]
        kforge_cost = [p / b for p, b in zip(rounds["kforge_profiled"], rounds["kforge_direct"])]
        relative = [k / t for k, t in zip(kforge_cost, torch_cost)]
        print(f"| {label} | {statistics.median(rounds['python']):.2f} | "
              f"{statistics.median(rounds['kforge_direct']):.2f} | {cell(torch_cost)} | {cell(kforge_cost)} | "
              f"{cell(relative)} |", flush=True)
    print("\ncost = the profiled forward's time / the plain forward's, per round (1.10x: profiling adds 10%); the last "
          "column divides kforge's cost by torch.profiler's in the same round (below 1: kforge's profiling is "
          "cheaper); [interval] the sign test's 95% interval; the word its verdict against 1.")


if __name__ == "__main__":
    sys.exit(main())
