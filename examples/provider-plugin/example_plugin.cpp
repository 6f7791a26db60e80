// SPDX-License-Identifier: Apache-2.0
// An example provider plugin: ExampleReluProvider replaces relu with clamp_min(x, 0). It shows everything a
// plugin needs: a KernelProvider subclass, a registration function, and KFORGE_PROVIDER_PLUGIN.
#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>

namespace {

class ExampleReluProvider final : public kforge::KernelProvider {
public:
    kforge::Function function() const override { return kforge::Function::Relu; }
    std::string typeName() const override { return "ExampleReluProvider"; }
    std::vector<std::string> devices() const override { return {"cpu", "cuda"}; }

protected:
    bool supports(const torch::jit::Stack& sample) const override
    {
        return !sample.empty() && sample.back().isTensor() && sample.back().toTensor().is_floating_point();
    }
    // relu's normal form, aten::relu(Tensor self) -> Tensor; in-place calls (relu_) arrive in this form too.
    kforge::CallResult run(const c10::OperatorHandle&, torch::jit::Stack& stack) override
    {
        if (!stack.back().toTensor().is_floating_point()) // a restored provider skips supports(): decline, not fail
            return kforge::CallResult::decline("an integer tensor");
        const at::Tensor x = torch::jit::pop(stack).toTensor();
        torch::jit::push(stack, at::clamp_min(x, 0));
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
