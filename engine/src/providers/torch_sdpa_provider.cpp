// TorchSDPAKernelProvider {backend}: scaled_dot_product_attention through one chosen SDPA backend, as
// AITune's provider of the same name does with torch.nn.attention.sdpa_kernel.
#include "providers/builtin_providers.h"

#include <kforge/error.h>

#include <ATen/ATen.h>

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

    bool supports(const torch::jit::Stack& sample) const override
    {
        if (sample.size() < kSdpaArgs - 1)
            return false;
        const SdpaArgs a = SdpaArgs::from(sample, 0);
        const bool cuda = a.q.is_cuda();
        const bool halfPrecision = a.q.scalar_type() == at::kHalf || a.q.scalar_type() == at::kBFloat16;
        switch (m_backend) {
        case Backend::Math:
            return true;
        case Backend::FlashAttention:
            return !a.gqa && a.dropout == 0.0 && (cuda ? halfPrecision && !a.mask : a.q.is_floating_point());
        case Backend::EfficientAttention:
            return cuda && !a.gqa;
        case Backend::CudnnAttention:
            return cuda && halfPrecision && !a.gqa;
        }
        return false;
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
    at::Tensor attend(const SdpaArgs& a) const
    {
        switch (m_backend) {
        case Backend::Math:
            return std::get<0>(at::_scaled_dot_product_attention_math(a.q, a.k, a.v, a.mask, a.dropout, a.causal,
                                                                      std::nullopt, a.scale, a.gqa));
        case Backend::FlashAttention:
            if (!a.q.is_cuda())
                return std::get<0>(at::_scaled_dot_product_flash_attention_for_cpu(a.q, a.k, a.v, a.dropout, a.causal,
                                                                                   a.mask, a.scale));
            TORCH_CHECK(!a.mask, "FLASH_ATTENTION on CUDA takes no attn_mask");
            return std::get<0>(
                at::_scaled_dot_product_flash_attention(a.q, a.k, a.v, a.dropout, a.causal, false, a.scale));
        case Backend::EfficientAttention:
            TORCH_CHECK(a.q.is_cuda(), "EFFICIENT_ATTENTION runs on CUDA devices only");
            return std::get<0>(at::_scaled_dot_product_efficient_attention(a.q, a.k, a.v, a.mask, false, a.dropout,
                                                                           a.causal, a.scale));
        case Backend::CudnnAttention:
            TORCH_CHECK(a.q.is_cuda(), "CUDNN_ATTENTION runs on CUDA devices only");
            return std::get<0>(at::_scaled_dot_product_cudnn_attention(a.q, a.k, a.v, a.mask, false, a.dropout,
                                                                       a.causal, false, a.scale));
        }
        TORCH_CHECK(false, "unknown SDPA backend");
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
