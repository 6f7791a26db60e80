// SPDX-License-Identifier: Apache-2.0
// Plugins that must be refused, built one per library by FAULT (tests/engine/CMakeLists.txt):
//   1 duplicate: registers a new type and a type the engine already has (AtenGeluProvider)
//   2 throwing:  its registration throws after registering one type
//   3 bad ABI:   reports an ABI string of another build
#include <kforge/provider_sdk.h>

namespace {

class NoopRelu final : public kforge::KernelProvider {
public:
    explicit NoopRelu(std::string type) : m_type(std::move(type)) {}
    kforge::Function function() const override { return kforge::Function::Relu; }
    std::string typeName() const override { return m_type; }

protected:
    kforge::CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        op.callBoxed(stack);
        return kforge::CallResult::served();
    }

private:
    std::string m_type;
};

kforge::ProviderTypeInfo noop(const std::string& type, kforge::Function f = kforge::Function::Relu)
{
    return {type, f, {"cpu"}, "faulty test plugin", [type] { return std::make_unique<NoopRelu>(type); }};
}

void registerFaulty(kforge::ProviderRegistry& registry)
{
#if FAULT == 1
    registry.add(noop("FaultyNewProvider"));
    registry.add(noop("AtenGeluProvider", kforge::Function::Gelu));
#elif FAULT == 2
    registry.add(noop("FaultyThrowingProvider"));
    throw std::runtime_error("planted registration failure");
#else
    registry.add(noop("FaultyAbiProvider"));
#endif
}

} // namespace

#if FAULT == 3
extern "C" __attribute__((visibility("default"))) const char* kforge_provider_plugin_abi()
{
    return "kforge-provider-abi-0 torch-1.13.1 cxx11-abi-0";
}
extern "C" __attribute__((visibility("default"))) void kforge_register_providers(kforge::ProviderRegistry& r)
{
    registerFaulty(r);
}
#else
KFORGE_PROVIDER_PLUGIN(registerFaulty)
#endif
