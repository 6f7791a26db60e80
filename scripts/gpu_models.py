#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Models and Python-side references for scripts/gpu-check report (runs on the GPU machine's own torch).

  gpu_models.py make DIR      scripted torchvision resnet50 and vit_b_16 (its head not zero), resnet18 as a
                              torch.export.save package, and a model whose forward syncs with the host inside a
                              scope (a CUDA graph capture of it fails half way)
  gpu_models.py torchprof DIR torch.profiler (CPU + CUDA activities) against plain forwards of the same
                              TorchScript files on CUDA: the per-forward cost of PyTorch's own profiler
  gpu_models.py aoti DIR      a small MLP exported (mlp.pt2, torch.export.save), compiled for CUDA with
                              aoti_compile_and_package (mlp_cuda_compiled.pt2), its inputs (mlp.input.pt) and
                              aoti_load_package's output sum (mlp_cuda_compiled.expected), for kforge on compiled code
"""
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

INPUTS = {"resnet50.pt": (8, 3, 224, 224), "vit_b_16.pt": (8, 3, 224, 224)}


class SyncAct(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # .item() waits for the GPU: illegal while a CUDA graph is being captured.
        return F.gelu(x) * float(x.sum().item())


class SyncModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 64)
        self.act = SyncAct()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x))


def make(out: Path):
    import torchvision

    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    for name, ctor in (("resnet50.pt", torchvision.models.resnet50), ("vit_b_16.pt", torchvision.models.vit_b_16)):
        model = ctor().eval()
        if name == "vit_b_16.pt":
            # torchvision zeroes ViT's head: every output would be 0 and no comparison of outputs could fail.
            torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        torch.jit.script(model).save(str(out / name))
    # A torch.export.save package, as users save one: kforge runs it with its own interpreter on CUDA too.
    resnet18 = torchvision.models.resnet18().eval()
    torch.export.save(torch.export.export(resnet18, (torch.randn(2, 3, 224, 224),)), str(out / "resnet18.pt2"))
    torch.jit.script(SyncModel().eval()).save(str(out / "sync_in_scope.pt"))
    print("made", sorted(p.name for p in out.iterdir()))


def timed(fn, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n


def torchprof(folder: Path):
    from torch.profiler import ProfilerActivity, profile

    for name, shape in INPUTS.items():
        model = torch.jit.load(str(folder / name)).cuda().eval()
        x = torch.randn(shape, device="cuda")
        with torch.no_grad():
            for _ in range(3):
                model(x)
            plain = min(timed(lambda: model(x), 10) for _ in range(3))
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                profiled = timed(lambda: model(x), 10)
            kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        print(f"{name} {list(shape)}: plain {plain * 1e3:.3f} ms, torch.profiler {profiled * 1e3:.3f} ms per forward "
              f"({profiled / plain:.2f}x), {kernels / 10:.0f} device events per forward")


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(256, 1024)
        self.down = torch.nn.Linear(1024, 256)
        self.norm = torch.nn.LayerNorm(256)

    def forward(self, x):
        return self.norm(x + self.down(F.gelu(self.up(x))))


def aoti(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = Mlp().cuda().eval()
    x = torch.randn(64, 256, device="cuda")
    program = torch.export.export(model, (x,))
    torch.export.save(program, str(out / "mlp.pt2"))
    compiled = torch._inductor.aoti_compile_and_package(program, package_path=str(out / "mlp_cuda_compiled.pt2"))
    torch.save((x.cpu(),), str(out / "mlp.input.pt"))
    with torch.no_grad():
        expected = float(torch._inductor.aoti_load_package(compiled)(x).double().sum())
    (out / "mlp_cuda_compiled.expected").write_text(f"{expected!r}\n")
    print("compiled", compiled, "output sum", expected)


if __name__ == "__main__":
    commands = {"make": make, "torchprof": torchprof, "aoti": aoti}
    if len(sys.argv) != 3 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](Path(sys.argv[2]))
