// Aten<Function>Provider: a reference provider per function that runs the ATen op itself. It is the
// control in A/B runs and the overhead benchmarks: same numbers as the original, through the provider path.
#include "providers/builtin_providers.h"

namespace kforge::providers {
namespace {

std::string pascalCase(std::string_view snake)
{
    std::string out;
    bool upper = true;
    for (char c : snake) {
        if (c == '_') {
            upper = true;
            continue;
        }
        out += upper ? char(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return out;
}

class AtenReferenceProvider final : public KernelProvider {
public:
    explicit AtenReferenceProvider(Function f) : m_function(f) {}
    Function function() const override { return m_function; }
    std::string typeName() const override { return typeNameFor(m_function); }
    std::vector<std::string> devices() const override { return {"cpu", "cuda"}; }

    static std::string typeNameFor(Function f) { return "Aten" + pascalCase(functionName(f)) + "Provider"; }

protected:
    void run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        // The interposition key is excluded here, so this reaches the op's real kernels.
        op.callBoxed(stack);
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
                      "reference: runs the ATen op " + std::string(functionName(f)) + " itself",
                      [f] { return std::make_unique<AtenReferenceProvider>(f); }});
    }
}

} // namespace kforge::providers
