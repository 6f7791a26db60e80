// SPDX-License-Identifier: Apache-2.0
// A plugin with kernel generators for gelu that each end one way (test_plugins.cpp, Generators.*):
//   FakeSucceeding  returns CpuGeluProvider's settings at once
//   FakeFailing     returns an error
//   FakeThrowing    throws from submit()
//   FakeHanging     never completes (make_plan must time out and go on)
//   FakeIncorrect   returns a provider of this plugin that computes zeros (make_plan must reject it as incorrect)
#include <kforge/generator_sdk.h>

#include <ATen/ATen.h>

#include <stdexcept>

namespace {

using kforge::Function;
using kforge::GenerationResult;

class ZeroGelu final : public kforge::KernelProvider {
public:
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "FakeZeroGeluProvider"; }

protected:
    kforge::CallResult run(const c10::OperatorHandle&, torch::jit::Stack& stack) override
    {
        const auto args = kforge::parseGelu(stack);
        if (!args)
            return kforge::CallResult::decline("not gelu's normal form");
        torch::jit::drop(stack, kforge::GeluArgs::kArguments);
        stack.emplace_back(at::zeros_like(args->self));
        return kforge::CallResult::served();
    }
};

enum class Ending { Succeed, Fail, Throw, Hang, Incorrect };

class FakeGenerator final : public kforge::KernelGenerator {
public:
    FakeGenerator(std::string name, Ending ending) : m_name(std::move(name)), m_ending(ending) {}
    std::string name() const override { return m_name; }
    std::vector<Function> functions() const override { return {Function::Gelu}; }
    bool prepare(Function, const std::vector<torch::jit::Stack>& samples) override { return !samples.empty(); }
    std::future<GenerationResult> submit(Function, std::vector<torch::jit::Stack>) override
    {
        std::promise<GenerationResult> promise;
        switch (m_ending) {
        case Ending::Succeed:
            promise.set_value({{{"type", "CpuGeluProvider"}, {"approximate", "none"}}, "", "the exact GELU kernel"});
            break;
        case Ending::Fail:
            promise.set_value({{}, "no kernel for these shapes", ""});
            break;
        case Ending::Throw:
            throw std::runtime_error("planted submit failure");
        case Ending::Hang: {
            static std::vector<std::promise<GenerationResult>> forever; // never set, never destroyed mid-wait
            forever.emplace_back();
            return forever.back().get_future();
        }
        case Ending::Incorrect:
            promise.set_value({{{"type", "FakeZeroGeluProvider"}}, "", "zeros"});
            break;
        }
        return promise.get_future();
    }

private:
    std::string m_name;
    Ending m_ending;
};

void registerProviders(kforge::ProviderRegistry& registry)
{
    registry.add({"FakeZeroGeluProvider", Function::Gelu, {"cpu"}, "test plugin: gelu that returns zeros", [] {
                      return std::make_unique<ZeroGelu>();
                  }});
}

void registerGenerators(kforge::GeneratorRegistry& registry)
{
    for (const auto& [name, ending] : std::vector<std::pair<std::string, Ending>>{{"FakeSucceeding", Ending::Succeed},
                                                                                  {"FakeFailing", Ending::Fail},
                                                                                  {"FakeThrowing", Ending::Throw},
                                                                                  {"FakeHanging", Ending::Hang},
                                                                                  {"FakeIncorrect", Ending::Incorrect}})
        registry.add({name, "test plugin generator",
                      [name = name, ending = ending] { return std::make_unique<FakeGenerator>(name, ending); }});
}

} // namespace

KFORGE_PROVIDER_PLUGIN(registerProviders)
KFORGE_GENERATOR_PLUGIN(registerGenerators)
