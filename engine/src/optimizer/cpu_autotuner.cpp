// SPDX-License-Identifier: Apache-2.0
#include "optimizer/cpu_autotuner.h"

#include "optimizer/settings_tuner.h"
#include "providers/cpu/cpu_kernels.h"

#include <ATen/Parallel.h>

namespace kforge::optimizer {
namespace {

class CpuAutotuner final : public SettingsAutotuner {
public:
    CpuAutotuner()
        : SettingsAutotuner("CpuAutotuner", "cpu",
                            {{Function::Gelu, "CpuGeluProvider"},
                             {Function::Silu, "CpuSiluProvider"},
                             {Function::LayerNorm, "CpuFusedLayerNormProvider"},
                             {Function::RmsNorm, "CpuRmsNormProvider"},
                             {Function::Softmax, "CpuOnlineSoftmaxProvider"}})
    {
    }

protected:
    // The configurations tried: every kernel set this CPU runs, three chunk sizes around ATen's, and (with more than
    // one intra-op thread) one thread against all. The first is the provider's default configuration.
    std::vector<nlohmann::json> configurations(Function, const nlohmann::json& base,
                                               const std::vector<torch::jit::Stack>&) const override
    {
        std::vector<nlohmann::json> out{base};
        const std::vector<int> threadCaps = at::get_num_threads() > 1 ? std::vector<int>{0, 1} : std::vector<int>{0};
        for (const providers::cpu::Isa isa : providers::cpu::availableIsas())
            for (const std::int64_t grain : {8192, 32768, 131072})
                for (const int threads : threadCaps) {
                    nlohmann::json s = base;
                    s["isa"] = std::string(providers::cpu::isaName(isa));
                    if (grain != 32768)
                        s["grain_elements"] = grain;
                    if (threads)
                        s["max_threads"] = threads;
                    out.push_back(std::move(s));
                }
        return out;
    }
};

} // namespace

void registerCpuAutotuner(GeneratorRegistry& registry)
{
    registry.add({"CpuAutotuner",
                  "Tunes the KernelForge CPU providers (gelu, silu, layer_norm, rms_norm, softmax) on the observed "
                  "samples: kernel set (default, AVX2, AVX-512), work per parallel chunk and thread cap; emits the "
                  "fastest correct configuration as the provider's settings.",
                  [] { return std::make_unique<CpuAutotuner>(); }});
}

} // namespace kforge::optimizer
