// SPDX-License-Identifier: Apache-2.0
#pragma once
// The 10,000-module model, built in C++: 3,333 blocks of LayerNorm -> Linear -> GELU on float32[2,8]
// in a ModuleList under the root (10,001 modules), as bench/make_deep_stack.py scripts it from Python. One class
// type per module kind, shared by every instance as scripting shares it; the root's forward calls the blocks in
// turn, as TorchScript unrolls a loop over a ModuleList.
#include <torch/script.h>

#include <memory>
#include <string>

namespace kforge_bench {

inline torch::jit::Module deepStackModel(int blocks = 3333)
{
    using torch::jit::Module;
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    const auto make = [&](const char* type) {
        return Module(c10::QualifiedName(std::string("__torch__.deep_stack.") + type), cu, /*shouldMangle=*/false);
    };
    at::manual_seed(0);
    Module list = make("ModuleList");
    c10::ClassTypePtr normType, projType, actType, blockType; // set by the first block, shared by the rest
    for (int b = 0; b < blocks; ++b) {
        const bool define = b == 0;
        Module norm = define ? make("LayerNorm") : Module(cu, normType);
        norm.register_parameter("weight", at::ones({8}), false);
        norm.register_parameter("bias", at::zeros({8}), false);
        Module proj = define ? make("Linear") : Module(cu, projType);
        proj.register_parameter("weight", at::randn({8, 8}).div_(8), false);
        proj.register_parameter("bias", at::zeros({8}), false);
        Module act = define ? make("GELU") : Module(cu, actType);
        Module block = define ? make("Block") : Module(cu, blockType);
        block.register_module("norm", norm);
        block.register_module("proj", proj);
        block.register_module("act", act);
        if (define) {
            norm.define("def forward(self, x: Tensor) -> Tensor:\n"
                        "    return torch.layer_norm(x, [8], self.weight, self.bias, 1e-05, True)\n");
            proj.define("def forward(self, x: Tensor) -> Tensor:\n"
                        "    return torch.linear(x, self.weight, self.bias)\n");
            act.define("def forward(self, x: Tensor) -> Tensor:\n    return torch.gelu(x)\n");
            block.define("def forward(self, x: Tensor) -> Tensor:\n"
                         "    return self.act.forward(self.proj.forward(self.norm.forward(x)))\n");
            normType = norm.type();
            projType = proj.type();
            actType = act.type();
            blockType = block.type();
        }
        list.register_module(std::to_string(b), block);
    }
    Module root = make("DeepStack");
    root.register_module("blocks", list);
    std::string body = "def forward(self, x: Tensor) -> Tensor:\n";
    for (int b = 0; b < blocks; ++b)
        body += "    x = getattr(self.blocks, \"" + std::to_string(b) + "\").forward(x)\n";
    body += "    return x\n";
    root.define(body);
    root.eval();
    return root;
}

} // namespace kforge_bench
