#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where the memory goes, checked against PyTorch itself: torchvision's resnet18 (random weights), scripted and traced
and saved with torch.jit.save as users save it. `kforge profile --memory` counts, per forward, the bytes torch.profiler's
profile_memory sees allocated in Python for the same file and input; `--memory-snapshot` writes the pickle that
PyTorch's memory visualiser opens: Python unpickles it, every free pairs with an allocation of its size, the segments
hold what is still live, the frames name the model's modules, and torch.cuda._memory_viz reads it (segsum, trace,
segments, trace_plot). Exit 77: torchvision missing."""
import argparse
import json
import os
import pickle
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, import_or_skip, kforge  # noqa: E402

torch, torchvision = import_or_skip("torch", "torchvision")
from torch.cuda import _memory_viz  # noqa: E402

ITERATIONS = 2


def python_allocated_per_forward(path, x):
    """Bytes allocated per forward as torch.profiler's profile_memory reports them for the file in Python."""
    model = torch.jit.load(path)
    with torch.no_grad():
        for _ in range(3):  # the executor's profiling runs
            model(x)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
            for _ in range(ITERATIONS):
                model(x)
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    return sum(e.nbytes() for e in events if e.nbytes() > 0) / ITERATIONS


def check_snapshot(snapshot, allocated_per_forward, what):
    check(set(snapshot) >= {"segments", "device_traces"} and len(snapshot["device_traces"]) == 1,
          f"{what}: the snapshot holds segments and one device's trace")
    trace = snapshot["device_traces"][0]
    allocs = [e for e in trace if e["action"] == "alloc"]
    check(sum(e["size"] for e in allocs) == allocated_per_forward * ITERATIONS,
          f"{what}: the trace's allocations ({len(allocs)}) sum to the bytes kforge counted per forward x {ITERATIONS}")
    live = {}
    paired = True
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            paired = paired and live.pop(e["addr"], None) == e["size"]
    check(paired, f"{what}: every free pairs with an earlier allocation of its size at its address")
    blocks = [b for s in snapshot["segments"] for b in s["blocks"]]
    check(sorted((b["address"], b["size"]) for b in blocks) == sorted(live.items()),
          f"{what}: the segments hold the {len(live)} allocation(s) still live at the end")
    largest = max(allocs, key=lambda e: e["size"])
    names = [f["name"] for f in largest["frames"]]
    check(names and names[-1] == "(root)" and any(n != "(root)" for n in names),
          f"{what}: the largest allocation's frames name its modules up to the root: {names}")
    text = _memory_viz.trace(snapshot)
    check(f"{len(trace)} entries" in text, f"{what}: torch.cuda._memory_viz.trace reads every entry")
    _memory_viz.segsum(snapshot)  # asserts the segments' accounting
    lines = _memory_viz.segments(snapshot, format_flamegraph=lambda lines: lines)
    check(len(lines.splitlines()) == len(blocks), f"{what}: _memory_viz.segments lists every live block")
    html = _memory_viz.trace_plot(snapshot)
    check("Active Memory Timeline" in html, f"{what}: _memory_viz.trace_plot makes the visualiser's page")


def check_model(form, model, args, folder):
    x = torch.rand(1, 3, 64, 64)
    path = os.path.join(folder, f"resnet18.{form}.pt")
    torch.jit.save(torch.jit.script(model) if form == "script" else torch.jit.trace(model, x), path)
    inputs = os.path.join(folder, "input.pt")
    torch.save(x, inputs)
    snapshot_path = os.path.join(folder, f"resnet18.{form}.pickle")
    done = kforge(args.kforge, "profile", path, "--inputs-file", inputs, "--warmup", "1", "--iterations",
                  str(ITERATIONS), "--memory-snapshot", snapshot_path, "--json", "--quiet")
    memory = json.loads(done.stdout)["memory"]
    root = memory["modules"][0]
    python = python_allocated_per_forward(path, x)
    check(root["path"] == "" and root["allocated_bytes"] == python,
          f"{form}: kforge's {root['allocated_bytes']:.0f} bytes allocated per forward equal torch.profiler's "
          f"{python:.0f} in Python")
    with open(snapshot_path, "rb") as f:
        snapshot = pickle.load(f)
    check_snapshot(snapshot, root["allocated_bytes"], form)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    with tempfile.TemporaryDirectory() as folder:
        for form in ("script", "trace"):
            check_model(form, model, args, folder)


if __name__ == "__main__":
    main()
