// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernels compiled at run time: NVRTC turns row_kernels_device.cuh (embedded in the engine) into a cubin for one
// template instantiation ("kforge_kernels::softmaxKernel<kforge_kernels::Bf16, float, 8, 2, 1024>"), the CUDA
// runtime loads it. Compiled images are kept on disk, keyed by the SHA-256 of everything that decides the image
// (source text, instantiation, target architecture, NVRTC version, device name and driver version), so a tuned
// plan costs a compilation once per machine. A cache entry that is unreadable or does not load is compiled again
// and replaced. No LibTorch here; errors are kforge::Error.
#include <cuda_runtime_api.h>

#include <string>

namespace kforge::cuda_kernels {

// The embedded device source (generated at build time from row_kernels_device.cuh).
extern const char* const kDeviceSource;

struct CompiledKernel {
    std::string image;       // a cubin, or PTX for an architecture this NVRTC cannot target
    std::string loweredName; // the mangled name to look the kernel up by
    bool fromCache = false;
    std::string cachePath;
};

// What identifies the machine in a cache key: device name, compute capability, driver version.
struct TargetDevice {
    int computeCapability = 0; // 90 for sm_90
    std::string identity;      // "NVIDIA H200, sm_90, driver 13000"
};

// The folder of compiled kernels: $KFORGE_KERNEL_CACHE, else $XDG_CACHE_HOME/kforge/kernels, else
// ~/.cache/kforge/kernels.
std::string kernelCacheDir();

// `nameExpression` compiled for `target`, from `cacheDir` when an earlier compilation left it there (written there
// otherwise; a cache that cannot be written only costs the next compilation). Needs no device.
CompiledKernel compileKernel(const std::string& nameExpression, const TargetDevice& target,
                             const std::string& cacheDir);

// The kernel `nameExpression` on the current device, compiled or read from the cache on first use and kept
// loaded for the life of the process.
cudaKernel_t runtimeKernel(const std::string& nameExpression);

} // namespace kforge::cuda_kernels
