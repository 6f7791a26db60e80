#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An AOTInductor package (torch._inductor.aoti_compile_and_package, PyTorch's way to deploy an exported model to C++),
made as users make it, runs in kforge as LibTorch's AOTIModelPackageLoader runs it in a C++ deployment:
  - `run` gives the outputs of Python's torch._inductor.aoti_load_package on the same inputs (two inputs, two
    outputs), says the program is compiled, and a second compiled model is chosen with --program;
  - `profile` measures its forwards (what the compiled code still calls through the dispatcher, or the forward
    alone) and names the program "compiled";
  - `bench --against` times the compiled package against the exported program it was compiled from
    (torch.export.save) in alternating rounds, outputs agreeing; a plan with an entry is refused naming why
    (compiled code never reaches a provider) and what to plan on;
  - an input of the wrong count is refused naming the package; `modules` counts the weights the compiled code holds;
  - a package holding the exported program and the compiled code (package_pt2) runs the program and says the
    compiled code is there; --compiled runs that compiled code with the program's module tree;
  - the desktop (kforge-studio, offscreen) opens it, profiles a baseline and renders the Profile page and the module
    tree with its times, naming the package and its kind ("AOTInductor compiled model"); the package holding both
    opens its exported program there too, and with --compiled (what the desktop's Open offers as "compiled code")
    runs and profiles its compiled code.
Exit 77: no C++ compiler for Inductor."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, check_same_output, kforge  # noqa: E402

import torch
from torch.export.pt2_archive._package import package_pt2


class TwoInTwoOut(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x, y):
        h = torch.nn.functional.gelu(self.proj(x))
        return self.norm(h + y), h.sum(dim=-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--studio", help="kforge-studio, to open the package in the desktop")
    parser.add_argument("--ui-test", help="tst_ui_main_window, to open the package holding both from File › Open")
    args = parser.parse_args()
    if not shutil.which("g++") and not shutil.which("c++"):
        print("no C++ compiler: AOTInductor cannot compile here")
        return 77
    torch.manual_seed(0)
    model = TwoInTwoOut().eval()
    inputs = (torch.randn(2, 8), torch.randn(2, 8))
    program = torch.export.export(model, inputs)
    with tempfile.TemporaryDirectory() as folder:
        compiled = os.path.join(folder, "compiled.pt2")
        torch._inductor.aoti_compile_and_package(program, package_path=compiled)
        saved = os.path.join(folder, "program.pt2")
        torch.export.save(program, saved)
        inputs_file = os.path.join(folder, "inputs.pt")
        torch.save(inputs, inputs_file)
        expected = torch._inductor.aoti_load_package(compiled)(*inputs)

        ran = json.loads(kforge(args.kforge, "run", compiled, "--inputs-file", inputs_file, "--json").stdout)
        check(len(ran["outputs"]) == 2, f"two outputs, as the model returns: {len(ran['outputs'])}")
        check_same_output(ran["outputs"][0], expected[0], "run, first output")
        check_same_output(ran["outputs"][1], expected[1], "run, second output")

        tree = json.loads(kforge(args.kforge, "modules", compiled, "--json").stdout)
        held = tree[0]["subtree_parameters"]
        declared = sum(p.numel() for p in model.parameters())
        check(tree[0]["type"] == "AOTInductor compiled model" and 0 < held <= declared,
              f"the tree's root counts the weights the compiled code holds: {held} of the model's {declared} "
              f"(Inductor may fold small ones into the code)")

        profiled = kforge(args.kforge, "profile", compiled, "--inputs-file", inputs_file, "--iterations", "3",
                          "--warmup", "1")
        check("graph executor: compiled" in profiled.stdout and "measured 3 iterations" in profiled.stdout,
              "profile measures the compiled forwards and says the program is compiled:\n" + profiled.stdout[:600])

        benched = json.loads(kforge(args.kforge, "bench", compiled, "--against", saved, "--inputs-file", inputs_file,
                                    "--iterations", "6", "--warmup", "1", "--json").stdout)
        check(benched["against"] == "program.pt2" and benched["rounds"] == 6 and len(benched["plan_ms"]) == 6
              and len(benched["baseline_ms"]) == 6 and benched["outputs_agree"]
              and benched["verdict"] in ("faster", "slower", "no detectable change", "too noisy to judge"),
              f"bench times the compiled package against the program it was compiled from, in rounds, and their "
              f"outputs agree: {benched['verdict']} {benched['speedup']:.2f}x, outputs agree {benched['outputs_agree']}")
        text = kforge(args.kforge, "bench", compiled, "--against", saved, "--inputs-file", inputs_file,
                      "--iterations", "2", "--warmup", "0").stdout
        check("compiled.pt2 against program.pt2:" in text, "the text names both files: " + text.strip()[-300:])

        refused = kforge(args.kforge, "run", compiled, "--inputs-file", inputs_file, "--provide",
                         ":gelu:AtenGeluProvider", expect=1)
        check("never reach a kernel provider" in refused.stderr and "torch.export.save(program, path)" in refused.stderr,
              "a plan on compiled code is refused with why and what to plan on: " + refused.stderr.strip())

        optimized = kforge(args.kforge, "optimize", compiled, "--inputs-file", inputs_file, "-o",
                           os.path.join(folder, "never.kfplan.json"), expect=1)
        check("nothing to optimize" in optimized.stderr and "never reach a kernel provider" in optimized.stderr
              and not os.path.exists(os.path.join(folder, "never.kfplan.json")),
              "optimize on compiled code says why there is nothing to optimize, and writes no plan: "
              + optimized.stderr.strip())

        wrong = kforge(args.kforge, "run", compiled, "--input", "float32[2,8]", expect=1)
        check("takes 2 input(s), 1 given" in wrong.stderr and "compiled.pt2" in wrong.stderr,
              "a missing input is refused naming the package: " + wrong.stderr.strip())

        # Other shapes than the package was compiled for: refused with the expected and given ones (a batch of 64
        # ran and returned wrong values; [2, 4] failed inside the compiled code after a long stack trace).
        for given in ("float32[64,8]", "float32[2,4]", "int64[2,8]"):
            other = kforge(args.kforge, "run", compiled, "--input", given, "--input", "float32[2,8]", expect=1)
            check("input 1 is " in other.stderr and "the package was compiled for float32[2, 8]" in other.stderr
                  and "Traceback" not in other.stderr and len(other.stderr) < 2000,
                  f"an input of {given} is refused with the expected and given shapes: " + other.stderr.strip())

        missing = kforge(args.kforge, "run", compiled, "--inputs-file", inputs_file, "--program", "other", expect=1)
        check("has no compiled model 'other' (it has: model)" in missing.stderr,
              "--program names a compiled model that is not there: " + missing.stderr.strip())

        # A package holding both, as torch.export.pt2_archive's package_pt2 writes it: the exported program runs, and
        # the warning says the compiled code is there and how to run it.
        both = os.path.join(folder, "both.pt2")
        with zipfile.ZipFile(compiled) as archive:
            members = [n for n in archive.namelist() if "/data/aotinductor/model/" in n and not n.endswith("/")]
            extracted = [archive.extract(n, os.path.join(folder, "aoti")) for n in members]
        package_pt2(both, exported_programs={"model": program}, aoti_files={"model": extracted})
        ran_both = kforge(args.kforge, "run", both, "--inputs-file", inputs_file, "--json")
        check("also holds AOTInductor compiled code ('model')" in ran_both.stderr
              and "kforge runs its exported program" in ran_both.stderr and "--compiled" in ran_both.stderr,
              "a package with both runs the exported program and says the compiled code is there: "
              + ran_both.stderr.strip()[:300])
        outputs_both = json.loads(ran_both.stdout)["outputs"]
        check_same_output(outputs_both[0], expected[0], "the exported program of the package with both")
        # --compiled runs that package's compiled code, with the exported program's module tree.
        tree_both = json.loads(kforge(args.kforge, "modules", both, "--compiled", "--json").stdout)
        check([m["path"] for m in tree_both][:2] == ["", "proj"] and tree_both[1]["type"] == "Linear",
              f"--compiled keeps the exported program's tree: {[(m['path'], m['type']) for m in tree_both]}")
        compiled_both = kforge(args.kforge, "run", both, "--compiled", "--inputs-file", inputs_file, "--json")
        check("running the AOTInductor compiled code (--compiled)" in compiled_both.stderr,
              "--compiled says the compiled code runs: " + compiled_both.stderr.strip()[:200])
        check_same_output(json.loads(compiled_both.stdout)["outputs"][0], expected[0],
                          "the compiled code of the package with both")
        not_both = kforge(args.kforge, "run", saved, "--compiled", "--inputs-file", inputs_file, expect=1)
        check("holds no AOTInductor compiled code to run (--compiled)" in not_both.stderr,
              "--compiled on a plain torch.export package says what it is: " + not_both.stderr.strip())

        if args.studio:  # the desktop: open, profile a baseline, render the Profile page and the tree with its times
            env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=os.path.join(folder, "config"),
                       XDG_RUNTIME_DIR=folder)
            for view in ("profile", "tree-time"):
                shot = os.path.join(folder, f"{view}.png")
                done = subprocess.run([args.studio, compiled, "--inputs-file", inputs_file, "--profile", "--screenshot",
                                       shot, "--view", view], env=env, capture_output=True, text=True, timeout=300)
                check(done.returncode == 0 and os.path.exists(shot) and os.path.getsize(shot) > 1000,
                      f"the desktop opens the package, profiles it and renders its {view} view: "
                      f"exit {done.returncode} {done.stdout[-400:]}{done.stderr[-400:]}")
            if args.ui_test:  # what Open offers for that package, and the compiled code chosen there
                done = subprocess.run([args.ui_test, "aPackageWithCompiledCodeOffersToRunIt"],
                                      env=dict(env, KFORGE_TEST_COMPILED_BESIDE_PT2=both), capture_output=True,
                                      text=True, timeout=300)
                check(done.returncode == 0 and "PASS   : TestMainWindow::aPackageWithCompiledCodeOffersToRunIt()" in done.stdout,
                      "the desktop's Open offers the exported program and its compiled code, and runs the compiled "
                      "code chosen: " + done.stdout[-600:])
            # The package holding both: its exported program by default (a batch run asks nothing), its compiled
            # code with --compiled; each profiled, the warning on the terminal saying which runs.
            for flags, runs in (([], "also holds AOTInductor compiled code"),
                                (["--compiled"], "running the AOTInductor compiled code")):
                shot = os.path.join(folder, f"both{''.join(flags)}.png")
                done = subprocess.run([args.studio, both, *flags, "--inputs-file", inputs_file, "--profile",
                                       "--screenshot", shot, "--view", "tree-time"], env=env, capture_output=True,
                                      text=True, timeout=300)
                check(done.returncode == 0 and os.path.getsize(shot) > 1000 and runs in done.stderr,
                      f"the desktop opens the package with both {flags or 'as it is'}, profiles it and says "
                      f"'{runs}': exit {done.returncode} {done.stderr[-400:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
