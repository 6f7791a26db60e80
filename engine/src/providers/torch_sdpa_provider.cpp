// SPDX-License-Identifier: Apache-2.0
// TorchSDPAKernelProvider {backend}: scaled_dot_product_attention through one chosen SDPA backend, as AITune's
// provider of the same name does with torch.nn.attention.sdpa_kernel: the backend's own op, with PyTorch's
// eligibility checks and preprocessing (boolean masks, head-dim padding, mask alignment), and a call the backend
// cannot serve is refused with PyTorch's reasons.
#include "providers/builtin_providers.h"
#include "providers/tuned_provider.h"

#include <kforge/error.h>

#include <ATen/ATen.h>
#include <ATen/native/transformers/sdp_utils_cpp.h>
#ifdef KFORGE_WITH_CUDA
#include <ATen/native/transformers/cuda/sdp_utils.h>
#endif

#include <array>
#include <cmath>
#include <limits>

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
//                                    scale=None, enable_gqa=False), parsed by the SDK's argument layer.
using SdpaArgs = ScaledDotProductAttentionArgs;

// PyTorch's reasons for refusing a call, which its eligibility checks give as warnings.
class WarningsCollected final : public c10::WarningHandler {
public:
    void process(const c10::Warning& warning) override { m_text += (m_text.empty() ? "" : "; ") + warning.msg(); }
    const std::string& text() const { return m_text; }

private:
    std::string m_text;
};

// The check of one backend, with its warnings (debug=true) collected instead of printed.
template <class Check> void requireEligible(Backend backend, const sdp::sdp_params& params, Check check)
{
    WarningsCollected reasons;
    bool eligible = false;
    {
        c10::WarningUtils::WarningHandlerGuard guard(&reasons);
        eligible = check(params, true);
    }
    TORCH_CHECK(eligible, "No available kernel: ", backendName(backend), " cannot serve this call (",
                reasons.text().empty() ? std::string("PyTorch gave no reason") : reasons.text(), ")");
}

// The CPU flash kernel's gates, as PyTorch's use_flash_attention_cpp composes them (its gate functions are inline
// in sdp_utils_cpp.h; the composition is not exported).
bool cpuFlashEligible(const sdp::sdp_params& params, bool debug)
{
    using Gate = bool (*)(const sdp::sdp_params&, bool);
    constexpr std::array<Gate, 8> gates{sdp::check_runtime_disabled_flash,
                                        sdp::check_nested_tensor,
                                        sdp::check_for_dropout,
                                        sdp::check_tensor_shapes,
                                        sdp::check_batch_size_and_num_heads_dense<true>,
                                        sdp::check_attn_mask_shape,
                                        sdp::check_nonzero_sequence_lengths_dense,
                                        sdp::check_last_dim_stride_equals_1_dense<false>};
    constexpr std::array<at::ScalarType, 4> dtypes{at::kFloat, at::kDouble, at::kBFloat16, at::kHalf};
    for (const Gate gate : gates)
        if (!gate(params, debug))
            return false;
    const auto size = [](const at::Tensor& t) { return t.sym_size(-1); };
    if (!(size(params.query) == size(params.key) && size(params.query) == size(params.value))) {
        if (debug)
            TORCH_WARN("Flash attention requires q, k and v to have the same last dimension");
        return false;
    }
    return sdp::check_tensor_dtype(params, dtypes, debug);
}

// A boolean mask (true: attend) as the additive mask the backend kernels take, as PyTorch's public op converts it.
std::optional<at::Tensor> additiveMask(const std::optional<at::Tensor>& mask, at::ScalarType dtype)
{
    if (!mask || mask->scalar_type() != at::kBool)
        return mask;
    return at::zeros_like(*mask, mask->options().dtype(dtype))
        .masked_fill_(mask->logical_not(), -std::numeric_limits<double>::infinity());
}

bool needsLogsumexp(const SdpaArgs& a)
{
    return at::GradMode::is_enabled() && (a.query.requires_grad() || a.key.requires_grad() || a.value.requires_grad());
}

#ifdef KFORGE_WITH_CUDA
// CUDA flash attention takes head dims in multiples of 8: padded, and the output sliced back (PyTorch's own steps).
at::Tensor cudaFlash(const SdpaArgs& a)
{
    const int64_t headDim = a.query.size(-1);
    const auto padded = [&](const at::Tensor& t) {
        return headDim % 8 == 0 ? t : at::constant_pad_nd(t, {0, 8 - headDim % 8}, 0);
    };
    const double scale = a.scale ? *a.scale : 1.0 / std::sqrt(double(headDim));
    const at::Tensor out = std::get<0>(at::_scaled_dot_product_flash_attention(
        padded(a.query), padded(a.key), padded(a.value), a.dropoutP, a.isCausal, false, scale));
    return headDim % 8 == 0 ? out : out.narrow(-1, 0, headDim);
}

// Memory-efficient attention takes a mask aligned to 8 elements, expanded to (batch, heads, query, key).
at::Tensor efficientMask(const at::Tensor& mask, const SdpaArgs& a)
{
    at::Tensor aligned = mask;
    bool ok = mask.stride(-1) == 1;
    for (int64_t i = 0; ok && i + 1 < mask.dim(); ++i)
        ok = mask.stride(i) % 8 == 0;
    if (!ok) {
        const int64_t last = mask.size(-1);
        aligned = at::constant_pad_nd(mask, {0, 8 - last % 8}, 0).narrow(-1, 0, last);
    }
    return aligned.expand({a.query.size(0), a.query.size(1), a.query.size(2), a.key.size(2)});
}
#endif

class TorchSdpaProvider final : public TunedProviderBase {
public:
    TorchSdpaProvider()
    {
        declareSetting({"backend",
                        [this](const std::string& where, const nlohmann::json& value) {
                            if (!value.is_string())
                                throw Error(where, "setting 'backend' must be a string");
                            const auto name = value.get<std::string>();
                            const auto it = std::find_if(kBackends.begin(), kBackends.end(),
                                                         [&](const auto& b) { return b.second == name; });
                            if (it == kBackends.end())
                                throw Error(where, "unknown backend '" + name +
                                                       "' (known: MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, "
                                                       "CUDNN_ATTENTION)");
                            m_backend = it->first;
                        },
                        [this](nlohmann::json& s) { s["backend"] = std::string(backendName(m_backend)); }});
    }
    Function function() const override { return Function::ScaledDotProductAttention; }
    std::string typeName() const override { return "TorchSDPAKernelProvider"; }
    std::vector<std::string> devices() const override
    {
        if (m_backend == Backend::Math || m_backend == Backend::FlashAttention)
            return {"cpu", "cuda"};
        return {"cuda"};
    }

protected:
    // Eligible when the public op serves the sample with only this backend enabled: PyTorch's own rules.
    bool supports(const torch::jit::Stack& sample) const override
    {
        const std::optional<SdpaArgs> a = parseScaledDotProductAttention(sample);
        if (!a)
            return false;
        try {
            attend(*a);
            return true;
        } catch (const c10::Error&) {
            return false;
        }
    }

    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const std::optional<SdpaArgs> a = parseScaledDotProductAttention(stack);
        if (!a || op.schema().arguments().size() != SdpaArgs::kArguments)
            return CallResult::decline("not this provider's op schema");
        torch::jit::drop(stack, SdpaArgs::kArguments);
        torch::jit::push(stack, attend(*a));
        return CallResult::served();
    }

private:
    // The backend's own op, as PyTorch's public op calls it once it chose that backend, after the same
    // eligibility checks (a call the backend cannot serve is refused with PyTorch's reasons). PyTorch's own route,
    // torch.nn.attention.sdpa_kernel, flips process-wide switches that every other thread's SDPA calls read; a
    // provider must never change what another thread runs (R12).
    at::Tensor attend(const SdpaArgs& a) const
    {
        const std::optional<at::Tensor> mask = additiveMask(a.attnMask, a.query.scalar_type());
        const sdp::sdp_params params{a.query, a.key, a.value, mask, a.dropoutP, a.isCausal, a.enableGqa};
        switch (m_backend) {
        case Backend::Math:
            return std::get<0>(at::_scaled_dot_product_attention_math(a.query, a.key, a.value, mask, a.dropoutP,
                                                                      a.isCausal, std::nullopt, a.scale, a.enableGqa));
        case Backend::FlashAttention:
            if (!a.query.is_cuda()) {
                requireEligible(m_backend, params, cpuFlashEligible);
                return std::get<0>(at::_scaled_dot_product_flash_attention_for_cpu(a.query, a.key, a.value, a.dropoutP,
                                                                                   a.isCausal, mask, a.scale));
            }
#ifdef KFORGE_WITH_CUDA
            requireEligible(m_backend, params, sdp::can_use_flash_attention);
            return cudaFlash(a);
        case Backend::EfficientAttention:
            requireEligible(m_backend, params, sdp::can_use_mem_efficient_attention);
            return std::get<0>(at::_scaled_dot_product_efficient_attention(
                a.query, a.key, a.value, mask ? std::optional(efficientMask(*mask, a)) : std::nullopt,
                needsLogsumexp(a), a.dropoutP, a.isCausal, a.scale));
        case Backend::CudnnAttention:
            requireEligible(m_backend, params, sdp::can_use_cudnn_attention);
            return std::get<0>(at::_scaled_dot_product_cudnn_attention(a.query, a.key, a.value, mask, needsLogsumexp(a),
                                                                       a.dropoutP, a.isCausal, false, a.scale));
#else
        case Backend::EfficientAttention:
        case Backend::CudnnAttention:
            break;
#endif
        }
        TORCH_CHECK(false, "No available kernel: ", backendName(m_backend),
                    " needs a CUDA device and a build of kforge "
                    "with CUDA");
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
