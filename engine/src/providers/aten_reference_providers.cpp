// SPDX-License-Identifier: Apache-2.0
// Aten<Function>Provider: a reference provider per catalog function (generated from function_catalog.def) that
// runs the normal form's ATen op itself. It is the control in A/B runs, the overhead benchmarks and the corpus
// tests: same numbers as the original, through the provider path, for every form the function takes.
#include "providers/builtin_providers.h"

#include <kforge/provider_catalog.h>

namespace kforge::providers {
namespace {

class AtenReferenceProvider final : public KernelProvider {
public:
    explicit AtenReferenceProvider(Function f) : m_function(f) {}
    Function function() const override { return m_function; }
    std::string typeName() const override { return typeNameFor(m_function); }
    std::vector<std::string> devices() const override { return {"cpu", "cuda"}; }

    static std::string typeNameFor(Function f) { return referenceProviderType(f); }

protected:
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        // The interposition key is excluded here, so this reaches the op's real kernels.
        op.callBoxed(stack);
        return CallResult::served();
    }

private:
    Function m_function;
};

} // namespace

void registerAtenReferenceProviders(ProviderRegistry& registry)
{
    for (Function f : allFunctions()) {
        registry.add({AtenReferenceProvider::typeNameFor(f),
                      f,
                      {"cpu", "cuda"},
                      "reference: runs " + qualifiedOpName(functionInfo(f).normalForm) + " itself",
                      [f] { return std::make_unique<AtenReferenceProvider>(f); }});
    }
}

} // namespace kforge::providers
