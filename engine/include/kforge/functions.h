#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kforge {

// A replaceable torch.nn.functional function, named as in Python, and the ATen overloads TorchScript
// emits for it (runtime-semantics.md, "Words").
enum class Function : std::uint8_t {
    Gelu,
    Silu,
    Relu,
    LayerNorm,
    RmsNorm,
    GroupNorm,
    Softmax,
    Linear,
    Conv2d,
    ScaledDotProductAttention,
};
inline constexpr int kFunctionCount = 10;

struct OpOverload {
    std::string_view name;     // "aten::softmax"
    std::string_view overload; // "int", "" for the default overload
};

std::string_view functionName(Function function);
std::optional<Function> functionFromName(std::string_view name);
std::span<const OpOverload> functionOverloads(Function function);
// "aten::softmax.int" -> Softmax; nullopt for ops that are not a replaceable function.
std::optional<Function> functionOfOp(std::string_view qualifiedOpName, std::string_view overload);
std::array<Function, kFunctionCount> allFunctions();

} // namespace kforge
