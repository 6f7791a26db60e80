# SPDX-License-Identifier: Apache-2.0
import torch, torchvision, torch.nn as nn, torch.nn.functional as F
from torch.export.pt2_archive._package import package_pt2
torch.manual_seed(0)

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.ln = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 8)
    def forward(self, x):
        h = self.fc1(x)
        h = F.gelu(h)
        h = F.layer_norm(h, (32,), self.ln.weight, self.ln.bias)
        return self.fc2(h)

def go(name, m, x):
    m.eval()
    with torch.no_grad():
        y = m(x)
    ep = torch.export.export(m, (x,))
    out = package_pt2(f"{name}.pt2", exported_programs={"forward": ep})
    print(name, "->", out)
    torch.save({"x": x, "y": y}, f"{name}_io.pt")
    # raw files for C++ without pickle
    x.contiguous().numpy().tofile(f"{name}_x.bin"); y.contiguous().numpy().tofile(f"{name}_y.bin")
    print(name, "x", tuple(x.shape), "y", tuple(y.shape))
    with open(f"{name}_graph.txt","w") as f: f.write(str(ep.graph))

go("mlp", MLP(), torch.randn(4, 16))
go("resnet18", torchvision.models.resnet18(weights=None), torch.randn(1, 3, 224, 224))
