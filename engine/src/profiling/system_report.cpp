// SPDX-License-Identifier: Apache-2.0
#include <kforge/doctor.h>
#include <kforge/version.h>

#include "profiling/cupti_info.h"

#include <torch/cuda.h>
#include <torch/version.h> // IWYU pragma: keep (TORCH_VERSION)

#ifdef KFORGE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include <cstdio>

namespace kforge {
namespace {

std::vector<std::string> listCudaDevices()
{
    std::vector<std::string> out;
#ifdef KFORGE_WITH_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess)
        return out;
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
            continue;
        char geometry[64];
        std::snprintf(geometry, sizeof geometry, " (sm_%d%d, %.1f GiB)", prop.major, prop.minor,
                      double(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
        out.push_back(std::to_string(i) + ": " + prop.name + geometry);
    }
#endif
    return out;
}

} // namespace

SystemReport systemReport()
{
    SystemReport r;
    r.kforgeVersion = KFORGE_VERSION_STRING;
    r.torchVersion = TORCH_VERSION;
    r.torchCudaBuild = torch::cuda::is_available() || profiling::torchBuiltWithCuda();
    r.torchCudaVersion = profiling::torchCudaVersion();
    r.cudaDevices = listCudaDevices();
    const profiling::CuptiInfo cupti = profiling::cuptiInfo(!r.cudaDevices.empty());
    r.cuptiLinked = cupti.linked;
    r.cuptiVersion = cupti.version;
    r.canTrace = cupti.canTrace;
    r.traceStatus = cupti.status;
    r.interposer = interposerReport();
    return r;
}

} // namespace kforge
