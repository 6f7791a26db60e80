#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Provenance against the real aitune package (0.6.0, installed by scripts/bootstrap without its heavy dependencies):

1. a plan kforge writes (`kforge plan new`) carries its provenance; `kforge plan export --aitune` puts it under
   "kforge_provenance", and aitune's own KernelOptimizationPlan.from_dict loads the file and writes back exactly
   the "providers" list kforge exported;
2. kforge reads that export back with the provenance and the entries' measurements;
3. a plan that aitune itself writes (to_dict) has none: kforge runs it with a note that it was not re-validated;
4. the kforge plan with its recorded machine faked to another ISA is re-validated entry by entry where it lands.
Exit 77: aitune is missing from the venv (run scripts/bootstrap)."""
import argparse
import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
import types

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, kforge  # noqa: E402

AITUNE_VERSION = "0.6.0"
SDPA = "scaled_dot_product_attention"


def aitune_plan_class():
    """KernelOptimizationPlan without aitune's package __init__s, which import TensorRT and the whole tuner."""
    spec = importlib.util.find_spec("aitune")
    if spec is None:
        print("aitune is not installed in this Python (scripts/bootstrap installs it)")
        sys.exit(77)
    version = importlib.metadata.version("aitune")
    if version != AITUNE_VERSION:
        sys.exit(f"aitune {version} is installed; these checks are for {AITUNE_VERSION} (scripts/bootstrap pins it)")
    root = os.path.dirname(spec.origin)
    for name, folder in [("aitune", ""), ("aitune.torch", "torch"), ("aitune.torch.module", "torch/module"),
                         ("aitune.torch.kernel_forge", "torch/kernel_forge")]:
        package = types.ModuleType(name)
        package.__path__ = [os.path.join(root, folder)]
        sys.modules[name] = package
    from aitune.torch.kernel_forge.kernel_optimization_plan import KernelOptimizationPlan
    return KernelOptimizationPlan


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    KernelOptimizationPlan = aitune_plan_class()
    with tempfile.TemporaryDirectory() as tmp:
        plan_path = os.path.join(tmp, "sdpa.kfplan.json")
        kforge(args.kforge, "plan", "new", plan_path, "--provide", f':{SDPA}:TorchSDPAKernelProvider:{{"backend": "MATH"}}')
        plan = json.load(open(plan_path))
        provenance = plan.get("provenance", {})
        check(provenance.get("written_by") == "kforge plan new", "plan new records who wrote the plan")
        machine = provenance.get("machine", {})
        check(machine.get("device") == "cpu" and machine.get("cpu_isa") and machine.get("torch"),
              f"plan new records the machine ({machine})")
        check(provenance.get("providers", [{}])[0].get("origin") == "built-in", "and where the provider comes from")

        # What optimize writes beside each kept entry (kforge/plan.h, EntryMeasurement).
        plan["entries"][0]["measured"] = {"signatures": ["float32[1,4,16,8]"], "speedup": 1.25, "interval": [1.1, 1.4]}
        json.dump(plan, open(plan_path, "w"))
        export_path = os.path.join(tmp, "sdpa.aitune.json")
        kforge(args.kforge, "plan", "export", plan_path, "--aitune", "-o", export_path)
        exported = json.load(open(export_path))
        check(exported["providers"] == [{"type": "TorchSDPAKernelProvider", "backend": "MATH"}],
              "the export's providers list is AITune's own form")
        check(exported["kforge_provenance"]["machine"] == machine, "the provenance travels under kforge_provenance")
        check(exported["kforge_provenance"]["entries"][0]["speedup"] == 1.25, "with each entry's measurement")

        loaded = KernelOptimizationPlan.from_dict(exported)
        check([p.name for p in loaded.providers] == ["PyTorch SDPA MATH"],
              f"aitune {AITUNE_VERSION}'s KernelOptimizationPlan.from_dict loads the export ({loaded.providers})")
        check(loaded.to_dict() == {"providers": exported["providers"]}, "and writes back the same providers")

        shown = json.loads(kforge(args.kforge, "plan", "show", export_path, "--json").stdout)
        check(shown.get("provenance", {}).get("machine") == machine, "kforge reads the export's provenance back")
        check(shown["entries"][0].get("measured", {}).get("interval") == [1.1, 1.4], "and the entry's measurement")

        # A plan written by aitune itself: no provenance, loaded as before, with a note.
        aitune_path = os.path.join(tmp, "by_aitune.json")
        json.dump(KernelOptimizationPlan.from_dict({"providers": exported["providers"]}).to_dict(), open(aitune_path, "w"))
        ran = kforge(args.kforge, "run", "builtin:tiny-gpt", "--plan", aitune_path, "--json")
        check("not re-validated: the plan carries no provenance" in ran.stderr,
              "aitune's own plan runs, noted as not re-validated")
        check(json.loads(ran.stdout)["revalidation"]["had_provenance"] is False, "and --json says so")

        # The kforge plan landing on a machine of another ISA (faked in its recorded provenance).
        del plan["entries"][0]["measured"]  # correctness only: no speed claim to check on a shared CI machine
        plan["provenance"]["machine"]["cpu_isa"] = "AVX512-elsewhere"
        moved_path = os.path.join(tmp, "moved.kfplan.json")
        json.dump(plan, open(moved_path, "w"))
        ran = kforge(args.kforge, "run", "builtin:tiny-gpt", "--plan", moved_path, "--json")
        entries = json.loads(ran.stdout)["revalidation"]["entries"]
        check(len(entries) == 1 and "AVX512-elsewhere" in entries[0]["reasons"][0],
              f"the moved plan's entry is flagged with what differs ({entries})")
        check(entries[0]["kept"] and entries[0]["verdict"].startswith("correct on"), "and re-validated before it runs")
        check("re-validating entry 0" in ran.stderr, "with a progress line")
    print("aitune provenance: all checks passed")


if __name__ == "__main__":
    main()
