// SPDX-License-Identifier: Apache-2.0
// TorchSDPAKernelProvider {backend}: scaled_dot_product_attention through one chosen SDPA backend, as AITune's
// provider of the same name does: the public op runs with only that backend enabled (what
// torch.nn.attention.sdpa_kernel does in Python), so its preprocessing (boolean masks, head-dim padding,
// alignment) and its eligibility rules are PyTorch's own, and a call the backend cannot serve is refused with
// PyTorch's message, as in Python.
#include "providers/builtin_providers.h"

#include <kforge/error.h>

#include <ATen/ATen.h>
#include <ATen/Context.h>

#include <mutex>

namespace kforge::providers {
namespace {

enum class Backend { Math, FlashAttention, EfficientAttention, CudnnAttention };

constexpr std::array<std::pair<Backend, std::string_view>, 4> kBackends{{
    {Backend::Math, "MATH"},
    {Backend::FlashAttention, "FLASH_ATTENTION"},
    {Backend::EfficientAttention, "EFFICIENT_ATTENTION"},
    {Backend::CudnnAttention, "CUDNN_ATTENTION"},
}};

std::string_view backendName(Backend b)
{
    for (const auto& [backend, name] : kBackends)
        if (backend == b)
            return name;
    return "?";
}

// aten::scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *,
//                                    scale=None, enable_gqa=False)
struct SdpaArgs {
    at::Tensor q, k, v;
    std::optional<at::Tensor> mask;
    double dropout = 0.0;
    bool causal = false;
    std::optional<double> scale;
    bool gqa = false;

    static SdpaArgs from(const torch::jit::Stack& stack, size_t first)
    {
        SdpaArgs a;
        a.q = stack[first].toTensor();
        a.k = stack[first + 1].toTensor();
        a.v = stack[first + 2].toTensor();
        a.mask = stack[first + 3].toOptional<at::Tensor>();
        a.dropout = stack[first + 4].toDouble();
        a.causal = stack[first + 5].toBool();
        a.scale = stack[first + 6].toOptional<double>();
        a.gqa = stack.size() > first + 7 && stack[first + 7].toBool();
        return a;
    }
};
constexpr size_t kSdpaArgs = 8;

// The process-wide backend switches (torch.backends.cuda.enable_*_sdp in Python), set to exactly one backend for
// one call and restored after it. They are global, so calls that switch them are serialised; an SDPA call on
// another thread at that moment sees the same restriction, as with sdpa_kernel in a multi-threaded Python
// program (docs/aitune-plans.md).
class OnlyBackend {
public:
    explicit OnlyBackend(Backend backend) : m_lock(mutex())
    {
        at::Context& ctx = at::globalContext();
        m_saved = {ctx.userEnabledMathSDP(), ctx.userEnabledFlashSDP(), ctx.userEnabledMemEfficientSDP(),
                   ctx.userEnabledCuDNNSDP(), ctx.userEnabledOverrideableSDP()};
        set({backend == Backend::Math, backend == Backend::FlashAttention, backend == Backend::EfficientAttention,
             backend == Backend::CudnnAttention, false});
    }
    ~OnlyBackend() { set(m_saved); }
    OnlyBackend(const OnlyBackend&) = delete;
    OnlyBackend& operator=(const OnlyBackend&) = delete;

private:
    using Switches = std::array<bool, 5>; // math, flash, efficient, cudnn, overrideable
    static std::mutex& mutex()
    {
        static std::mutex m;
        return m;
    }
    static void set(const Switches& on)
    {
        at::Context& ctx = at::globalContext();
        ctx.setSDPUseMath(on[0]);
        ctx.setSDPUseFlash(on[1]);
        ctx.setSDPUseMemEfficient(on[2]);
        ctx.setSDPUseCuDNN(on[3]);
        ctx.setSDPUseOverrideable(on[4]);
    }
    std::lock_guard<std::mutex> m_lock;
    Switches m_saved{};
};

class TorchSdpaProvider final : public KernelProvider {
public:
    Function function() const override { return Function::ScaledDotProductAttention; }
    std::string typeName() const override { return "TorchSDPAKernelProvider"; }
    std::string displayName() const override
    {
        return "TorchSDPAKernelProvider(backend=" + std::string(backendName(m_backend)) + ")";
    }
    std::vector<std::string> devices() const override
    {
        if (m_backend == Backend::Math || m_backend == Backend::FlashAttention)
            return {"cpu", "cuda"};
        return {"cuda"};
    }
    nlohmann::json settings() const override
    {
        return {{"type", typeName()}, {"backend", std::string(backendName(m_backend))}};
    }

protected:
    void loadSettings(const nlohmann::json& settings) override
    {
        const std::string where = "provider 'TorchSDPAKernelProvider'";
        for (const auto& [key, value] : settings.items()) {
            if (key == "type")
                continue;
            if (key != "backend")
                throw Error(where, "unknown setting '" + key + "' (known: backend)");
            if (!value.is_string())
                throw Error(where, "setting 'backend' must be a string");
            const auto name = value.get<std::string>();
            const auto it =
                std::find_if(kBackends.begin(), kBackends.end(), [&](const auto& b) { return b.second == name; });
            if (it == kBackends.end())
                throw Error(where, "unknown backend '" + name +
                                       "' (known: MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION)");
            m_backend = it->first;
        }
    }

    // Eligible when the public op serves the sample with only this backend enabled: PyTorch's own rules.
    bool supports(const torch::jit::Stack& sample) const override
    {
        if (sample.size() < kSdpaArgs - 1)
            return false;
        try {
            attend(SdpaArgs::from(sample, 0));
            return true;
        } catch (const c10::Error&) {
            return false;
        }
    }

    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const size_t first = stack.size() - op.schema().arguments().size();
        const SdpaArgs a = SdpaArgs::from(stack, first);
        torch::jit::drop(stack, op.schema().arguments().size());
        torch::jit::push(stack, attend(a));
        return CallResult::served();
    }

private:
    // The public op, as in Python: a call the backend cannot serve throws PyTorch's "No available kernel"
    // error (with its warnings saying why), which the runtime reports with the function, provider and module.
    at::Tensor attend(const SdpaArgs& a) const
    {
        OnlyBackend only(m_backend);
        return at::scaled_dot_product_attention(a.q, a.k, a.v, a.mask, a.dropout, a.causal, a.scale, a.gqa);
    }

    Backend m_backend = Backend::Math;
};

} // namespace

void registerTorchSdpaProvider(ProviderRegistry& registry)
{
    registry.add({"TorchSDPAKernelProvider",
                  Function::ScaledDotProductAttention,
                  {"cpu", "cuda"},
                  "scaled_dot_product_attention through one SDPA backend (MATH, FLASH_ATTENTION, "
                  "EFFICIENT_ATTENTION, CUDNN_ATTENTION)",
                  [] { return std::make_unique<TorchSdpaProvider>(); },
                  {{"backend",
                    {{"type", "string"},
                     {"enum", {"MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"}},
                     {"default", "MATH"}}}}});
}

} // namespace kforge::providers
