# SPDX-License-Identifier: Apache-2.0
"""Is the forward kforge profiles the one that deploys? Per corpus model (TorchScript forms), Python's
torch.jit.load(file)(x) against the same file in C++ (build/bin/bench_executor_gap: plain LibTorch with and without
the graph optimizer, kforge's direct and optimized executors), interleaved in rounds across the processes: each C++
variant runs in a process of its own (a deployment holds one model; four models alternating in one process slowed each
of them, up to 1.8x on efficientnet_b0 against 0.8-1.1x alone: an artefact of the bench, not of the executor); each
round runs every variant, in an order that rotates, `--forwards` forwards each after one warm-up; a variant's round
time is the median of its forwards. Prints, per model, each variant's median and its ratio to Python's with the sign
test's 95% interval of the per-round ratios (the speed verdict of docs/verify.md): "slower" means the variant is
slower than Python's forward beyond the noise.

    ~/.cache/kforge/torch-2.11.0/bin/python bench/bench_executor_gap.py [--models resnet18,vit] [--forms script,trace]
        [--rounds 12] [--forwards 3] [--warmup 3] [--threads 1] [--corpus DIR] [--binary build/bin/bench_executor_gap]
Nothing passes or fails: the figures are printed for people to judge.

Time on a shared VM moves by 10-30% between processes, more than the 3% the default forward is judged by.
`--instructions` counts instead, under callgrind, the instructions per forward of Python's forward (two runs of the
same process, 5 and 25 forwards after the warm-up, counted inside the C++ call of the forward only: their difference
over 20) and of each C++ variant
(`bench_executor_gap --instructions`), and prints the ratios to Python's: the work each forward does, not its time
(memory stalls are not counted), but a figure that does not move between runs."""
import argparse
import glob
import math
import os
import statistics
import subprocess
import sys
import time

import torch

VARIANTS = ["python", "libtorch", "libtorch_direct", "kforge_direct", "kforge_optimized"]
# --attribution adds kforge's plain forward and its instrumented forward called without the session's call guard.
ATTRIBUTION = ["kforge_plain_raw", "kforge_plain_raw_inputs", "kforge_hooked_raw"]


def sign_test_interval(ratios):
    """The 95% interval of the median ratio from the sign test's order statistics (at least 95% coverage); None with
    fewer than 6 ratios. The same rule as kforge/speed_verdict.h."""
    n = len(ratios)
    k = 0
    while k + 1 <= n // 2 and sum(math.comb(n, i) for i in range(k + 1)) / 2**n <= 0.025:
        k += 1
    if k == 0:
        return None
    r = sorted(ratios)
    return r[k - 1], r[n - k]


def verdict(ratios):
    interval = sign_test_interval(ratios)
    if interval is None:
        return "too few rounds", None
    low, high = interval
    return ("slower" if low > 1 else "faster" if high < 1 else "no detectable change"), interval


def default_corpus():
    if os.environ.get("KFORGE_CORPUS_DIR"):
        return os.environ["KFORGE_CORPUS_DIR"]
    cache = os.environ.get("KFORGE_CACHE", os.path.expanduser("~/.cache/kforge"))
    found = sorted(glob.glob(os.path.join(cache, "corpus-*")))
    return found[-1] if found else ""


class Server:
    """The C++ half, holding the model loaded the ways `variants` (names of bench_executor_gap.cpp) need."""

    def __init__(self, binary, model, inputs, threads, variants, device="cpu"):
        self.process = subprocess.Popen([binary, model, inputs, str(threads), ",".join(variants), device],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"bench_executor_gap did not start on {model}: {line!r}")

    def times(self, variant, forwards):
        self.process.stdin.write(f"{variant} {forwards}\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if answer.startswith("error"):
            raise RuntimeError(answer)
        return [float(t) for t in answer.split()]

    def close(self):
        self.process.stdin.write("quit\n")
        self.process.stdin.flush()
        self.process.wait()


def on_device(value, device):
    """A tensor, or the tensors inside tuples, lists and dicts, on `device`."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(on_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: on_device(v, device) for k, v in value.items()}
    return value


def python_times(module, inputs, forwards):
    args, kwargs = (list(inputs), {}) if isinstance(inputs, (tuple, list)) else \
        ({}, inputs) if isinstance(inputs, dict) else ([inputs], {})
    cuda = any(isinstance(t, torch.Tensor) and t.is_cuda for t in list(args) + list(kwargs.values()))
    out = []
    with torch.no_grad():
        for _ in range(forwards):
            start = time.perf_counter()
            module(*args, **kwargs)
            if cuda:  # timed to the end of the GPU work, as the C++ variants on cuda
                torch.cuda.synchronize()
            out.append((time.perf_counter() - start) * 1e3)
    return out


def interleave(run, variants, args):
    """`args.warmup` forwards of each variant, then `args.rounds` rounds in which each runs one untimed forward and
    `args.forwards` timed ones, the order rotating; per variant, the median of each round. `run[variant](n)` returns
    n forward times."""
    for variant in variants:  # the optimized executor profiles its first forwards, then optimises
        run[variant](args.warmup)
    per_round = {v: [] for v in variants}
    for r in range(args.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for variant in order:
            run[variant](1)
            per_round[variant].append(statistics.median(run[variant](args.forwards)))
    return per_round


def measure(path, inputs_path, args, variants):
    inputs = on_device(torch.load(inputs_path), args.device)
    module = torch.jit.load(path, map_location=args.device).eval()
    servers = {variant: Server(args.binary, path, inputs_path, args.threads, [variant], args.device)
               for variant in variants[1:]}
    run = {"python": lambda n: python_times(module, inputs, n)}
    for variant, server in servers.items():
        run[variant] = lambda n, v=variant, s=server: s.times(v, n)
    per_round = interleave(run, variants, args)
    for server in servers.values():
        server.close()
    return per_round


def model_files(args):
    """(label, model file, inputs file) for each of `--models` in each of `--forms` the corpus has; a model given as a
    path is taken as it is (once), with `--inputs` when given."""
    for model in args.models.split(","):
        if model.endswith(".pt"):
            inputs = getattr(args, "inputs", "") or model[:-len(".pt")] + ".input.pt"
            if os.path.exists(model):
                yield os.path.basename(model), model, inputs
            continue
        for form in args.forms.split(","):
            path = os.path.join(args.corpus, f"{model}.{form}.pt")
            if os.path.exists(path):
                yield f"{model}, {form}", path, getattr(args, "inputs", "") or os.path.join(args.corpus,
                                                                                             f"{model}.input.pt")


def callgrind_total(command, inside=None):
    """The instructions callgrind counts over `command`: the whole of it, or only inside calls of function `inside`."""
    out = f"/tmp/kforge-gap-{os.getpid()}.cg"
    only = ["--collect-atstart=no", f"--toggle-collect={inside}"] if inside else []
    subprocess.run(["valgrind", "--tool=callgrind", "--quiet", f"--callgrind-out-file={out}"] + only + command,
                   check=True, stdout=subprocess.DEVNULL)
    try:
        with open(out) as dump:
            for line in dump:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
    finally:
        os.remove(out)
    raise RuntimeError(f"callgrind wrote no total for {command}")


# Where a Python call of a TorchScript method enters C++ (arguments converted, the graph executor run, the result
# converted back). Counting only inside it leaves out Python's start-up and imports, whose count moves by tens of
# millions of instructions between runs: more than 20 forwards of a small model.
PYTHON_FORWARD = "torch::jit::invokeScriptMethodFromPython*"


def python_instructions(path, inputs_path, threads):
    """Instructions per forward of Python's torch.jit.load(path)(inputs), from two runs that differ in forwards only
    (the first forwards, which profile and optimise the graph, cancel out)."""
    def run(forwards):
        return callgrind_total([sys.executable, __file__, "--python-child", path, inputs_path, str(threads),
                                str(forwards)], inside=PYTHON_FORWARD)
    return (run(25) - run(5)) / 20


def cxx_instructions(binary, path, inputs_path, threads, variants):
    """Instructions per forward of each C++ variant (bench_executor_gap --instructions)."""
    result = subprocess.run([binary, "--instructions", path, inputs_path, str(threads), ",".join(variants)],
                            check=True, capture_output=True, text=True)
    counts = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] in variants:
            counts[fields[0]] = float(fields[1])
    return counts


def python_child(path, inputs_path, threads, forwards):
    """What python_instructions counts: the load, 5 warm-up forwards (the graph executor optimises after its first),
    then `forwards` more."""
    torch.set_num_threads(threads)
    module = torch.jit.load(path).eval()
    inputs = torch.load(inputs_path)
    python_times(module, inputs, 5 + forwards)


def report_instructions(args, variants):
    cxx = [v for v in variants[1:] if v in VARIANTS]
    print(f"torch {torch.__version__}, {args.threads} intra-op thread(s), instructions per forward under callgrind\n")
    print("| model, form | Python instructions | " + " | ".join(f"{v} / Python" for v in cxx) + " |")
    print("|---|---|" + "---|" * len(cxx))
    for label, path, inputs in model_files(args):
        python = python_instructions(path, inputs, args.threads)
        counts = cxx_instructions(args.binary, path, inputs, args.threads, cxx)
        cells = [f"{counts[v] / python:.4f}x" if v in counts else "-" for v in cxx]
        print(f"| {label} | {python / 1e6:.2f} M | " + " | ".join(cells) + " |", flush=True)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--python-child":
        return python_child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,mobilenet_v3_small,efficientnet_b0,vit,hf_llama,timm_vit_tiny")
    parser.add_argument("--forms", default="script,trace")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--forwards", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corpus", default=default_corpus())
    parser.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin",
                                                         "bench_executor_gap"))
    parser.add_argument("--device", default="cpu", help="cpu, or cuda: every forward timed to a synchronize")
    parser.add_argument("--inputs", default="",
                        help="an inputs file for every model instead of the corpus's MODEL.input.pt")
    parser.add_argument("--attribution", action="store_true",
                        help="also time kforge's plain and instrumented forwards without the call guard")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per forward under callgrind instead of timing")
    args = parser.parse_args()
    variants = VARIANTS + (ATTRIBUTION if args.attribution else [])
    if args.instructions:
        return report_instructions(args, variants)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.device}, {args.threads or 'default'} intra-op thread(s), {args.rounds} "
          f"rounds of {args.forwards} forwards per variant (median per round), corpus {args.corpus}\n")
    print("| model, form | Python ms | " + " | ".join(f"{v} / Python" for v in variants[1:]) +
          " | kforge_direct / libtorch | kforge_optimized / libtorch |")
    print("|---|---|" + "---|" * (len(variants) + 1))
    for label, path, inputs in model_files(args):
        per_round = measure(path, inputs, args, variants)
        pairs = [(variant, "python") for variant in variants[1:]]
        pairs += [("kforge_direct", "libtorch"), ("kforge_optimized", "libtorch")]
        cells = []
        for variant, reference in pairs:
            ratios = [a / p for a, p in zip(per_round[variant], per_round[reference])]
            word, interval = verdict(ratios)
            span = f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
            cells.append(f"{statistics.median(ratios):.3f}x{span} {word}")
        print(f"| {label} | {statistics.median(per_round['python']):.2f} | " + " | ".join(cells) + " |", flush=True)
    print("\nratio = the variant's time / the reference's per round (above 1: slower than Python's torch.jit.load "
          "forward, or than the C++ LibTorch deployment); [interval] the sign test's 95% interval of the per-round "
          "ratios; the word its verdict.")


if __name__ == "__main__":
    sys.exit(main())
