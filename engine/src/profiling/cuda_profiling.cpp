#include "profiling/cuda_profiling.h"

#include "profiling/cupti_info.h"

#include <kforge/error.h>

#include <torch/cuda.h>

#ifdef KFORGE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kforge::profiling {

struct CudaProfiling::Impl {};

bool CudaProfiling::available(std::string* why)
{
    const auto fail = [&](const char* reason) {
        if (why)
            *why = reason;
        return false;
    };
#ifndef KFORGE_WITH_CUPTI
    return fail("this build has no CUPTI");
#else
    if (!torch::cuda::is_available())
        return fail("no CUDA device is visible on this machine");
    return true;
#endif
}

std::string CudaProfiling::deviceName()
{
#ifdef KFORGE_WITH_CUDA
    cudaDeviceProp prop{};
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        return prop.name;
#endif
    return "CUDA device";
}

std::string CudaProfiling::cuptiVersion() { return cuptiInfo(true).version; }

CudaProfiling::CudaProfiling(HostRecorder& recorder) : m_recorder(recorder), m_impl(std::make_unique<Impl>())
{
    throw Error("CUDA profiling", "CUPTI tracing is not wired into this build yet");
}

CudaProfiling::~CudaProfiling() = default;

void CudaProfiling::synchronize()
{
#ifdef KFORGE_WITH_CUDA
    cudaDeviceSynchronize();
#endif
}

std::vector<KernelRecord> CudaProfiling::finish(std::uint64_t& dropped)
{
    dropped = 0;
    return {};
}

} // namespace kforge::profiling
