// SPDX-License-Identifier: Apache-2.0
#pragma once
// Seeded faults for kforge verify's tests: providers that compute the original and then spoil it in a known way, so
// that the verdict and the first diverging module are known by construction. One type per fault and function,
// named "Seeded<Fault>_<function>" (a plan names a provider type, and a type serves one function):
//   SeededNoise_F       the original times (1 + 0.01 N(0, 1)): 1 % relative noise, the same draws on every call
//   SeededZeroHead_scaled_dot_product_attention
//                       the original with one head's output zeroed ({"head": 0}: of [batch, heads, tokens, dim])
//   SeededNanOnShape_F  the original, or all NaN when the first tensor argument has the shape {"shape": [...]}
//   SeededExact_F       the original, unchanged
#include <kforge/error.h>
#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <limits>
#include <string>
#include <vector>

namespace kforge::test {

// Noise: times (1 + 0.01 N(0, 1)); ZeroHead: one attention head zeroed; NanOnShape: all NaN for one input shape;
// Exact: the original; Zero: all zeros; Bias: plus a constant (setting "bias", 0.05 by default); WrongOnNegative:
// where the first input is negative, minus it (right on every other element).
enum class SeededFault { Noise, ZeroHead, NanOnShape, Exact, Zero, Bias, WrongOnNegative };

inline const char* seededFaultName(SeededFault fault)
{
    switch (fault) {
    case SeededFault::Noise:
        return "SeededNoise";
    case SeededFault::ZeroHead:
        return "SeededZeroHead";
    case SeededFault::NanOnShape:
        return "SeededNanOnShape";
    case SeededFault::Exact:
        return "SeededExact";
    case SeededFault::Zero:
        return "SeededZero";
    case SeededFault::Bias:
        return "SeededBias";
    case SeededFault::WrongOnNegative:
        return "SeededWrongOnNegative";
    }
    return "";
}

inline std::string seededTypeName(SeededFault fault, Function function)
{
    return std::string(seededFaultName(fault)) + "_" + std::string(functionName(function));
}

class SeededFaultProvider final : public KernelProvider {
public:
    SeededFaultProvider(SeededFault fault, Function function) : m_fault(fault), m_function(function) {}
    Function function() const override { return m_function; }
    std::string typeName() const override { return seededTypeName(m_fault, m_function); }
    nlohmann::json settings() const override
    {
        nlohmann::json out{{"type", typeName()}};
        if (m_fault == SeededFault::ZeroHead)
            out["head"] = m_head;
        if (m_fault == SeededFault::NanOnShape)
            out["shape"] = m_shape;
        if (m_fault == SeededFault::Bias)
            out["bias"] = m_bias;
        return out;
    }

protected:
    void loadSettings(const nlohmann::json& settings) override
    {
        for (const auto& [key, value] : settings.items()) {
            if (key == "type")
                continue;
            if (key == "head" && m_fault == SeededFault::ZeroHead && value.is_number_integer())
                m_head = value.get<std::int64_t>();
            else if (key == "shape" && m_fault == SeededFault::NanOnShape && value.is_array())
                m_shape = value.get<std::vector<std::int64_t>>();
            else if (key == "bias" && m_fault == SeededFault::Bias && value.is_number())
                m_bias = value.get<double>();
            else
                throw Error(typeName(), "unknown or bad setting '" + key + "'");
        }
    }

    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const size_t n = op.schema().arguments().size();
        std::vector<std::int64_t> firstShape;
        at::Tensor firstInput;
        for (size_t i = stack.size() - n; i < stack.size() && firstShape.empty(); ++i)
            if (stack[i].isTensor()) {
                firstInput = stack[i].toTensor();
                firstShape = firstInput.sizes().vec();
            }
        op.callBoxed(stack); // the original: the interposer is excluded here
        if (stack.empty() || !stack.back().isTensor())
            return CallResult::served();
        at::Tensor out = stack.back().toTensor();
        switch (m_fault) {
        case SeededFault::Noise: {
            auto generator = at::make_generator<at::CPUGeneratorImpl>(20261204);
            const at::Tensor draws = at::randn(out.sizes(), generator, out.options().device(at::kCPU));
            stack.back() = out * (1.0 + 0.01 * draws.to(out.device()));
            break;
        }
        case SeededFault::ZeroHead:
            if (out.dim() == 4 && m_head < out.size(1)) {
                out = out.clone();
                out.select(1, m_head).zero_();
                stack.back() = out;
            }
            break;
        case SeededFault::NanOnShape:
            if (firstShape == m_shape)
                stack.back() = at::full_like(out, std::numeric_limits<double>::quiet_NaN());
            break;
        case SeededFault::Exact:
            break;
        case SeededFault::Zero:
            stack.back() = at::zeros_like(out);
            break;
        case SeededFault::Bias:
            stack.back() = out + m_bias;
            break;
        case SeededFault::WrongOnNegative:
            if (firstInput.defined() && firstInput.sizes().equals(out.sizes()))
                stack.back() = at::where(firstInput.lt(0), firstInput.neg(), out);
            break;
        }
        return CallResult::served();
    }

private:
    const SeededFault m_fault;
    const Function m_function;
    std::int64_t m_head = 0;
    std::vector<std::int64_t> m_shape;
    double m_bias = 0.05;
};

// Every seeded fault for the functions the tests spoil.
inline std::vector<ProviderTypeInfo> seededFaultTypes()
{
    std::vector<ProviderTypeInfo> out;
    const Function spoilt[] = {Function::Gelu,      Function::Relu,    Function::Linear,
                               Function::LayerNorm, Function::Conv2d,  Function::Hardswish,
                               Function::Silu,      Function::Softmax, Function::ScaledDotProductAttention};
    for (const Function function : spoilt)
        for (const SeededFault fault :
             {SeededFault::Noise, SeededFault::ZeroHead, SeededFault::NanOnShape, SeededFault::Exact, SeededFault::Zero,
              SeededFault::Bias, SeededFault::WrongOnNegative}) {
            if (fault == SeededFault::ZeroHead && function != Function::ScaledDotProductAttention)
                continue;
            out.push_back(
                {seededTypeName(fault, function), function, {"cpu", "cuda"}, "test: a seeded fault", [fault, function] {
                     return std::make_unique<SeededFaultProvider>(fault, function);
                 }});
            if (fault == SeededFault::ZeroHead)
                out.back().settingsSchema = {{"head", {{"type", "integer"}, {"default", 0}}}};
            if (fault == SeededFault::NanOnShape)
                out.back().settingsSchema = {{"shape", {{"type", "array"}}}};
            if (fault == SeededFault::Bias)
                out.back().settingsSchema = {{"bias", {{"type", "number"}, {"default", 0.05}}}};
        }
    return out;
}

// Registers every seeded fault once per process, for tests that use them without loading the plugin.
inline void registerSeededFaults()
{
    static const bool done = [] {
        for (auto& info : seededFaultTypes())
            ProviderRegistry::instance().add(std::move(info));
        return true;
    }();
    (void)done;
}

} // namespace kforge::test
