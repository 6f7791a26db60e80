#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One real model of the corpus (scripts/corpus_export.py) through kforge, per exported form (script, trace):
  a. module paths: `kforge modules FILE --json` equals Python's named_modules(), and its parameter total Python's
     parameters() (a tied weight counts once);
  b. calls: for every catalog function, the calls `kforge run FILE --inputs-file INPUT --iterations 2 --json`
     reports (all rows, any provider) are twice the Python reference count (0 where Python has none): TorchScript's
     first forward runs its profiling pass, the second the optimized graph, and both must show every call;
  c. output: kforge's output digest (shape, dtype, sum, max |x|) equals the eager Python output's, within what
     elements each within rtol 1e-4, atol 1e-5 (scaled by the output's max |x|: randomly initialised nets such as
     efficientnet_b0 end at 1e-14, where a plain atol would accept anything) allow;
  b1. the static inventory (`kforge modules`: the root's subtree functions) covers the calls (b) of the run: every
      function at least as often as the run calls it, so that plan validation never refuses an entry the run serves.
      Where it counts more, the code branches on values known only when it runs and the inventory counts both arms
      (nn.MultiheadAttention's fast path, timm's `if attn_mask is not None or is_causal`): printed, not a failure;
  d. with the catalog's reference provider for every function Python sees, in the root scope
     (--provide ":FUNCTION:PROVIDER") and again in the innermost module whose own inventory calls it, every call of
     those functions is served by it (no "original" rows), the run warns of no entry that can never fire (what
     `plan validate` would say), and the output is still (c);
  e. where the model calls scaled_dot_product_attention: an AITune plan file (tests/data/plans/aitune_sdpa_math.json,
     AITune's own to_dict() form) serves every attention call, and the output is still (c).
The pt2 form (a torch.export package) gets all four, with Python running the exported program under the profiler as
the reference for (b) and (d) (eager Python may take paths export does not record), plus (b0): the functions of its
graph's nodes (`kforge modules`) against the same reference.
Every check runs and every failure is printed with its diff; exit 1 when any failed, 77 (skip) when torchvision is
missing. A form that did not export (the corpus records why) is reported, not failed.

  test_corpus.py --kforge build/bin/kforge --corpus DIR --model resnet18
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
AITUNE_PLAN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "plans", "aitune_sdpa_math.json")
import corpus_export  # noqa: E402 (the catalog reading and output flattening are shared with the export)

RTOL, ATOL = 1e-4, 1e-5
ITERATIONS = 2  # the profiled and the optimized TorchScript graph
KFORGE_TIMEOUT = 600


class Failures:
    def __init__(self):
        self.items: list[str] = []

    def add(self, where: str, what: str) -> None:
        self.items.append(where)
        print(f"FAIL {where}: {what}", flush=True)


def kforge_json(kforge: str, args: list[str]):
    """(parsed JSON or None, error text)."""
    cmd = [kforge] + args
    print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=KFORGE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {KFORGE_TIMEOUT} s"
    if proc.stderr.strip():
        print("  stderr: " + proc.stderr.strip()[-2000:].replace("\n", "\n  stderr: "), flush=True)
    if proc.returncode != 0:
        return None, f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-2000:]}"
    try:
        return json.loads(proc.stdout), ""
    except ValueError as e:
        return None, f"output is not JSON ({e}): {proc.stdout[:500]}"


def python_digests(meta: dict, corpus: str) -> dict:
    """The eager output's digests: recorded by the export (no torch import here, which costs seconds per model), or
    from the saved output for an export made before they were recorded."""
    if "output_digests" in meta:
        return meta["output_digests"]
    import torch

    return corpus_export.output_digests(torch.load(os.path.join(corpus, meta["output_file"]), weights_only=False))


def compare_outputs(where: str, run: dict, expected: dict, failures: Failures) -> None:
    got = {o.get("path", ""): o for o in run.get("outputs", [])}
    if set(got) != set(expected):
        failures.add(where, f"output paths differ: kforge {sorted(got)}, Python {sorted(expected)}")
        return
    before = len(failures.items)
    for path, e in expected.items():
        g = got[path]
        problems = []
        if list(g.get("shape", [])) != e["shape"]:
            problems.append(f"shape {g.get('shape')} != {e['shape']}")
        if g.get("dtype") != e["dtype"]:
            problems.append(f"dtype {g.get('dtype')} != {e['dtype']}")
        # Each element within atol + rtol |x| bounds the sum's and the max's differences; atol is relative to the
        # output's magnitude (a randomly initialised efficientnet_b0 ends at 1e-14).
        atol = ATOL * e["max_abs"]
        sum_tol = atol * e["numel"] + RTOL * e["abs_sum"]
        if not isinstance(g.get("sum"), (int, float)) or abs(g["sum"] - e["sum"]) > sum_tol:
            problems.append(f"sum {g.get('sum')!r} != {e['sum']!r} (tolerance {sum_tol:.3g})")
        max_tol = atol + RTOL * e["max_abs"]
        if not isinstance(g.get("max_abs"), (int, float)) or abs(g["max_abs"] - e["max_abs"]) > max_tol:
            problems.append(f"max |x| {g.get('max_abs')!r} != {e['max_abs']!r} (tolerance {max_tol:.3g})")
        if problems:
            failures.add(where, f"output '{path}' differs from Python's: " + "; ".join(problems))
    if len(failures.items) == before:
        exact = all(got[p]["sum"] == e["sum"] and got[p]["max_abs"] == e["max_abs"] for p, e in expected.items())
        print(f"  {where[where.find('('):]}: " + ", ".join(
            f"'{p}' {e['dtype']}{e['shape']} sum {got[p]['sum']:.9g}" for p, e in expected.items())
            + (" equal Python's (sum and max |x| bit for bit)" if exact else " equal Python's within tolerance"))


def calls_by(run: dict, iterations: int) -> tuple[dict, dict]:
    """({function: calls per forward}, {(function, provider): calls per forward}) from `kforge run --json`."""
    per_fn: dict = {}
    per_provider: dict = {}
    for row in run.get("calls", []):
        n = row.get("calls", 0) / iterations
        per_fn[row["function"]] = per_fn.get(row["function"], 0) + n
        key = (row["function"], row.get("provider", "?"))
        per_provider[key] = per_provider.get(key, 0) + n
    return per_fn, per_provider


def fmt(n) -> str:
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


def check_calls(where: str, catalog_names: list[str], python: dict, seen: dict, profiler: dict,
                failures: Failures) -> None:
    unknown = sorted(set(seen) - set(catalog_names))
    rows = []
    for fn in catalog_names:
        p, k = python.get(fn, 0), seen.get(fn, 0)
        if p or k or profiler.get(fn, 0):
            rows.append((fn, p, k, profiler.get(fn, 0), p != k))
    bad = [r for r in rows if r[4]]
    print(f"  {'function':32} {'python':>7} {'kforge':>7} {'torch.profiler':>15}")
    for fn, p, k, pr, mismatch in rows:
        note = ""
        if mismatch:
            note = "  <- kforge sees fewer" if k < p else "  <- kforge sees more"
            if pr == p:
                note += " (torch.profiler of this file agrees with Python)"
            else:
                note += " (torch.profiler of this file differs from Python too)"
        print(f"  {fn:32} {fmt(p):>7} {fmt(k):>7} {fmt(pr):>15}{note}")
    if bad:
        total_p = sum(python.get(fn, 0) for fn in catalog_names)
        total_k = sum(min(seen.get(fn, 0), python.get(fn, 0)) for fn in catalog_names)
        failures.add(where, f"{len(bad)} of {len(rows)} functions differ; kforge sees {fmt(total_k)} of the "
                            f"{fmt(total_p)} catalog calls Python sees: "
                            + ", ".join(f"{fn} {fmt(k)}/{fmt(p)}" for fn, p, k, _, _ in bad))
    if unknown:
        failures.add(where, f"kforge reports functions that are not in the catalog: {unknown}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--corpus", help="corpus folder (default: corpus_export.py's)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--forms", nargs="+", default=list(corpus_export.FORMS), choices=corpus_export.FORMS)
    ap.add_argument("--catalog", default=os.environ.get("KFORGE_CORPUS_CATALOG") or None,
                    help="as corpus_export.py --catalog (default: `kforge functions --json`; CTest passes the "
                         "corpus's catalog.json, which the corpus_export fixture has just written from the same kforge)")
    args = ap.parse_args(argv)
    try:
        corpus = args.corpus or corpus_export.default_out_dir()
    except Exception as e:  # noqa: BLE001
        print(f"SKIP: {e}: run scripts/bootstrap")
        return 77
    meta_path = os.path.join(corpus, f"{args.model}.json")
    meta = corpus_export.read_json(meta_path)
    if meta is None or not os.path.exists(os.path.join(corpus, f"{args.model}.done")):
        manifest = corpus_export.read_json(os.path.join(corpus, "manifest.json")) or {}
        error = next((m.get("error") for m in manifest.get("models", []) if m.get("name") == args.model), None)
        print(f"FAIL: {meta_path} is missing or incomplete"
              + (f": its export failed: {error}" if error else "") + "; export the corpus first (ctest -R "
              f"corpus_export, or scripts/corpus_export.py --kforge {args.kforge} --out {corpus} --models "
              f"{args.model})")
        return 1
    failures = Failures()
    model = args.model

    catalog, source = corpus_export.load_catalog(args.kforge, args.catalog)
    names = [f["name"] for f in catalog["functions"]]
    reference = {f["name"]: f["reference_provider"] for f in catalog["functions"]}
    if corpus_export.catalog_hash(catalog) != meta.get("catalog_hash"):
        failures.add(f"{model}: catalog", f"the corpus was counted with another catalog ({meta.get('catalog_source')},"
                                          f" {meta.get('catalog_hash')}) than {source} "
                                          f"({corpus_export.catalog_hash(catalog)}): export it again")
    python_calls = meta["calls"]
    called = [fn for fn in names if python_calls.get(fn, 0)]
    not_in_catalog = sorted(set(python_calls) - set(names))
    if not_in_catalog:
        failures.add(f"{model}: catalog", f"Python counts name functions the catalog lacks: {not_in_catalog}")
    print(f"{model}: {meta['architecture']}, input {meta['input_shape']}, {len(meta['module_paths'])} modules, "
          f"{sum(python_calls.values())} catalog calls per forward in Python: "
          + ", ".join(f"{fn} {python_calls[fn]}" for fn in called))
    print(f"catalog: {source}, {len(names)} functions")

    # (A reference provider this build lacks fails the (d) run with "unknown provider type", by name: no `kforge
    # providers` process per model to find out first.)
    provided = called

    expected_outputs = python_digests(meta, corpus)
    input_file = os.path.join(corpus, meta["input_file"])
    summary = []
    for form in [f for f in args.forms if f in meta["forms"]]:
        info = meta["forms"][form]
        if not info.get("exported"):
            print(f"\n== {model} [{form}]: not exported ({info.get('error', 'no record')}): nothing to check")
            summary.append(f"{form}: not exported")
            continue
        file = os.path.join(corpus, info["file"])
        print(f"\n== {model} [{form}] {file}")
        before = len(failures.items)

        # a. module paths
        modules, err = kforge_json(args.kforge, ["modules", file, "--json"])
        if modules is None:
            failures.add(f"{model}[{form}] (a) modules", err)
        else:
            got = [m.get("path", "") for m in modules]
            want = meta["module_paths"]
            missing, extra = [p for p in want if p not in set(got)], [p for p in got if p not in set(want)]
            if missing or extra or len(got) != len(want):
                failures.add(f"{model}[{form}] (a) modules",
                             f"kforge {len(got)} paths, Python {len(want)}; missing in kforge {missing[:20]}"
                             f"{' ...' if len(missing) > 20 else ''}; not in Python {extra[:20]}"
                             f"{' ...' if len(extra) > 20 else ''}")
            else:
                print(f"  (a) {len(got)} module paths equal Python's named_modules()")
            total = modules[0].get("subtree_parameters") if modules else None
            if "parameters" in meta and total != meta["parameters"]:
                failures.add(f"{model}[{form}] (a) parameters",
                             f"kforge counts {total} parameters, Python's parameters() {meta['parameters']}")

        expected_calls = python_calls
        if form == "pt2":
            # The exported graph's own calls: Python running the same exported program under the profiler. Eager
            # Python may take other paths (nn.MultiheadAttention's fast path hides its linear and attention calls;
            # the exported graph records the slow path's). b0: the functions of the graph's nodes (kforge modules).
            expected_calls = info.get("profiler_calls", {})
            if modules is not None:
                seen = modules[0].get("subtree_functions", {}) if modules else {}
                diff = {fn: (expected_calls.get(fn, 0), seen.get(fn, 0))
                        for fn in sorted(set(expected_calls) | set(seen))
                        if expected_calls.get(fn, 0) != seen.get(fn, 0)}
                if diff:
                    failures.add(f"{model}[{form}] (b0) graph calls", "function: (Python running the export, kforge) "
                                 + json.dumps(diff))
                else:
                    eager = {fn: (python_calls.get(fn, 0), seen.get(fn, 0)) for fn in sorted(set(python_calls) |
                             set(seen)) if python_calls.get(fn, 0) != seen.get(fn, 0)}
                    print(f"  (b0) {sum(seen.values())} catalog calls in the graph equal Python's run of the export"
                          + (f"; eager Python differs (python, export): {eager}" if eager else ", and eager Python's"))

        # b. calls, c. output
        run, err = kforge_json(args.kforge, ["run", file, "--inputs-file", input_file, "--iterations",
                                             str(ITERATIONS), "--json"])
        if run is None:
            failures.add(f"{model}[{form}] (b, c) kforge run", err)
        else:
            seen, _ = calls_by(run, max(1, run.get("iterations", 1)) * max(1, run.get("threads", 1)))
            print("  (b) catalog calls per forward")
            check_calls(f"{model}[{form}] (b) calls", names, expected_calls, seen, info.get("profiler_calls", {}),
                        failures)
            compare_outputs(f"{model}[{form}] (c) output", run, expected_outputs, failures)
            # b1. the static inventory against the run
            if modules is not None:
                static = modules[0].get("subtree_functions", {}) if modules else {}
                missed = {fn: (static.get(fn, 0), fmt(n)) for fn, n in sorted(seen.items()) if static.get(fn, 0) < n}
                extra = {fn: (n, fmt(seen.get(fn, 0))) for fn, n in sorted(static.items()) if n > seen.get(fn, 0)}
                if missed:
                    failures.add(f"{model}[{form}] (b1) static inventory",
                                 "calls the inventory misses, function: (kforge modules, kforge run per forward) " +
                                 json.dumps(missed))
                elif extra:
                    print(f"  (b1) the static inventory covers the run's {fmt(sum(seen.values()))} calls per forward; "
                          "it also counts branches this run did not take: " + json.dumps(extra))
                else:
                    print(f"  (b1) the static inventory equals the run's {fmt(sum(seen.values()))} calls per forward")
            if run.get("leftovers"):
                failures.add(f"{model}[{form}] (b) leftovers", json.dumps(run["leftovers"])[:1000])

        # f. memory: every allocation of a forward lands in one of the model's modules, and a module's figures hold its
        # children's (kforge profile --memory)
        profiled, err = kforge_json(args.kforge, ["profile", file, "--inputs-file", input_file, "--iterations", "1",
                                                  "--warmup", "1", "--memory", "--top", "0", "--json"])
        if profiled is None:
            failures.add(f"{model}[{form}] (f) memory", err)
        else:
            rows = {m["path"]: m for m in profiled["memory"]["modules"]}
            strangers = sorted(set(rows) - set(meta["module_paths"]) - {""})
            root = rows.get("", {}).get("allocated_bytes", 0)
            children = {p: m for p, m in rows.items() if p and "." not in p}
            if strangers:
                failures.add(f"{model}[{form}] (f) memory", f"allocations in modules the model lacks: {strangers[:10]}")
            elif root <= 0 or root + 1e-6 < sum(m["allocated_bytes"] for m in children.values()):
                failures.add(f"{model}[{form}] (f) memory", f"the root's {root} bytes do not hold its children's: "
                             + json.dumps({p: m["allocated_bytes"] for p, m in children.items()})[:400])
            else:
                print(f"  (f) memory: {root / 1024:.1f} KiB allocated per forward in {len(rows)} modules, peak "
                      f"{profiled['memory']['peak_bytes'] / 1024:.1f} KiB in {profiled['memory']['peak_module'] or '(root)'}")

        # d. a reference provider for each called function, in the root scope
        provided_here = [fn for fn in provided if expected_calls.get(fn, 0)] if form == "pt2" else provided
        if provided_here:
            cmd = ["run", file, "--inputs-file", input_file, "--iterations", str(ITERATIONS), "--json"]
            for fn in provided_here:
                cmd += ["--provide", f":{fn}:{reference[fn]}"]
            # Scoped too: the innermost module whose own inventory calls the function (the plan a user makes from
            # the tree), which must neither be refused nor warned about.
            for fn in provided_here:
                owners = [m for m in modules or [] if m.get("path") and fn in m.get("functions", {}) and
                          m.get("forward_called", True)]
                if owners:
                    owner = max(owners, key=lambda m: m.get("depth", 0))
                    cmd += ["--provide", f"{owner['path']}:{fn}:{reference[fn]}"]
            run, err = kforge_json(args.kforge, cmd)
            if run is None:
                failures.add(f"{model}[{form}] (d) kforge run with reference providers", err)
            else:
                _, per_provider = calls_by(run, max(1, run.get("iterations", 1)) * max(1, run.get("threads", 1)))
                bad = []
                print(f"  (d) {'function':28} {'python':>7} {'served':>7} {'original':>8}  other providers")
                for fn in provided_here:
                    served = per_provider.get((fn, reference[fn]), 0)
                    original = per_provider.get((fn, "original"), 0)
                    other = {p: n for (f, p), n in per_provider.items()
                             if f == fn and p not in (reference[fn], "original")}
                    ok = served == expected_calls[fn] and original == 0 and not other
                    print(f"      {fn:28} {fmt(expected_calls[fn]):>7} {fmt(served):>7} {fmt(original):>8}  "
                          f"{other or ''}{'' if ok else '  <- not all served by ' + reference[fn]}")
                    if not ok:
                        bad.append(f"{fn}: {fmt(served)} of {fmt(expected_calls[fn])} served by {reference[fn]}, "
                                   f"{fmt(original)} original" + (f", {other}" if other else ""))
                if bad:
                    failures.add(f"{model}[{form}] (d) served", "; ".join(bad))
                if run.get("warnings"):
                    failures.add(f"{model}[{form}] (d) warnings", "entries the run says can never fire: " +
                                 json.dumps(run["warnings"])[:1500])
                compare_outputs(f"{model}[{form}] (d) output with reference providers", run, expected_outputs,
                                failures)
                if run.get("leftovers"):
                    failures.add(f"{model}[{form}] (d) leftovers", json.dumps(run["leftovers"])[:1000])
        # e. an AITune plan file as AITune writes it (no scope: the whole model) serves every attention call
        attention = expected_calls.get("scaled_dot_product_attention", 0)
        if attention:
            run, err = kforge_json(args.kforge, ["run", file, "--inputs-file", input_file, "--iterations",
                                                 str(ITERATIONS), "--json", "--plan", AITUNE_PLAN])
            if run is None:
                failures.add(f"{model}[{form}] (e) kforge run with an AITune plan", err)
            else:
                _, per_provider = calls_by(run, max(1, run.get("iterations", 1)) * max(1, run.get("threads", 1)))
                served = sum(n for (f, p), n in per_provider.items()  # "TorchSDPAKernelProvider(backend=MATH)"
                             if f == "scaled_dot_product_attention" and p.startswith("TorchSDPAKernelProvider"))
                print(f"  (e) AITune plan {os.path.basename(AITUNE_PLAN)}: {fmt(served)} of {fmt(attention)} "
                      "attention calls served by TorchSDPAKernelProvider")
                if served != attention:
                    failures.add(f"{model}[{form}] (e) AITune plan", f"{fmt(served)} of {fmt(attention)} attention "
                                 "calls served by TorchSDPAKernelProvider")
                compare_outputs(f"{model}[{form}] (e) output with the AITune plan", run, expected_outputs, failures)
        summary.append(f"{form}: {'ok' if len(failures.items) == before else 'FAILED'}")

    print(f"\n{model}: " + "; ".join(summary) + (f"; {len(failures.items)} failed checks" if failures.items else ""))
    for f in failures.items:
        print(f"  FAIL {f}")
    return 1 if failures.items else 0


if __name__ == "__main__":
    sys.exit(main())
