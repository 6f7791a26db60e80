// SPDX-License-Identifier: Apache-2.0
// The function catalog's tables, built once from function_catalog.def.
#include <kforge/functions.h>

#include <array>
#include <unordered_map>

namespace kforge {
namespace {

struct Catalog {
    std::vector<FunctionInfo> functions;
    std::vector<Function> all;
    std::vector<OpForm> forms; // every intercepted overload
    std::unordered_map<std::string_view, Function> byName;

    Catalog()
    {
#define KFORGE_FUNCTION(Id, name, category, op, overload)                                                              \
    functions.push_back(                                                                                               \
        {Function::Id, name, category, {op, overload}, {{{op, overload}, FormKind::Normal, Function::Id}}, {}});
#include <kforge/function_catalog.def>
#define KFORGE_FORM(Id, op, overload, kind)                                                                            \
    functions[static_cast<int>(Function::Id)].forms.push_back({{op, overload}, FormKind::kind, Function::Id});
#define KFORGE_ALIAS(Id, name) functions[static_cast<int>(Function::Id)].aliases.push_back(name);
#include <kforge/function_catalog.def>
        for (const FunctionInfo& f : functions) {
            all.push_back(f.function);
            byName.emplace(f.name, f.function);
            for (std::string_view alias : f.aliases)
                byName.emplace(alias, f.function);
            forms.insert(forms.end(), f.forms.begin(), f.forms.end());
        }
#define KFORGE_SHARED_FORM(op, overload, kind) forms.push_back({{op, overload}, FormKind::kind, std::nullopt});
#include <kforge/function_catalog.def>
    }
};

const Catalog& catalog()
{
    static const Catalog c;
    return c;
}

} // namespace

std::string qualifiedOpName(const OpOverload& op)
{
    return std::string(op.name) + (op.overload.empty() ? "" : "." + std::string(op.overload));
}

std::string_view formKindName(FormKind kind)
{
    switch (kind) {
    case FormKind::Normal:
        return "normal";
    case FormKind::InPlace:
        return "in_place";
    case FormKind::PaddingString:
        return "padding_string";
    case FormKind::Variant:
        return "variant";
    case FormKind::Convolution:
        return "convolution";
    case FormKind::ConvolutionMode:
        return "convolution_mode";
    case FormKind::Opaque:
        return "opaque";
    }
    return "?";
}

const FunctionInfo& functionInfo(Function function) { return catalog().functions[static_cast<int>(function)]; }
std::string_view functionName(Function function) { return functionInfo(function).name; }

std::optional<Function> functionFromName(std::string_view name)
{
    const auto& byName = catalog().byName;
    const auto it = byName.find(name);
    return it == byName.end() ? std::nullopt : std::optional(it->second);
}

std::span<const Function> allFunctions() { return catalog().all; }
std::span<const OpForm> allOpForms() { return catalog().forms; }

std::optional<Function> classifyConvolution(int weightRank, bool transposed)
{
    static constexpr std::array<Function, 3> plain{Function::Conv1d, Function::Conv2d, Function::Conv3d};
    static constexpr std::array<Function, 3> transposedOnes{Function::ConvTranspose1d, Function::ConvTranspose2d,
                                                            Function::ConvTranspose3d};
    if (weightRank < 3 || weightRank > 5)
        return std::nullopt;
    return (transposed ? transposedOnes : plain)[weightRank - 3];
}

std::optional<Function> functionOfOp(std::string_view qualifiedOpName, std::string_view overload,
                                     const OpCallFacts& facts)
{
    for (const OpForm& form : catalog().forms) {
        if (form.op.name != qualifiedOpName || form.op.overload != overload)
            continue;
        if (form.function)
            return form.function;
        if (form.kind == FormKind::Convolution && facts.transposed)
            return classifyConvolution(facts.weightRank, *facts.transposed);
        if (form.kind == FormKind::ConvolutionMode)
            return classifyConvolution(facts.weightRank, false);
        return std::nullopt;
    }
    return std::nullopt;
}

} // namespace kforge
