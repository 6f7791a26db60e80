#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An AOTInductor package (torch._inductor.aoti_compile_and_package, PyTorch's way to deploy an exported model to C++)
is a .pt2 of compiled code with no exported program in it. kforge recognises it and says what it is and what to save
instead (it said "holds no exported program (no models/NAME.json)"). Exit 77: no C++ compiler for Inductor."""
import argparse
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from kforge_cli import check, kforge  # noqa: E402

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    args = parser.parse_args()
    if not shutil.which("g++") and not shutil.which("c++"):
        print("no C++ compiler: AOTInductor cannot compile here")
        return 77
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU()).eval()
    program = torch.export.export(model, (torch.randn(2, 8),))
    with tempfile.TemporaryDirectory() as folder:
        compiled = os.path.join(folder, "compiled.pt2")
        torch._inductor.aoti_compile_and_package(program, package_path=compiled)
        refused = kforge(args.kforge, "run", compiled, "--input", "float32[2,8]", expect=1)
        check("an AOTInductor package" in refused.stderr and "model (CPU)" in refused.stderr
              and "torch.export.save(program, path)" in refused.stderr,
              "the compiled package is named for what it is, with what to save instead: " + refused.stderr.strip())
        saved = os.path.join(folder, "program.pt2")
        torch.export.save(program, saved)
        kforge(args.kforge, "run", saved, "--input", "float32[2,8]")
        check(True, "the program it was compiled from runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
