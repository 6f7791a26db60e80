// SPDX-License-Identifier: Apache-2.0
// An example provider plugin: ExampleReluProvider replaces relu with clamp_min(x, 0). It shows everything a
// plugin needs: a KernelProvider subclass that reads its call with the SDK's argument layer, a registration
// function, and KFORGE_PROVIDER_PLUGIN.
#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>

namespace {

class ExampleReluProvider final : public kforge::KernelProvider {
public:
    kforge::Function function() const override { return kforge::Function::Relu; }
    std::string typeName() const override { return "ExampleReluProvider"; }
    std::vector<std::string> devices() const override { return {"cpu", "cuda"}; }

protected:
    // relu's normal form, aten::relu(Tensor self) -> Tensor (in-place calls, relu_, arrive in this form too), read
    // by the SDK's argument layer (kforge/provider_args.h): nullopt when the stack is not that form.
    bool supports(const torch::jit::Stack& sample) const override
    {
        const auto args = kforge::parseRelu(sample);
        return args && args->self.is_floating_point();
    }
    kforge::CallResult run(const c10::OperatorHandle&, torch::jit::Stack& stack) override
    {
        const auto args = kforge::parseRelu(stack);
        if (!args)
            return kforge::CallResult::decline("not relu's normal form");
        if (!args->self.is_floating_point()) // a restored provider skips supports(): decline, not fail
            return kforge::CallResult::decline("an integer tensor");
        const at::Tensor y = at::clamp_min(args->self, 0);
        torch::jit::drop(stack, kforge::UnaryArgs::kArguments);
        torch::jit::push(stack, y);
        return kforge::CallResult::served();
    }
};

void registerExampleProviders(kforge::ProviderRegistry& registry)
{
    registry.add(
        {"ExampleReluProvider", kforge::Function::Relu, {"cpu", "cuda"}, "example plugin: relu as clamp_min(x, 0)", [] {
             return std::make_unique<ExampleReluProvider>();
         }});
}

} // namespace

KFORGE_PROVIDER_PLUGIN(registerExampleProviders)
KFORGE_PROVIDER_PLUGIN_VERSION("example-relu 1.0")
