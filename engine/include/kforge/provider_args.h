// SPDX-License-Identifier: Apache-2.0
#pragma once
// The provider SDK's argument layer (included by provider_sdk.h): the boxed stack of a catalog function's normal
// form read into a plain struct, one per function, so that a provider (built in or in a plugin) checks tensors and
// options instead of IValue tags and argument positions. Every built-in provider parses its calls with it.
//
// A parse function reads the last kArguments entries of the stack (in run(): the call's arguments; in supports():
// the whole sample) in the normal form's schema order and returns nullopt when they are not that form (too few
// entries, an argument of another type, a symbolic size). It checks the form only, never what a kernel handles
// (dtype, device, shape): that is each provider's eligibility. The structs hold the stack's tensors (shared, not
// copied) and leave the stack as it was, so a provider can still decline after parsing.
#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

// ---- helpers -------------------------------------------------------------------------------------------------

// True when a kernel that records no autograd graph must not serve the call: grad mode is on and one of the
// tensors (nullptr and undefined ones are skipped) requires grad.
bool needsAutograd(std::initializer_list<const at::Tensor*> tensors);
// For needsAutograd: the tensor of an optional argument, or nullptr when it is absent.
inline const at::Tensor* tensorOrNull(const std::optional<at::Tensor>& t) { return t ? &*t : nullptr; }

// An int[] or SymInt[] argument as concrete integers; nullopt when it is not a list of them (a symbolic size).
std::optional<std::vector<std::int64_t>> intList(const c10::IValue& value);

// The product of normalized_shape when it is the input's trailing dimensions (layer_norm, rms_norm: the row length),
// else nullopt (ATen raises for such a call; a provider declines it and lets ATen say so).
std::optional<std::int64_t> normalizedCols(const at::Tensor& input, const std::vector<std::int64_t>& normalizedShape);

// A dim argument wrapped into [0, rank) as ATen does (a 0-d tensor counts as rank 1); nullopt when out of range.
std::optional<std::int64_t> wrapDim(std::int64_t dim, std::int64_t rank);

// Reads one call's arguments in schema order. The first value that is not of the type asked for makes ok() false
// (later reads then return empty values), so a parse function reads like the schema and checks once at the end.
class ArgReader {
public:
    // The last `count` entries of `stack`; not ok() at once when it holds fewer.
    ArgReader(const torch::jit::Stack& stack, std::size_t count);

    at::Tensor tensor();                                // Tensor (defined)
    std::optional<at::Tensor> optionalTensor();         // Tensor?: nullopt for None or an undefined tensor
    std::vector<std::int64_t> intList();                // int[], SymInt[] (concrete)
    std::int64_t integer();                             // int, SymInt (concrete)
    double floating();                                  // float
    std::optional<double> optionalFloating();           // float?
    bool boolean();                                     // bool
    std::string string();                               // str
    std::optional<at::ScalarType> optionalScalarType(); // ScalarType?

    // Every read so far matched its type, and every argument was read (a count that is not the schema's fails).
    bool ok() const { return m_ok && m_next == m_end; }

private:
    const c10::IValue* next();
    bool fail();

    const torch::jit::Stack& m_stack;
    std::size_t m_next = 0, m_end = 0;
    bool m_ok = true;
};

// ---- one struct per normal form ------------------------------------------------------------------------------

// Functions whose normal form is one tensor: relu(Tensor self), silu, sigmoid, tanh, hardswish, mish, ...
struct UnaryArgs {
    static constexpr std::size_t kArguments = 1;
    at::Tensor self;
};
std::optional<UnaryArgs> parseUnary(const torch::jit::Stack& stack);
inline std::optional<UnaryArgs> parseRelu(const torch::jit::Stack& stack) { return parseUnary(stack); }
inline std::optional<UnaryArgs> parseSilu(const torch::jit::Stack& stack) { return parseUnary(stack); }

// gelu(Tensor self, *, str approximate='none'). `approximate` as the call gives it ("none", "tanh", or a value
// ATen rejects: a provider that handles only those two declines the others).
struct GeluArgs {
    static constexpr std::size_t kArguments = 2;
    at::Tensor self;
    std::string approximate;
    bool tanh() const { return approximate == "tanh"; }
};
std::optional<GeluArgs> parseGelu(const torch::jit::Stack& stack);

// layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05,
//            bool cudnn_enable=True)
struct LayerNormArgs {
    static constexpr std::size_t kArguments = 6;
    at::Tensor input;
    std::vector<std::int64_t> normalizedShape;
    std::optional<at::Tensor> weight, bias;
    double eps = 1e-5;
    bool cudnnEnable = true;
};
std::optional<LayerNormArgs> parseLayerNorm(const torch::jit::Stack& stack);

// rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None). eps None is ATen's
// default, the epsilon of the op-math type: float32's for float32, bfloat16 and float16 (defaultEps()).
struct RmsNormArgs {
    static constexpr std::size_t kArguments = 4;
    at::Tensor input;
    std::vector<std::int64_t> normalizedShape;
    std::optional<at::Tensor> weight;
    std::optional<double> eps;
    double epsOrDefault() const;
};
std::optional<RmsNormArgs> parseRmsNorm(const torch::jit::Stack& stack);

// softmax.int(Tensor self, int dim, ScalarType? dtype=None); log_softmax.int has the same schema.
struct SoftmaxArgs {
    static constexpr std::size_t kArguments = 3;
    at::Tensor self;
    std::int64_t dim = -1;
    std::optional<at::ScalarType> dtype;
};
std::optional<SoftmaxArgs> parseSoftmax(const torch::jit::Stack& stack);
inline std::optional<SoftmaxArgs> parseLogSoftmax(const torch::jit::Stack& stack) { return parseSoftmax(stack); }

// scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0,
//                              bool is_causal=False, *, float? scale=None, bool enable_gqa=False)
struct ScaledDotProductAttentionArgs {
    static constexpr std::size_t kArguments = 8;
    at::Tensor query, key, value;
    std::optional<at::Tensor> attnMask;
    double dropoutP = 0.0;
    bool isCausal = false;
    std::optional<double> scale;
    bool enableGqa = false;
};
std::optional<ScaledDotProductAttentionArgs> parseScaledDotProductAttention(const torch::jit::Stack& stack);

// conv1d/conv2d/conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[n] stride=1, SymInt[n] padding=0,
//                      SymInt[n] dilation=1, SymInt groups=1): every traced or padding="same"/"valid" convolution
// arrives in this form (provider-plugins.md, "Normal form").
struct ConvolutionArgs {
    static constexpr std::size_t kArguments = 7;
    at::Tensor input, weight;
    std::optional<at::Tensor> bias;
    std::vector<std::int64_t> stride, padding, dilation;
    std::int64_t groups = 1;
};
std::optional<ConvolutionArgs> parseConvolution(const torch::jit::Stack& stack);
inline std::optional<ConvolutionArgs> parseConv2d(const torch::jit::Stack& stack) { return parseConvolution(stack); }

// linear(Tensor input, Tensor weight, Tensor? bias=None)
struct LinearArgs {
    static constexpr std::size_t kArguments = 3;
    at::Tensor input, weight;
    std::optional<at::Tensor> bias;
};
std::optional<LinearArgs> parseLinear(const torch::jit::Stack& stack);

} // namespace kforge
