// SPDX-License-Identifier: Apache-2.0
#include "profiling/cupti_info.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>

#ifdef KFORGE_WITH_CUPTI
#include <cupti.h>
#endif

namespace kforge::profiling {

bool torchBuiltWithCuda() { return at::hasCUDA() || at::detail::getCUDAHooks().hasCUDART(); }

std::string torchCudaVersion()
{
    if (!at::detail::getCUDAHooks().hasCUDART())
        return "";
    const long v = at::detail::getCUDAHooks().versionCUDART();
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

CuptiInfo cuptiInfo(bool haveCudaDevice)
{
    CuptiInfo info;
#ifdef KFORGE_WITH_CUPTI
    info.linked = true;
    uint32_t version = 0;
    if (cuptiGetVersion(&version) == CUPTI_SUCCESS)
        info.version = std::to_string(version);
    if (!haveCudaDevice) {
        info.status = "no: no CUDA device is visible (operator times on the CPU are used instead)";
    } else {
        info.canTrace = true;
        info.status = "yes: CUPTI activity tracing available";
    }
#else
    info.status = "no: this build has no CUPTI (configured without the CUDA toolkit)";
#endif
    return info;
}

} // namespace kforge::profiling
