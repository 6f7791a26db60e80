#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kforge's Chrome trace read by Holistic Trace Analysis (HTA, PyPI HolisticTraceAnalysis), the way users load
torch.profiler's Kineto traces into it. No GPU is needed: a CUDA run is made by construction as a .kfprof file (kernels,
a memcpy and a memset with known nanosecond durations on two streams of device 0 and one of device 1), `kforge report
--trace` exports it, and HTA's TraceAnalysis loads the folder. Its GPU kernel breakdown (names, counts, total, min and
max durations) equals kforge's own table (`kforge report --group-by kernel --json`); the device, stream and correlation
ids HTA parsed are the records'; its temporal breakdown's compute, non-compute and idle time are the union of the
records' intervals; its idle time breakdown lists the records' streams. HTA rounds nanosecond timestamps inward to
whole microseconds unless HTA_DISABLE_NS_ROUNDING=1 (as for torch.profiler's own traces): exact with it, and within
that rounding without it. Exit 77: HTA missing."""
import argparse
import json
import logging
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, import_or_skip, kforge  # noqa: E402

hta_trace_analysis, hta_trace, hta_parser_config = import_or_skip("hta.trace_analysis", "hta.common.trace",
                                                                  "hta.configs.parser_config")
logging.getLogger("hta").setLevel(logging.ERROR)

# (kind, name, device, stream, start_ns, duration_ns, correlation, function): ns-precision times, as CUPTI gives them.
RECORDS = [
    ("memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 13, 2_000, 1_500, 10, ""),
    ("memset", "Memset (Device)", 0, 13, 5_000, 333, 11, ""),
    ("kernel", "ampere_sgemm_64x32_nn", 0, 7, 10_000, 2_345, 12, "linear"),
    ("kernel", "ampere_sgemm_64x32_nn", 0, 13, 11_000, 4_321, 13, "linear"),
    ("kernel", "bias_add_kernel", 0, 7, 13_000, 1_111, 14, "linear"),
    ("kernel", "ampere_sgemm_64x32_nn", 0, 7, 20_250, 2_501, 20, "linear"),
    ("kernel", "softmax_warp_forward", 0, 7, 23_000, 777, 21, ""),
    ("kernel", "softmax_warp_forward", 1, 7, 30_000, 905, 30, ""),
]


def synthetic_kfprof(path):
    """A CUDA run by construction (docs/kfprof-format.md): the RECORDS, one module scope and one linear call."""
    strings = [""]

    def s(text):
        if text not in strings:
            strings.append(text)
        return strings.index(text)

    record_columns = ["kind", "name", "module", "function", "op", "provider", "start_ns", "duration_ns", "thread",
                      "device", "stream", "grid", "block", "registers_per_thread", "shared_memory_bytes", "correlation",
                      "iteration", "graph_replay"]
    records = []
    for kind, name, device, stream, start, duration, correlation, function in RECORDS:
        kernel = kind == "kernel"
        records.append([s(kind), s(name), s("fc"), s(function), s("aten::linear" if function else ""),
                        s("original" if function else ""), start, duration, 1, device, stream,
                        [128, 2, 1] if kernel else [0, 0, 0], [256, 1, 1] if kernel else [0, 0, 0],
                        64 if kernel else 0, 4096 if kernel else 0, correlation, 0, 0])
    ranges = [[s("module"), s(""), s(""), 0, 40_000, 1, 0], [s("module"), s("fc"), s(""), 1_000, 30_000, 1, 0],
              [s("function"), s("linear"), s("original"), 9_000, 3_000, 1, 0]]
    run = {"label": "", "model": "synthetic", "inputs": ["float32[4,16]"], "device": "cuda",
           "device_name": "Synthetic GPU", "versions": {"torch": "2.11.0", "cupti": "13.0", "kforge": "0"},
           "warmup_iterations": 0, "iterations": 1, "cancelled": False, "dropped_records": 0, "wall_ns": 40_000,
           "used_plan": False, "plan": {"format": "kforge-plan", "version": 1, "entries": []},
           "modules": [{"path": "", "name": "", "type": "Net", "children": ["fc"]},
                       {"path": "fc", "name": "fc", "type": "Linear", "children": []}],
           "outputs": [], "output_values": [], "strings": strings, "record_columns": record_columns,
           "records": records, "range_columns": ["kind", "name", "provider", "start_ns", "duration_ns", "thread",
                                                 "iteration"], "ranges": ranges}
    with open(path, "w") as f:
        json.dump({"format": "kforge-profile", "version": 1, "runs": [run]}, f)


def union_us(intervals):
    """Length of the union of [start, end) nanosecond intervals, in µs."""
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total / 1000


def hta_kernel_breakdown(folder, ns_rounding):
    if ns_rounding:
        os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    else:
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    analyzer = hta_trace_analysis.TraceAnalysis(trace_dir=folder)
    _, kernels = analyzer.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=1000,
                                                   include_memory_kernels=True)
    return analyzer, {row["name"]: row for row in kernels.to_dict("records")}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        kfprof = os.path.join(folder, "synthetic.kfprof")
        synthetic_kfprof(kfprof)
        traces = os.path.join(folder, "traces")
        os.mkdir(traces)
        trace = os.path.join(traces, "rank-0.json")
        kforge(args.kforge, "report", kfprof, "--trace", trace)
        with open(trace) as f:
            root = json.load(f)
        check(root.get("schemaVersion") == 1 and root.get("distributedInfo") == {"rank": 0, "world_size": 1},
              "the trace has Kineto's schemaVersion and distributedInfo (rank 0 of 1)")
        check(root.get("deviceProperties") == [{"id": 0, "name": "Synthetic GPU"}, {"id": 1, "name": "Synthetic GPU"}],
              "deviceProperties names the two devices the kernels ran on")
        table = json.loads(kforge(args.kforge, "report", kfprof, "--group-by", "kernel", "--json").stdout)["kernels"]
        ours = {row["name"]: row for row in table}
        check(len(ours) == 5, f"kforge's kernel table has the 5 names of the records: {sorted(ours)}")

        analyzer, hta = hta_kernel_breakdown(traces, ns_rounding=False)
        check(analyzer.t.get_ranks() == [0], "HTA finds one rank, 0, in the folder")
        check(sorted(hta) == sorted(ours), f"HTA's kernel breakdown has kforge's names: {sorted(hta)}")
        for name, row in ours.items():
            got = hta[name]
            calls = round(got["sum (us)"] / got["mean (us)"])
            same = (calls == row["calls"] and abs(got["sum (us)"] - row["total_us"]) < 1e-6
                    and abs(got["min (us)"] - row["min_us"]) < 1e-6 and abs(got["max (us)"] - row["max_us"]) < 1e-6)
            check(same, f"{name}: HTA {calls} x, {got['sum (us)']:.3f} µs in all (min {got['min (us)']:.3f}, max "
                        f"{got['max (us)']:.3f}) = kforge {row['calls']} x, {row['total_us']:.3f} µs (min "
                        f"{row['min_us']:.3f}, max {row['max_us']:.3f})")
        types = {row["name"]: row["kernel_type"] for row in hta.values()}
        check(types["Memcpy HtoD (Pageable -> Device)"] == "MEMORY" and types["Memset (Device)"] == "MEMORY"
              and types["bias_add_kernel"] == "COMPUTATION",
              "HTA types the memcpy and memset MEMORY, kernels COMPUTATION")

        # HTA's analyses parse the args stream and correlation alone (ParserConfig.ARGS_MINIMUM); with every arg it
        # knows (ARGS_COMPLETE), each GPU event's device, stream, correlation and kernel geometry; its lane is pid
        # 2 + device, tid = stream.
        trace = hta_trace.Trace(trace_dir=traces, parser_config=hta_parser_config.ParserConfig(
            hta_parser_config.ParserConfig.ARGS_COMPLETE))
        trace.load_traces(use_multiprocessing=False)
        df = trace.get_trace(0)
        symbols = trace.symbol_table.get_sym_table()
        gpu = df[df["stream"].ne(-1)]
        parsed = sorted((symbols[r["name"]], symbols[r["cat"]], int(r["device"]), int(r["stream"]),
                         int(r["correlation"]), int(r["pid"]), int(r["tid"])) for r in gpu.to_dict("records"))
        categories = {"kernel": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset"}
        want = sorted((name, categories[kind], device, stream, correlation, 2 + device, stream)
                      for kind, name, device, stream, _, _, correlation, _ in RECORDS)
        check(parsed == want, f"HTA reads every GPU event's category and device, stream and correlation ids "
                              f"({len(parsed)} events)")
        kernels = gpu[gpu["cat"].map(symbols.__getitem__).eq("kernel")]
        geometry = {(tuple(r["grid"]), tuple(r["block"]), int(r["registers_per_thread"]), int(r["shared_memory"]))
                    for r in kernels.to_dict("records")}
        check(geometry == {((128, 2, 1), (256, 1, 1), 64, 4096)},
              f"HTA reads the kernels' grid, block, registers per thread and shared memory: {geometry}")
        host = df[df["stream"].eq(-1)]
        check(len(host) == 3 and set(host["device"]) == {-1}, "the module and function ranges are host events for HTA")

        temporal = analyzer.get_temporal_breakdown(visualize=False).iloc[0]
        gpu_intervals = [(start, start + duration) for _, _, _, _, start, duration, _, _ in RECORDS]
        compute = [(start, start + duration) for kind, _, _, _, start, duration, _, _ in RECORDS if kind == "kernel"]
        span = (max(e for _, e in gpu_intervals) - min(s for s, _ in gpu_intervals)) / 1000
        busy = union_us(gpu_intervals)
        expected = {"kernel_time(us)": span, "compute_time(us)": union_us(compute), "idle_time(us)": span - busy,
                    "non_compute_time(us)": busy - union_us(compute)}
        got = {key: float(temporal[key]) for key in expected}
        check(all(abs(got[k] - v) < 1e-6 for k, v in expected.items()),
              f"HTA's temporal breakdown {({k: round(v, 3) for k, v in got.items()})} is the records' union: "
              f"{expected}")

        idle, _ = analyzer.get_idle_time_breakdown(visualize=False)
        check(sorted(set(int(s) for s in idle["stream"])) == [7, 13],
              f"HTA's idle time breakdown is per stream of the records: {sorted(set(idle['stream']))}")

        # HTA's default for ns-precision traces: start rounded up, end down to whole µs, as for torch.profiler's own.
        _, rounded = hta_kernel_breakdown(traces, ns_rounding=True)
        for name, row in ours.items():
            got = rounded[name]
            check(abs(got["sum (us)"] - row["total_us"]) <= 2 * row["calls"],
                  f"{name}: with HTA's default whole-µs rounding, {got['sum (us)']:.0f} µs within 2 µs per call of "
                  f"kforge's {row['total_us']:.3f} µs")


if __name__ == "__main__":
    main()
