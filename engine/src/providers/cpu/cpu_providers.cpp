// SPDX-License-Identifier: Apache-2.0
// Cpu*Provider: KernelForge's own CPU kernels as kernel providers (see cpu_providers.h for the list and the
// rules, cpu_kernels.h for the kernels). Each provider parses the op's boxed arguments with the SDK's argument
// layer (kforge/provider_args.h), checks what its kernel handles, and runs the kernel (tuned_provider.h pushes the
// output or declines the call).
#include "providers/cpu/cpu_providers.h"

#include "providers/builtin_providers.h"
#include "providers/cpu/cpu_kernels.h"
#include "providers/tuned_provider.h"

#include <kforge/error.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge::providers {
namespace {

// A float32 or bfloat16 strided tensor on the CPU.
bool cpuFloatOrBf16(const at::Tensor& t)
{
    return t.defined() && t.device().is_cpu() && t.layout() == at::kStrided &&
           (t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16);
}

// A norm's weight or bias: absent, or [normalized_shape] on the CPU in the input's dtype or float32.
bool parameterOk(const std::optional<at::Tensor>& p, const at::Tensor& input, at::IntArrayRef normalizedShape)
{
    if (!p || !p->defined())
        return true;
    return cpuFloatOrBf16(*p) && (p->scalar_type() == input.scalar_type() || p->scalar_type() == at::kFloat) &&
           p->sizes().equals(normalizedShape);
}

// The parameter as contiguous float32 values (nullptr when absent); `hold` keeps them alive.
const float* floatParameter(const std::optional<at::Tensor>& p, at::Tensor& hold)
{
    if (!p || !p->defined() || p->numel() == 0)
        return nullptr;
    if (p->scalar_type() == at::kFloat) {
        hold = p->contiguous();
        return hold.const_data_ptr<float>();
    }
    // bfloat16 weights widened here, once per call, rather than in every row.
    const at::Tensor src = p->contiguous();
    hold = at::empty(src.sizes(), src.options().dtype(at::kFloat));
    const auto* in = src.const_data_ptr<at::BFloat16>();
    float* out = hold.mutable_data_ptr<float>();
    for (std::int64_t i = 0, n = src.numel(); i < n; ++i)
        out[i] = static_cast<float>(in[i]);
    return out;
}

// Tuning settings every Cpu*Provider takes (the autotuning generator chooses them; a plan replays them):
//   isa             "default" | "avx2" | "avx512": the kernel set (one this CPU cannot run falls back to the usual
//                   choice, so a plan tuned on another machine still runs)
//   grain_elements  work per parallel chunk, in elements (ATen's 32768 by default)
//   max_threads     a cap on the intra-op threads (0: ATen's count)
// The settings loop, settings() and the display name are TunedProviderBase's; the call plumbing TunedProvider's.
template <typename Args> class CpuProvider : public TunedProvider<Args> {
public:
    CpuProvider()
    {
        this->declareSetting(
            {"isa",
             [this](const std::string& where, const nlohmann::json& value) {
                 const auto parsed = value.is_string() ? cpu::isaFromName(value.get<std::string>()) : std::nullopt;
                 if (!parsed)
                     throw Error(where,
                                 "setting 'isa' must be \"default\", \"avx2\" or \"avx512\", got " + value.dump());
                 m_isa = parsed;
                 const auto available = cpu::availableIsas();
                 m_table = std::find(available.begin(), available.end(), *m_isa) != available.end()
                               ? &cpu::kernelsFor(*m_isa)
                               : nullptr;
             },
             [this](nlohmann::json& s) {
                 if (m_isa)
                     s["isa"] = std::string(cpu::isaName(*m_isa));
             }});
        declareCount(
            "grain_elements", 1, [this](std::int64_t v) { m_tuning.grainElements = v; },
            [this](nlohmann::json& s) {
                if (m_tuning.grainElements != cpu::Tuning{}.grainElements)
                    s["grain_elements"] = m_tuning.grainElements;
            });
        declareCount(
            "max_threads", 0, [this](std::int64_t v) { m_tuning.maxThreads = static_cast<int>(v); },
            [this](nlohmann::json& s) {
                if (m_tuning.maxThreads)
                    s["max_threads"] = m_tuning.maxThreads;
            });
    }
    std::vector<std::string> devices() const override { return {"cpu"}; }

protected:
    // The kernel set this provider's settings choose (resolved when they load).
    const cpu::KernelTable& kernelTable() const { return m_table ? *m_table : cpu::kernels(); }

    // The kernel, with the tuning in effect.
    virtual at::Tensor computeOnCpu(const Args& args) const = 0;
    at::Tensor compute(const Args& args) const final
    {
        cpu::TuningScope tuning(m_tuning);
        return computeOnCpu(args);
    }

    const char* declineReason(const torch::jit::Stack& stack) const override
    {
        const c10::IValue& input = stack[stack.size() - Args::kArguments];
        if (!input.isTensor())
            return "arguments the kernel does not handle";
        const at::Tensor& t = input.toTensor();
        if (!t.device().is_cpu())
            return "a tensor that is not on the CPU";
        if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kBFloat16)
            return "a dtype other than float32 and bfloat16";
        if (t.layout() != at::kStrided)
            return "a tensor layout other than strided";
        return "arguments the kernel does not handle (shape, parameters or options)";
    }
    static const char* graphReason(bool needed)
    {
        return needed ? "inputs that need autograd (the kernel records no graph)" : nullptr;
    }

private:
    // An integer setting of at least `low`.
    void declareCount(const char* key, std::int64_t low, std::function<void(std::int64_t)> set,
                      std::function<void(nlohmann::json&)> save)
    {
        this->declareSetting({key,
                              [key, low, set](const std::string& where, const nlohmann::json& value) {
                                  if (!value.is_number_integer() || value.get<std::int64_t>() < low)
                                      throw Error(where, "setting '" + std::string(key) +
                                                             "' must be an integer of at least " + std::to_string(low) +
                                                             ", got " + value.dump());
                                  set(value.get<std::int64_t>());
                              },
                              std::move(save)});
    }

    std::optional<cpu::Isa> m_isa;
    cpu::Tuning m_tuning;
    const cpu::KernelTable* m_table = nullptr; // m_isa's kernels where this CPU runs them; null: the usual choice
};

// ---------------------------------------------------------------------------------------------------------
// aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None,
//                  float eps=1e-05, bool cudnn_enable=True) -> Tensor

// Shared by layer_norm and rms_norm: a CPU float input whose trailing dims are normalized_shape (ATen raises
// otherwise; the fallback lets it), parameters of that shape. The row length, or nullopt.
std::optional<std::int64_t> normCols(const at::Tensor& input, const std::vector<std::int64_t>& shape,
                                     const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias)
{
    if (!cpuFloatOrBf16(input) || !parameterOk(weight, input, shape) || !parameterOk(bias, input, shape))
        return std::nullopt;
    return normalizedCols(input, shape);
}

// Rows of `cols` elements in the input (none when a normalized dim is 0).
std::int64_t normRows(const at::Tensor& input, std::int64_t cols) { return cols == 0 ? 0 : input.numel() / cols; }

class CpuFusedLayerNormProvider final : public CpuProvider<LayerNormArgs> {
public:
    Function function() const override { return Function::LayerNorm; }
    std::string typeName() const override { return "CpuFusedLayerNormProvider"; }

protected:
    std::optional<LayerNormArgs> accept(const torch::jit::Stack& stack) const override
    {
        auto a = parseLayerNorm(stack);
        if (!a || !normCols(a->input, a->normalizedShape, a->weight, a->bias))
            return std::nullopt;
        return a;
    }
    const char* needsGraph(const LayerNormArgs& a) const override
    {
        return graphReason(needsAutograd({&a.input, tensorOrNull(a.weight), tensorOrNull(a.bias)}));
    }
    at::Tensor computeOnCpu(const LayerNormArgs& a) const override
    {
        const at::Tensor x = a.input.contiguous();
        at::Tensor y = at::empty(x.sizes(), x.options());
        if (x.numel() == 0)
            return y;
        const std::int64_t cols = *normalizedCols(x, a.normalizedShape);
        at::Tensor holdW, holdB;
        const float* w = floatParameter(a.weight, holdW);
        const float* b = floatParameter(a.bias, holdB);
        kernelTable().layerNorm(x.scalar_type(), x.const_data_ptr(), w, b, y.mutable_data_ptr(), normRows(x, cols),
                                cols, static_cast<float>(a.eps));
        return y;
    }
};

// ---------------------------------------------------------------------------------------------------------
// aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor
// ATen's composite: in float32, x * rsqrt(mean(x^2) + eps) * weight, cast back to the input's dtype; eps None
// is numeric_limits<float>::epsilon() (float32 is the op-math type of both float32 and bfloat16).

class CpuRmsNormProvider final : public CpuProvider<RmsNormArgs> {
public:
    Function function() const override { return Function::RmsNorm; }
    std::string typeName() const override { return "CpuRmsNormProvider"; }

protected:
    std::optional<RmsNormArgs> accept(const torch::jit::Stack& stack) const override
    {
        auto a = parseRmsNorm(stack);
        if (!a || !normCols(a->input, a->normalizedShape, a->weight, std::nullopt))
            return std::nullopt;
        return a;
    }
    const char* needsGraph(const RmsNormArgs& a) const override
    {
        return graphReason(needsAutograd({&a.input, tensorOrNull(a.weight)}));
    }
    at::Tensor computeOnCpu(const RmsNormArgs& a) const override
    {
        const at::Tensor x = a.input.contiguous();
        at::Tensor y = at::empty(x.sizes(), x.options());
        if (x.numel() == 0)
            return y;
        const std::int64_t cols = *normalizedCols(x, a.normalizedShape);
        at::Tensor holdW;
        const float* w = floatParameter(a.weight, holdW);
        kernelTable().rmsNorm(x.scalar_type(), x.const_data_ptr(), w, y.mutable_data_ptr(), normRows(x, cols), cols,
                              static_cast<float>(a.epsOrDefault()));
        return y;
    }
};

// ---------------------------------------------------------------------------------------------------------
// aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
// dtype: None or the input's dtype, or float32 for a bfloat16 input (softmax computed from the widened values,
// as ATen's conversion then softmax gives). Any dim: the input is viewed as [outer, dim, inner].

class CpuOnlineSoftmaxProvider final : public CpuProvider<SoftmaxArgs> {
public:
    Function function() const override { return Function::Softmax; }
    std::string typeName() const override { return "CpuOnlineSoftmaxProvider"; }

protected:
    // The parsed call with dim wrapped into [0, rank) and dtype resolved (None: the input's).
    std::optional<SoftmaxArgs> accept(const torch::jit::Stack& stack) const override
    {
        auto a = parseSoftmax(stack);
        if (!a || !cpuFloatOrBf16(a->self))
            return std::nullopt;
        const auto dim = wrapDim(a->dim, a->self.dim());
        if (!dim)
            return std::nullopt;
        a->dim = *dim;
        a->dtype = a->dtype.value_or(a->self.scalar_type());
        const bool sameType = *a->dtype == a->self.scalar_type();
        const bool widen = a->self.scalar_type() == at::kBFloat16 && *a->dtype == at::kFloat;
        if (!sameType && !widen)
            return std::nullopt;
        return a;
    }
    const char* needsGraph(const SoftmaxArgs& a) const override { return graphReason(needsAutograd({&a.self})); }
    at::Tensor computeOnCpu(const SoftmaxArgs& a) const override
    {
        const at::Tensor x = a.self.contiguous();
        at::Tensor y = at::empty(x.sizes(), x.options().dtype(*a.dtype));
        if (x.numel() == 0)
            return y;
        std::int64_t outer = 1, inner = 1, size = 1;
        if (x.dim() > 0) {
            for (std::int64_t d = 0; d < a.dim; ++d)
                outer *= x.size(d);
            size = x.size(a.dim);
            for (std::int64_t d = a.dim + 1; d < x.dim(); ++d)
                inner *= x.size(d);
        }
        kernelTable().softmax(x.scalar_type(), *a.dtype, x.const_data_ptr(), y.mutable_data_ptr(), outer, size, inner);
        return y;
    }
};

// ---------------------------------------------------------------------------------------------------------
// Element-wise: aten::gelu(Tensor self, *, str approximate='none') -> Tensor, aten::silu(Tensor self) -> Tensor

// The input as memory the kernel can walk linearly, and an output with the same layout: dense tensors as they
// are (any stride order; empty_like keeps it), others through a contiguous copy.
std::pair<at::Tensor, at::Tensor> denseInOut(const at::Tensor& input)
{
    const at::Tensor x = input.is_non_overlapping_and_dense() ? input : input.contiguous();
    return {x, at::empty_like(x)};
}

class CpuGeluProvider final : public CpuProvider<GeluArgs> {
public:
    CpuGeluProvider()
    {
        declareSetting({"approximate",
                        [this](const std::string& where, const nlohmann::json& value) {
                            if (!value.is_string() || (value != "none" && value != "tanh"))
                                throw Error(where,
                                            "setting 'approximate' must be \"none\" or \"tanh\", got " + value.dump());
                            m_tanh = value == "tanh";
                        },
                        [this](nlohmann::json& s) { s["approximate"] = m_tanh ? "tanh" : "none"; }});
    }
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "CpuGeluProvider"; }

protected:
    // Eligible only for calls that ask for this provider's form: a plan entry "gelu -> tanh GELU" must not
    // serve exact-GELU call sites (the optimizer compares providers against the original per call).
    bool supports(const torch::jit::Stack& sample) const override
    {
        const auto a = accept(sample);
        return a && a->tanh() == m_tanh;
    }

    // At run time the call's own `approximate` decides the formula, whatever the setting: never the other
    // GELU silently.
    std::optional<GeluArgs> accept(const torch::jit::Stack& stack) const override
    {
        auto a = parseGelu(stack);
        if (!a || !cpuFloatOrBf16(a->self) || (a->approximate != "none" && a->approximate != "tanh"))
            return std::nullopt; // an unknown approximate: ATen raises; the fallback lets it
        return a;
    }
    const char* needsGraph(const GeluArgs& a) const override { return graphReason(needsAutograd({&a.self})); }
    at::Tensor computeOnCpu(const GeluArgs& a) const override
    {
        auto [x, y] = denseInOut(a.self);
        if (x.numel() > 0)
            kernelTable().gelu(x.scalar_type(), x.const_data_ptr(), y.mutable_data_ptr(), x.numel(), a.tanh());
        return y;
    }

private:
    bool m_tanh = false;
};

class CpuSiluProvider final : public CpuProvider<UnaryArgs> {
public:
    Function function() const override { return Function::Silu; }
    std::string typeName() const override { return "CpuSiluProvider"; }

protected:
    std::optional<UnaryArgs> accept(const torch::jit::Stack& stack) const override
    {
        auto a = parseSilu(stack);
        if (!a || !cpuFloatOrBf16(a->self))
            return std::nullopt;
        return a;
    }
    const char* needsGraph(const UnaryArgs& a) const override { return graphReason(needsAutograd({&a.self})); }
    at::Tensor computeOnCpu(const UnaryArgs& a) const override
    {
        auto [x, y] = denseInOut(a.self);
        if (x.numel() > 0)
            kernelTable().silu(x.scalar_type(), x.const_data_ptr(), y.mutable_data_ptr(), x.numel());
        return y;
    }
};

const std::string kCommon =
    " float32 and bfloat16 (computed in float32, rounded once) on CPU; at::vec::Vectorized<float> "
    "for the widest ISA both the CPU and ATen use, rows split over ATen's intra-op threads. "
    "Other dtypes and devices are not eligible.";
// Where a provider loses to ATen, make_plan does not keep it: it keeps a candidate only when it is faster than the
// original on the samples the model itself produced.
const std::string kWhere = " `kforge optimize` keeps it only where it measures faster than ATen on the model's own "
                           "samples; CpuAutotuner may find settings that win where the defaults lose.";

// The tuning settings every Cpu*Provider takes, in its settings schema (no "enum": make_plan tries them through the
// autotuning generator, not as plain variants).
ProviderTypeInfo withTuning(ProviderTypeInfo info)
{
    info.settingsSchema["isa"] = {{"type", "string"},
                                  {"default", "auto"},
                                  {"description", "kernel set: default, avx2 or avx512 (unset: the widest this CPU "
                                                  "and ATen both use)"}};
    info.settingsSchema["grain_elements"] = {
        {"type", "integer"}, {"default", 32768}, {"description", "work per parallel chunk, in elements"}};
    info.settingsSchema["max_threads"] = {
        {"type", "integer"}, {"default", 0}, {"description", "cap on the intra-op threads (0: ATen's count)"}};
    return info;
}

} // namespace

void registerCpuProviders(ProviderRegistry& registry)
{
    registry.add(
        withTuning({"CpuFusedLayerNormProvider",
                    Function::LayerNorm,
                    {"cpu"},
                    "layer_norm, KernelForge CPU kernel: per row the mean, then the squared deviations from it "
                    "(two passes over a row kept in L1), then normalize with weight/bias. Measured against ATen "
                    "(bench_providers, [8,512,768], AVX-512, runs on a noisy 2-core VM): float32 0.72-0.96x ATen's "
                    "time, bfloat16 0.58-0.64x, 1 and 2 threads; kept by optimize on vit, swin_t and convnext_tiny "
                    "(1.1-1.6x faster than ATen on their own samples)." +
                        kCommon + kWhere,
                    [] { return std::make_unique<CpuFusedLayerNormProvider>(); }}));
    registry.add(
        withTuning({"CpuRmsNormProvider",
                    Function::RmsNorm,
                    {"cpu"},
                    "rms_norm, KernelForge CPU kernel: sum of squares per row, then x * rsqrt(mean + eps) * weight "
                    "(ATen composite semantics; eps None = float32 epsilon). Measured against ATen (bench_providers, "
                    "[8,512,768]): 0.06-0.3x ATen's time, float32 and bfloat16." +
                        kCommon + kWhere,
                    [] { return std::make_unique<CpuRmsNormProvider>(); }}));
    registry.add(withTuning(
        {"CpuOnlineSoftmaxProvider",
         Function::Softmax,
         {"cpu"},
         "softmax, KernelForge CPU kernel: online softmax (running max and sum in one pass, then a "
         "normalize pass) over any dim; dtype None, the input's, or float32 from bfloat16. Measured against "
         "ATen (bench_providers, [8,12,512,512], memory-bound there): 0.8-1.0x ATen's time over runs, float32 and "
         "bfloat16, 1 and 2 threads (the median of one run of five reached 1.07-1.15x: noise). Rows up to "
         "1024 take three passes in L1; swin_t's 49-key windows 1.03x faster than ATen." +
             kCommon + kWhere,
         [] { return std::make_unique<CpuOnlineSoftmaxProvider>(); }}));
    registry.add(withTuning(
        {"CpuGeluProvider",
         Function::Gelu,
         {"cpu"},
         "gelu, KernelForge CPU kernel. approximate=\"none\": exact GELU, x/2 (1 + erf(x/sqrt 2)); "
         "approximate=\"tanh\": the tanh APPROXIMATION of GELU (differs from exact GELU by up to 4.7e-4, near "
         "x = 2.7), "
         "eligible only where the call itself asks for approximate='tanh'. A call whose approximate "
         "differs from the setting is computed as the call asks. Measured against ATen (bench_providers, [8,512,768] "
         "and [32,128,4096]): tanh 0.2-0.26x ATen's time; exact GELU (erf as 16 polynomial pieces, |error| <= 6e-8) "
         "1.02-1.15x float32 and 1.0-1.4x bfloat16 on these large tensors, where ATen runs oneDNN's gelu_erf "
         "(optimize keeps it only where it measures faster); faster on the corpus's transformers (swin_t 1.5x, "
         "convnext_tiny 1.4x, vit 1.02-1.14x) and on small tensors such as tiny-gpt's [1,16,256]." +
             kCommon + kWhere,
         [] { return std::make_unique<CpuGeluProvider>(); },
         {{"approximate",
           {{"type", "string"},
            {"enum", {"none", "tanh"}},
            {"default", "none"},
            {"description", "which GELU the call sites it serves use: none = exact (erf), "
                            "tanh = tanh approximation"}}}}}));
    registry.add(withTuning({"CpuSiluProvider",
                             Function::Silu,
                             {"cpu"},
                             "silu, KernelForge CPU kernel: x / (1 + exp(-x)). Measured against ATen (bench_providers, "
                             "[8,512,768] and [32,128,4096]): 0.74-1.03x ATen's time." +
                                 kCommon + kWhere,
                             [] { return std::make_unique<CpuSiluProvider>(); }}));
}

} // namespace kforge::providers
