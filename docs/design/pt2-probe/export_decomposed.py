# SPDX-License-Identifier: Apache-2.0
import torch, torchvision
from torch.export.pt2_archive._package import package_pt2
torch.manual_seed(0)
m = torchvision.models.resnet18(weights=None).eval()
x = torch.randn(1, 3, 224, 224)
with torch.no_grad(): y = m(x)
ep = torch.export.export(m, (x,)).run_decompositions()  # core ATen IR
package_pt2("resnet18_core.pt2", exported_programs={"forward": ep})
x.numpy().tofile("resnet18c_x.bin"); y.numpy().tofile("resnet18c_y.bin")
from collections import Counter
print(Counter(str(n.target) for n in ep.graph.nodes if n.op == "call_function"))
