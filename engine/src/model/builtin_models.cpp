// SPDX-License-Identifier: Apache-2.0
// Built-in demo models, written as TorchScript in C++ (Module::define) with deterministic weights, so the
// tool, the tests and the benchmarks have real models without Python or downloads.
#include "model/builtin_models.h"

#include <ATen/CPUGeneratorImpl.h>

#include <functional>
#include <map>

namespace kforge::builtin {
namespace {

using torch::jit::Module;

// One generator per model: the same weights on every machine and every run.
class WeightSource {
public:
    explicit WeightSource(uint64_t seed) : m_gen(at::make_generator<at::CPUGeneratorImpl>(seed)) {}
    at::Tensor normal(at::IntArrayRef shape, double std) { return at::normal(0.0, std, shape, m_gen); }

private:
    at::Generator m_gen;
};

Module makeModule(const std::string& typeName, const std::shared_ptr<torch::jit::CompilationUnit>& cu)
{
    return Module(c10::QualifiedName("__torch__.kforge.builtin." + typeName), cu, /*shouldMangle=*/true);
}

std::string num(int64_t v) { return std::to_string(v); }

Module linear(WeightSource& w, const std::shared_ptr<torch::jit::CompilationUnit>& cu, int64_t in, int64_t out)
{
    Module m = makeModule("Linear", cu);
    m.register_parameter("weight", w.normal({out, in}, 1.0 / std::sqrt(double(in))), false);
    m.register_parameter("bias", at::zeros({out}), false);
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.linear(x, self.weight, self.bias)
)");
    return m;
}

Module layerNorm(const std::shared_ptr<torch::jit::CompilationUnit>& cu, int64_t dim)
{
    Module m = makeModule("LayerNorm", cu);
    m.register_parameter("weight", at::ones({dim}), false);
    m.register_parameter("bias", at::zeros({dim}), false);
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.layer_norm(x, [)" +
             num(dim) + R"(], self.weight, self.bias, 1e-05, True)
)");
    return m;
}

// tiny-gpt: embedding, 2 pre-norm transformer blocks (layer_norm, SDPA, linear, gelu), softmax head.
BuiltinModel tinyGpt()
{
    constexpr int64_t vocab = 256, dim = 64, heads = 4, headDim = dim / heads, context = 16, blocks = 2;
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    WeightSource w(20260427);

    Module root = makeModule("TinyGPT", cu);
    Module embed = makeModule("Embedding", cu);
    embed.register_parameter("weight", w.normal({vocab, dim}, 0.02), false);
    embed.define(R"(
def forward(self, ids: Tensor) -> Tensor:
    return torch.embedding(self.weight, ids)
)");
    root.register_module("embed", embed);
    root.register_parameter("pos", w.normal({context, dim}, 0.02), false);

    Module list = makeModule("ModuleList", cu);
    for (int b = 0; b < blocks; ++b) {
        Module attn = makeModule("CausalSelfAttention", cu);
        attn.register_module("qkv", linear(w, cu, dim, 3 * dim));
        attn.register_module("proj", linear(w, cu, dim, dim));
        attn.define(R"(
def forward(self, x: Tensor) -> Tensor:
    B = x.size(0)
    T = x.size(1)
    qkv = self.qkv.forward(x).view([B, T, 3, )" +
                    num(heads) + ", " + num(headDim) + R"(]).permute([2, 0, 3, 1, 4])
    y = torch.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], None, 0.0, True)
    return self.proj.forward(y.transpose(1, 2).reshape([B, T, )" +
                    num(dim) + R"(]))
)");
        Module mlp = makeModule("MLP", cu);
        mlp.register_module("fc", linear(w, cu, dim, 4 * dim));
        mlp.register_module("proj", linear(w, cu, 4 * dim, dim));
        mlp.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return self.proj.forward(torch.gelu(self.fc.forward(x)))
)");
        Module block = makeModule("Block", cu);
        block.register_module("ln1", layerNorm(cu, dim));
        block.register_module("attn", attn);
        block.register_module("ln2", layerNorm(cu, dim));
        block.register_module("mlp", mlp);
        block.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = x + self.attn.forward(self.ln1.forward(x))
    return x + self.mlp.forward(self.ln2.forward(x))
)");
        list.register_module(std::to_string(b), block);
    }
    root.register_module("blocks", list);
    root.register_module("ln_f", layerNorm(cu, dim));
    root.register_module("head", linear(w, cu, dim, vocab));
    std::string body = R"(
def forward(self, ids: Tensor) -> Tensor:
    x = self.embed.forward(ids) + self.pos.narrow(0, 0, ids.size(1))
)";
    for (int b = 0; b < blocks; ++b)
        body += "    x = getattr(self.blocks, \"" + std::to_string(b) + "\").forward(x)\n";
    body += "    return torch.softmax(self.head.forward(self.ln_f.forward(x)), -1)\n";
    root.define(body);
    root.eval();

    at::Tensor ids = at::arange(context, at::kLong).remainder(vocab).unsqueeze(0).mul(7).remainder(vocab);
    return {root, {ids}, {"int64[1," + num(context) + "]"}};
}

Module conv(WeightSource& w, const std::shared_ptr<torch::jit::CompilationUnit>& cu, int64_t in, int64_t out,
            int64_t stride)
{
    Module m = makeModule("Conv2d", cu);
    m.register_parameter("weight", w.normal({out, in, 3, 3}, 1.0 / std::sqrt(double(in * 9))), false);
    m.register_parameter("bias", at::zeros({out}), false);
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.conv2d(x, self.weight, self.bias, [)" +
             num(stride) + ", " + num(stride) + R"(], [1, 1], [1, 1], 1)
)");
    return m;
}

Module groupNorm(const std::shared_ptr<torch::jit::CompilationUnit>& cu, int64_t groups, int64_t channels)
{
    Module m = makeModule("GroupNorm", cu);
    m.register_parameter("weight", at::ones({channels}), false);
    m.register_parameter("bias", at::zeros({channels}), false);
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.group_norm(x, )" +
             num(groups) + R"(, self.weight, self.bias, 1e-05, True)
)");
    return m;
}

// convnet: conv2d, group_norm, silu, relu, linear.
BuiltinModel convNet()
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    WeightSource w(20261027);
    Module root = makeModule("ConvNet", cu);
    root.register_module("stem", conv(w, cu, 3, 16, 1));
    root.register_module("norm", groupNorm(cu, 4, 16));

    Module stage = makeModule("ConvBlock", cu);
    stage.register_module("conv1", conv(w, cu, 16, 32, 2));
    stage.register_module("norm1", groupNorm(cu, 8, 32));
    stage.register_module("conv2", conv(w, cu, 32, 32, 1));
    stage.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = torch.silu(self.norm1.forward(self.conv1.forward(x)))
    return torch.relu(self.conv2.forward(x))
)");
    root.register_module("stage", stage);
    root.register_module("head", linear(w, cu, 32, 10));
    root.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = torch.silu(self.norm.forward(self.stem.forward(x)))
    x = self.stage.forward(x).mean([2, 3])
    return self.head.forward(x)
)");
    root.eval();
    WeightSource inputs(7);
    return {root, {inputs.normal({1, 3, 32, 32}, 1.0)}, {"float32[1,3,32,32]"}};
}

const std::map<std::string, std::function<BuiltinModel()>>& factories()
{
    static const std::map<std::string, std::function<BuiltinModel()>> f{{"tiny-gpt", tinyGpt}, {"convnet", convNet}};
    return f;
}

} // namespace

std::vector<std::string> names()
{
    std::vector<std::string> out;
    for (const auto& [name, _] : factories())
        out.push_back(name);
    return out;
}

std::optional<BuiltinModel> create(const std::string& name)
{
    const auto it = factories().find(name);
    if (it == factories().end())
        return std::nullopt;
    return it->second();
}

} // namespace kforge::builtin
