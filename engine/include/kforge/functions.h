// SPDX-License-Identifier: Apache-2.0
#pragma once
// The function catalog (function_catalog.def): replaceable torch.nn.functional functions, named as in Python,
// and every ATen overload TorchScript records for them (docs/design/runtime-semantics.md, "Words").
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

enum class Function : std::uint16_t {
#define KFORGE_FUNCTION(Id, name, category, op, overload) Id,
#include <kforge/function_catalog.def>
};
inline constexpr int kFunctionCount = 0
#define KFORGE_FUNCTION(Id, name, category, op, overload) +1
#include <kforge/function_catalog.def>
    ;

struct OpOverload {
    std::string_view name;     // "aten::softmax"
    std::string_view overload; // "int", "" for the default overload
};
std::string qualifiedOpName(const OpOverload& op); // "aten::softmax.int"

// How the runtime turns a form's arguments into the function's normal form (function_catalog.def).
enum class FormKind : std::uint8_t { Normal, InPlace, PaddingString, Variant, Convolution, ConvolutionMode, Opaque };
std::string_view formKindName(FormKind kind); // "normal", "in_place", ...

struct OpForm {
    OpOverload op;
    FormKind kind;
    std::optional<Function> function; // nullopt for shared forms: the call's arguments decide
};

struct FunctionInfo {
    Function function;
    std::string_view name;                 // "relu"
    std::string_view category;             // "activation"
    OpOverload normalForm;                 // the overload providers are called with
    std::vector<OpForm> forms;             // the normal form first, then the others that are always this function
    std::vector<std::string_view> aliases; // other torch.nn.functional names for it
};

const FunctionInfo& functionInfo(Function function);
std::string_view functionName(Function function);
// By name or alias ("dropout2d" -> feature_dropout).
std::optional<Function> functionFromName(std::string_view name);
std::span<const Function> allFunctions();
// Every overload the interposer places a kernel on, shared ones (_convolution, opaque ops) included.
std::span<const OpForm> allOpForms();

// What an op call is. A shared form needs the facts of the call: the weight's rank, the `transposed` flag.
struct OpCallFacts {
    int weightRank = -1;
    std::optional<bool> transposed;
};
std::optional<Function> classifyConvolution(int weightRank, bool transposed);
// "aten::softmax.int" -> Softmax; nullopt for ops outside the catalog, opaque ones, and shared forms whose facts
// are unknown.
std::optional<Function> functionOfOp(std::string_view qualifiedOpName, std::string_view overload,
                                     const OpCallFacts& facts = {});

} // namespace kforge
