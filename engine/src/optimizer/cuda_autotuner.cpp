// SPDX-License-Identifier: Apache-2.0
#include "optimizer/cuda_autotuner.h"

#include "optimizer/settings_tuner.h"

namespace kforge::optimizer {
#ifdef KFORGE_WITH_CUDA
namespace {

bool isRowFunction(Function function) { return function != Function::Gelu && function != Function::Silu; }

// Bytes per element of the samples' first argument (the input tensor).
std::size_t elementBytes(const std::vector<torch::jit::Stack>& samples)
{
    const c10::IValue& x = samples.front().front();
    return x.isTensor() ? std::size_t(x.toTensor().element_size()) : 4;
}

class CudaAutotuner final : public SettingsAutotuner {
public:
    CudaAutotuner()
        : SettingsAutotuner("CudaAutotuner", "cuda",
                            {{Function::Gelu, "CudaGeluProvider"},
                             {Function::Silu, "CudaSiluProvider"},
                             {Function::LayerNorm, "CudaLayerNormProvider"},
                             {Function::RmsNorm, "CudaRmsNormProvider"},
                             {Function::Softmax, "CudaSoftmaxProvider"}})
    {
    }

protected:
    // The configurations tried: the built-in launch first, then 128 to 1024 threads per block with 16- and 32-byte
    // loads; row kernels also 1 or 4 rows per block, with the row length passed or compiled in; elementwise kernels
    // also a grid of 4, 16 or 64 blocks per SM.
    std::vector<nlohmann::json> configurations(Function function, const nlohmann::json& base,
                                               const std::vector<torch::jit::Stack>& samples) const override
    {
        std::vector<nlohmann::json> out{base};
        const int vec16 = int(16 / elementBytes(samples));
        for (const int threads : {128, 256, 512, 1024})
            for (const int vector : {vec16, 2 * vec16}) {
                nlohmann::json s = base;
                s["block_threads"] = threads;
                s["vector_width"] = vector;
                if (isRowFunction(function)) {
                    for (const int rows : {1, 4})
                        for (const bool specialize : {false, true}) {
                            nlohmann::json row = s;
                            if (rows != 1)
                                row["rows_per_block"] = rows;
                            if (specialize)
                                row["specialize_cols"] = true;
                            out.push_back(std::move(row));
                        }
                } else {
                    for (const int perSm : {4, 16, 64}) {
                        nlohmann::json unary = s;
                        unary["blocks_per_sm"] = perSm;
                        out.push_back(std::move(unary));
                    }
                }
            }
        return out;
    }
};

} // namespace

void registerCudaAutotuner(GeneratorRegistry& registry)
{
    registry.add({"CudaAutotuner",
                  "Tunes the KernelForge CUDA providers (gelu, silu, layer_norm, rms_norm, softmax) on the observed "
                  "samples: threads per block, elements per load, rows per block, the row length compiled in and the "
                  "grid's size; each variant is compiled at run time by NVRTC and cached on disk "
                  "(KFORGE_KERNEL_CACHE, else ~/.cache/kforge/kernels). Emits the fastest correct configuration as the "
                  "provider's settings.",
                  [] { return std::make_unique<CudaAutotuner>(); }});
}
#else
void registerCudaAutotuner(GeneratorRegistry&) {}
#endif

} // namespace kforge::optimizer
