#include <kforge/functions.h>

namespace kforge {
namespace {

struct FunctionDef {
    Function function;
    std::string_view name;
    std::array<OpOverload, 2> overloads;
    int overloadCount;
};

// The ATen overloads TorchScript emits for each torch.nn.functional function (runtime-semantics.md).
constexpr std::array<FunctionDef, kFunctionCount> kFunctions{{
    {Function::Gelu, "gelu", {{{"aten::gelu", ""}}}, 1},
    {Function::Silu, "silu", {{{"aten::silu", ""}}}, 1},
    {Function::Relu, "relu", {{{"aten::relu", ""}}}, 1},
    {Function::LayerNorm, "layer_norm", {{{"aten::layer_norm", ""}}}, 1},
    {Function::RmsNorm, "rms_norm", {{{"aten::rms_norm", ""}}}, 1},
    {Function::GroupNorm, "group_norm", {{{"aten::group_norm", ""}}}, 1},
    {Function::Softmax, "softmax", {{{"aten::softmax", "int"}}}, 1},
    {Function::Linear, "linear", {{{"aten::linear", ""}}}, 1},
    {Function::Conv2d, "conv2d", {{{"aten::conv2d", ""}, {"aten::conv2d", "padding"}}}, 2},
    {Function::ScaledDotProductAttention,
     "scaled_dot_product_attention",
     {{{"aten::scaled_dot_product_attention", ""}}},
     1},
}};

const FunctionDef& def(Function function) { return kFunctions[static_cast<int>(function)]; }

} // namespace

std::string_view functionName(Function function) { return def(function).name; }

std::optional<Function> functionFromName(std::string_view name)
{
    for (const auto& f : kFunctions)
        if (f.name == name)
            return f.function;
    return std::nullopt;
}

std::span<const OpOverload> functionOverloads(Function function)
{
    const auto& d = def(function);
    return {d.overloads.data(), static_cast<size_t>(d.overloadCount)};
}

std::optional<Function> functionOfOp(std::string_view qualifiedOpName, std::string_view overload)
{
    for (const auto& f : kFunctions)
        for (int i = 0; i < f.overloadCount; ++i)
            if (f.overloads[i].name == qualifiedOpName && f.overloads[i].overload == overload)
                return f.function;
    return std::nullopt;
}

std::array<Function, kFunctionCount> allFunctions()
{
    std::array<Function, kFunctionCount> all{};
    for (int i = 0; i < kFunctionCount; ++i)
        all[i] = kFunctions[i].function;
    return all;
}

} // namespace kforge
