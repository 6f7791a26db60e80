// SPDX-License-Identifier: Apache-2.0
// Cpu*Provider: KernelForge's own CPU kernels as kernel providers (see cpu_providers.h for the list and the
// rules, cpu_kernels.h for the kernels). Each provider reads the op's boxed arguments (the ATen schema of the
// function it replaces), checks them, runs its kernel and pushes the output.
#include "providers/cpu/cpu_providers.h"

#include "providers/builtin_providers.h"
#include "providers/cpu/cpu_kernels.h"
#include "providers/settings_text.h"

#include <kforge/error.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <limits>
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

// SymInt[] from a boxed stack: concrete ints, or nullopt.
std::optional<std::vector<std::int64_t>> intList(const c10::IValue& v)
{
    if (!v.isList())
        return std::nullopt;
    std::vector<std::int64_t> out;
    for (const c10::IValue& e : v.toListRef()) {
        if (e.isInt()) {
            out.push_back(e.toInt());
        } else if (e.isSymInt()) {
            const auto concrete = e.toSymInt().maybe_as_int();
            if (!concrete)
                return std::nullopt;
            out.push_back(*concrete);
        } else {
            return std::nullopt;
        }
    }
    return out;
}

bool needsAutograd(std::initializer_list<const at::Tensor*> tensors)
{
    if (!at::GradMode::is_enabled())
        return false;
    for (const at::Tensor* t : tensors)
        if (t && t->defined() && t->requires_grad())
            return true;
    return false;
}

const at::Tensor* ptr(const std::optional<at::Tensor>& t) { return t ? &*t : nullptr; }

// The common part: argument parsing into Args (nullopt: not ours to handle), then our kernel or, for calls
// we do not handle, the original.
// Tuning settings every Cpu*Provider takes (the autotuning generator chooses them; a plan replays them):
//   isa             "default" | "avx2" | "avx512": the kernel set (one this CPU cannot run falls back to the usual
//                   choice, so a plan tuned on another machine still runs)
//   grain_elements  work per parallel chunk, in elements (ATen's 32768 by default)
//   max_threads     a cap on the intra-op threads (0: ATen's count)
struct CpuTuningSettings {
    std::optional<cpu::Isa> isa;
    cpu::Tuning tuning;
    const cpu::KernelTable* table = nullptr; // isa's kernels where this CPU runs them; null: the usual choice

    bool isDefault() const { return !isa && tuning.grainElements == cpu::Tuning{}.grainElements && !tuning.maxThreads; }
    void addTo(nlohmann::json& settings) const
    {
        if (isa)
            settings["isa"] = std::string(cpu::isaName(*isa));
        if (tuning.grainElements != cpu::Tuning{}.grainElements)
            settings["grain_elements"] = tuning.grainElements;
        if (tuning.maxThreads)
            settings["max_threads"] = tuning.maxThreads;
    }
    // "isa=avx2, grain_elements=65536": for display names.
    std::string describe() const
    {
        nlohmann::json s = nlohmann::json::object();
        addTo(s);
        return settingsText(s);
    }
    // False when `key` is not a tuning setting; throws kforge::Error for a bad value.
    bool load(const std::string& where, const std::string& key, const nlohmann::json& value)
    {
        if (key == "isa") {
            const auto parsed = value.is_string() ? cpu::isaFromName(value.get<std::string>()) : std::nullopt;
            if (!parsed)
                throw Error(where, "setting 'isa' must be \"default\", \"avx2\" or \"avx512\", got " + value.dump());
            isa = parsed;
            const auto available = cpu::availableIsas();
            table = std::find(available.begin(), available.end(), *isa) != available.end() ? &cpu::kernelsFor(*isa)
                                                                                           : nullptr;
            return true;
        }
        if (key == "grain_elements" || key == "max_threads") {
            if (!value.is_number_integer() || value.get<std::int64_t>() < (key == "max_threads" ? 0 : 1))
                throw Error(where, "setting '" + key + "' must be an integer of at least " +
                                       (key == "max_threads" ? "0" : "1") + ", got " + value.dump());
            if (key == "grain_elements")
                tuning.grainElements = value.get<std::int64_t>();
            else
                tuning.maxThreads = value.get<int>();
            return true;
        }
        return false;
    }
};

template <typename Args> class CpuProvider : public KernelProvider {
public:
    std::vector<std::string> devices() const override { return {"cpu"}; }
    std::string displayName() const override
    {
        const std::string tuned = m_tuning.describe();
        return tuned.empty() ? typeName() : typeName() + "(" + tuned + ")";
    }
    nlohmann::json settings() const override
    {
        nlohmann::json s{{"type", typeName()}};
        m_tuning.addTo(s);
        return s;
    }

protected:
    // A setting of the derived provider other than the tuning ones; false: unknown.
    virtual bool loadOwnSetting(const std::string& where, const std::string& key, const nlohmann::json& value)
    {
        return false;
    }
    void loadSettings(const nlohmann::json& settings) override
    {
        const std::string where = "provider '" + typeName() + "'";
        for (const auto& [key, value] : settings.items())
            if (key != "type" && !m_tuning.load(where, key, value) && !loadOwnSetting(where, key, value))
                throw Error(where, "unknown setting '" + key + "' (known: isa, grain_elements, max_threads" +
                                       ownSettingNames() + ")");
    }
    virtual std::string ownSettingNames() const { return ""; }
    // The kernel set this provider's settings choose (resolved when they load).
    const cpu::KernelTable& kernelTable() const { return m_tuning.table ? *m_tuning.table : cpu::kernels(); }
    const CpuTuningSettings& tuningSettings() const { return m_tuning; }

    // The op's arguments, parsed and checked; nullopt when our kernel cannot compute this call.
    virtual std::optional<Args> parse(const torch::jit::Stack& stack, size_t first) const = 0;
    virtual at::Tensor compute(const Args& args) const = 0;
    virtual bool needsGraph(const Args& args) const = 0;
    virtual size_t argumentCount() const = 0;

    bool supports(const torch::jit::Stack& sample) const override
    {
        return sample.size() >= argumentCount() && parse(sample, sample.size() - argumentCount()).has_value();
    }

    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const size_t n = op.schema().arguments().size();
        if (n != argumentCount() || stack.size() < n)
            return CallResult::decline("not this provider's op schema");
        const std::optional<Args> args = parse(stack, stack.size() - n);
        // Not ours (see cpu_providers.h): the runtime runs the original and reports the call as its.
        if (!args)
            return CallResult::decline(whyNotParsed(stack[stack.size() - n]));
        if (needsGraph(*args))
            return CallResult::decline("inputs that need autograd (the kernel records no graph)");
        at::Tensor out;
        {
            cpu::TuningScope tuning(m_tuning.tuning);
            out = compute(*args);
        }
        torch::jit::drop(stack, n);
        torch::jit::push(stack, std::move(out));
        return CallResult::served();
    }

    static const char* whyNotParsed(const c10::IValue& input)
    {
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

private:
    CpuTuningSettings m_tuning;
};

// ---------------------------------------------------------------------------------------------------------
// aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None,
//                  float eps=1e-05, bool cudnn_enable=True) -> Tensor

struct NormArgs {
    at::Tensor input;
    std::vector<std::int64_t> shape;
    std::optional<at::Tensor> weight, bias;
    double eps = 0.0;
    std::int64_t rows = 0, cols = 1;
};

// Shared by layer_norm and rms_norm: input, normalized_shape (trailing dims), parameters.
std::optional<NormArgs> parseNorm(const torch::jit::Stack& stack, size_t first, bool hasBias)
{
    NormArgs a;
    if (!stack[first].isTensor())
        return std::nullopt;
    a.input = stack[first].toTensor();
    auto shape = intList(stack[first + 1]);
    if (!cpuFloatOrBf16(a.input) || !shape)
        return std::nullopt;
    a.shape = std::move(*shape);
    const std::int64_t k = static_cast<std::int64_t>(a.shape.size());
    if (k < 1 || k > a.input.dim() || !a.input.sizes().slice(a.input.dim() - k).equals(a.shape))
        return std::nullopt; // ATen raises; the fallback lets it
    a.weight = stack[first + 2].toOptional<at::Tensor>();
    if (hasBias)
        a.bias = stack[first + 3].toOptional<at::Tensor>();
    if (!parameterOk(a.weight, a.input, a.shape) || !parameterOk(a.bias, a.input, a.shape))
        return std::nullopt;
    for (std::int64_t d : a.shape)
        a.cols *= d;
    a.rows = a.cols == 0 ? 0 : a.input.numel() / a.cols;
    return a;
}

class CpuFusedLayerNormProvider final : public CpuProvider<NormArgs> {
public:
    Function function() const override { return Function::LayerNorm; }
    std::string typeName() const override { return "CpuFusedLayerNormProvider"; }

protected:
    size_t argumentCount() const override { return 6; }
    std::optional<NormArgs> parse(const torch::jit::Stack& stack, size_t first) const override
    {
        auto a = parseNorm(stack, first, true);
        if (a)
            a->eps = stack[first + 4].toDouble();
        return a;
    }
    bool needsGraph(const NormArgs& a) const override { return needsAutograd({&a.input, ptr(a.weight), ptr(a.bias)}); }
    at::Tensor compute(const NormArgs& a) const override
    {
        const at::Tensor x = a.input.contiguous();
        at::Tensor y = at::empty(x.sizes(), x.options());
        if (x.numel() == 0)
            return y;
        at::Tensor holdW, holdB;
        const float* w = floatParameter(a.weight, holdW);
        const float* b = floatParameter(a.bias, holdB);
        kernelTable().layerNorm(x.scalar_type(), x.const_data_ptr(), w, b, y.mutable_data_ptr(), a.rows, a.cols,
                                static_cast<float>(a.eps));
        return y;
    }
};

// ---------------------------------------------------------------------------------------------------------
// aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor
// ATen's composite: in float32, x * rsqrt(mean(x^2) + eps) * weight, cast back to the input's dtype; eps None
// is numeric_limits<float>::epsilon() (float32 is the op-math type of both float32 and bfloat16).

class CpuRmsNormProvider final : public CpuProvider<NormArgs> {
public:
    Function function() const override { return Function::RmsNorm; }
    std::string typeName() const override { return "CpuRmsNormProvider"; }

protected:
    size_t argumentCount() const override { return 4; }
    std::optional<NormArgs> parse(const torch::jit::Stack& stack, size_t first) const override
    {
        auto a = parseNorm(stack, first, false);
        if (a)
            a->eps = stack[first + 3].toOptional<double>().value_or(std::numeric_limits<float>::epsilon());
        return a;
    }
    bool needsGraph(const NormArgs& a) const override { return needsAutograd({&a.input, ptr(a.weight)}); }
    at::Tensor compute(const NormArgs& a) const override
    {
        const at::Tensor x = a.input.contiguous();
        at::Tensor y = at::empty(x.sizes(), x.options());
        if (x.numel() == 0)
            return y;
        at::Tensor holdW;
        const float* w = floatParameter(a.weight, holdW);
        kernelTable().rmsNorm(x.scalar_type(), x.const_data_ptr(), w, y.mutable_data_ptr(), a.rows, a.cols,
                              static_cast<float>(a.eps));
        return y;
    }
};

// ---------------------------------------------------------------------------------------------------------
// aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
// dtype: None or the input's dtype, or float32 for a bfloat16 input (softmax computed from the widened values,
// as ATen's conversion then softmax gives). Any dim: the input is viewed as [outer, dim, inner].

struct SoftmaxArgs {
    at::Tensor input;
    std::int64_t dim = 0;
    at::ScalarType outDtype = at::kFloat;
};

class CpuOnlineSoftmaxProvider final : public CpuProvider<SoftmaxArgs> {
public:
    Function function() const override { return Function::Softmax; }
    std::string typeName() const override { return "CpuOnlineSoftmaxProvider"; }

protected:
    size_t argumentCount() const override { return 3; }
    std::optional<SoftmaxArgs> parse(const torch::jit::Stack& stack, size_t first) const override
    {
        SoftmaxArgs a;
        if (!stack[first].isTensor() || !stack[first + 1].isInt())
            return std::nullopt;
        a.input = stack[first].toTensor();
        if (!cpuFloatOrBf16(a.input))
            return std::nullopt;
        const std::int64_t ndim = std::max<std::int64_t>(a.input.dim(), 1);
        std::int64_t dim = stack[first + 1].toInt();
        if (dim < -ndim || dim >= ndim)
            return std::nullopt;
        a.dim = dim < 0 ? dim + ndim : dim;
        const auto dtype = stack[first + 2].toOptional<at::ScalarType>();
        a.outDtype = dtype.value_or(a.input.scalar_type());
        const bool sameType = a.outDtype == a.input.scalar_type();
        const bool widen = a.input.scalar_type() == at::kBFloat16 && a.outDtype == at::kFloat;
        if (!sameType && !widen)
            return std::nullopt;
        return a;
    }
    bool needsGraph(const SoftmaxArgs& a) const override { return needsAutograd({&a.input}); }
    at::Tensor compute(const SoftmaxArgs& a) const override
    {
        const at::Tensor x = a.input.contiguous();
        at::Tensor y = at::empty(x.sizes(), x.options().dtype(a.outDtype));
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
        kernelTable().softmax(x.scalar_type(), a.outDtype, x.const_data_ptr(), y.mutable_data_ptr(), outer, size,
                              inner);
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

struct GeluArgs {
    at::Tensor input;
    bool tanh = false;
};

class CpuGeluProvider final : public CpuProvider<GeluArgs> {
public:
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "CpuGeluProvider"; }
    std::string displayName() const override
    {
        const std::string tuned = tuningSettings().describe();
        return "CpuGeluProvider(approximate=" + std::string(m_tanh ? "tanh" : "none") +
               (tuned.empty() ? "" : ", " + tuned) + ")";
    }
    nlohmann::json settings() const override
    {
        nlohmann::json s = CpuProvider<GeluArgs>::settings();
        s["approximate"] = m_tanh ? "tanh" : "none";
        return s;
    }

protected:
    bool loadOwnSetting(const std::string& where, const std::string& key, const nlohmann::json& value) override
    {
        if (key != "approximate")
            return false;
        if (!value.is_string() || (value != "none" && value != "tanh"))
            throw Error(where, "setting 'approximate' must be \"none\" or \"tanh\", got " + value.dump());
        m_tanh = value == "tanh";
        return true;
    }
    std::string ownSettingNames() const override { return ", approximate"; }

    size_t argumentCount() const override { return 2; }

    // Eligible only for calls that ask for this provider's form: a plan entry "gelu -> tanh GELU" must not
    // serve exact-GELU call sites (the optimizer compares providers against the original per call).
    bool supports(const torch::jit::Stack& sample) const override
    {
        if (!CpuProvider<GeluArgs>::supports(sample))
            return false;
        return parse(sample, sample.size() - 2)->tanh == m_tanh;
    }

    // At run time the call's own `approximate` decides the formula, whatever the setting: never the other
    // GELU silently.
    std::optional<GeluArgs> parse(const torch::jit::Stack& stack, size_t first) const override
    {
        if (!stack[first].isTensor() || !stack[first + 1].isString())
            return std::nullopt;
        GeluArgs a{stack[first].toTensor()};
        if (!cpuFloatOrBf16(a.input))
            return std::nullopt;
        const auto approximate = stack[first + 1].toStringRef();
        if (approximate != "none" && approximate != "tanh")
            return std::nullopt; // ATen raises; the fallback lets it
        a.tanh = approximate == "tanh";
        return a;
    }
    bool needsGraph(const GeluArgs& a) const override { return needsAutograd({&a.input}); }
    at::Tensor compute(const GeluArgs& a) const override
    {
        auto [x, y] = denseInOut(a.input);
        if (x.numel() > 0)
            kernelTable().gelu(x.scalar_type(), x.const_data_ptr(), y.mutable_data_ptr(), x.numel(), a.tanh);
        return y;
    }

private:
    bool m_tanh = false;
};

struct SiluArgs {
    at::Tensor input;
};

class CpuSiluProvider final : public CpuProvider<SiluArgs> {
public:
    Function function() const override { return Function::Silu; }
    std::string typeName() const override { return "CpuSiluProvider"; }

protected:
    size_t argumentCount() const override { return 1; }
    std::optional<SiluArgs> parse(const torch::jit::Stack& stack, size_t first) const override
    {
        if (!stack[first].isTensor() || !cpuFloatOrBf16(stack[first].toTensor()))
            return std::nullopt;
        return SiluArgs{stack[first].toTensor()};
    }
    bool needsGraph(const SiluArgs& a) const override { return needsAutograd({&a.input}); }
    at::Tensor compute(const SiluArgs& a) const override
    {
        auto [x, y] = denseInOut(a.input);
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
