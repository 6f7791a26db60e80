// SPDX-License-Identifier: Apache-2.0
// The built-in variants of the Cuda*Provider kernels (row_kernels_device.cuh): layer_norm, rms_norm and softmax
// over the last dimension (one thread block per row), gelu and silu (elementwise, grid-stride). No LibTorch
// headers: see row_kernels.h.
//
// Loads and stores move 16 bytes at a time (a Pack of 4 floats or 8 halves) when every pointer is aligned
// for it and the row length is a multiple of the pack; otherwise the same kernels run with packs of one.
// The row kernels keep the row in shared memory when it fits (32 KiB), and re-read global memory otherwise.
#include "row_kernels.h"

#include "launch_geometry.h"
#include "row_kernels_device.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace kforge::cuda_kernels {

cudaError_t multiprocessorCount(int& count)
{
    constexpr int kMaxDevices = 64;
    static std::atomic<int> known[kMaxDevices] = {};
    int device = 0;
    if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
        return e;
    if (device >= 0 && device < kMaxDevices && (count = known[device].load(std::memory_order_relaxed)) > 0)
        return cudaSuccess;
    if (const cudaError_t e = cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
        return e;
    count = std::max(count, 1);
    if (device >= 0 && device < kMaxDevices)
        known[device].store(count, std::memory_order_relaxed);
    return cudaSuccess;
}

namespace {

using kforge_kernels::Bf16;
using kforge_kernels::Half;
using kforge_kernels::kVec;

bool aligned(const void* p, std::size_t bytes)
{
    return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// The built-in variants: 16-byte loads where every pointer and the row length allow it, else one element at a time;
// one row per block.
template <typename T, typename TP>
cudaError_t launchLayerNorm(const void* x, const void* weight, const void* bias, void* y, int64_t rows, int64_t cols,
                            float eps, cudaStream_t stream)
{
    constexpr int N = kVec<T>;
    const bool vectorized = cols % N == 0 && aligned(x, 16) && aligned(y, 16) && aligned(weight, sizeof(TP) * N) &&
                            aligned(bias, sizeof(TP) * N);
    const auto* xt = static_cast<const T*>(x);
    const auto* wt = static_cast<const TP*>(weight);
    const auto* bt = static_cast<const TP*>(bias);
    auto* yt = static_cast<T*>(y);
    const RowGeometry l = rowGeometry(rows, cols, vectorized ? N : 1, {});
    if (vectorized)
        kforge_kernels::layerNormKernel<T, TP, N, 1, 0, kBuiltInRowThreads>
            <<<l.grid, l.block, l.sharedBytes, stream>>>(xt, wt, bt, yt, rows, cols, eps, l.cached);
    else
        kforge_kernels::layerNormKernel<T, TP, 1, 1, 0, kBuiltInRowThreads>
            <<<l.grid, l.block, l.sharedBytes, stream>>>(xt, wt, bt, yt, rows, cols, eps, l.cached);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launchRmsNorm(const void* x, const void* weight, void* y, int64_t rows, int64_t cols, float eps,
                          cudaStream_t stream)
{
    constexpr int N = kVec<T>;
    const bool vectorized = cols % N == 0 && aligned(x, 16) && aligned(y, 16) && aligned(weight, 16);
    const auto* xt = static_cast<const T*>(x);
    const auto* wt = static_cast<const T*>(weight);
    auto* yt = static_cast<T*>(y);
    const RowGeometry l = rowGeometry(rows, cols, vectorized ? N : 1, {});
    if (vectorized)
        kforge_kernels::rmsNormKernel<T, N, 1, 0, kBuiltInRowThreads>
            <<<l.grid, l.block, l.sharedBytes, stream>>>(xt, wt, yt, rows, cols, eps, l.cached);
    else
        kforge_kernels::rmsNormKernel<T, 1, 1, 0, kBuiltInRowThreads>
            <<<l.grid, l.block, l.sharedBytes, stream>>>(xt, wt, yt, rows, cols, eps, l.cached);
    return cudaGetLastError();
}

template <typename TI, typename TO>
cudaError_t launchSoftmax(const void* x, void* y, int64_t rows, int64_t cols, cudaStream_t stream)
{
    constexpr int N = kVec<TI>;
    const bool vectorized = cols % N == 0 && aligned(x, 16) && aligned(y, sizeof(TO) * N);
    const auto* xt = static_cast<const TI*>(x);
    auto* yt = static_cast<TO*>(y);
    const RowGeometry l = rowGeometry(rows, cols, vectorized ? N : 1, {});
    if (vectorized)
        kforge_kernels::softmaxKernel<TI, TO, N, 1, 0, kBuiltInRowThreads>
            <<<l.grid, l.block, l.sharedBytes, stream>>>(xt, yt, rows, cols, l.cached);
    else
        kforge_kernels::softmaxKernel<TI, TO, 1, 1, 0, kBuiltInRowThreads>
            <<<l.grid, l.block, l.sharedBytes, stream>>>(xt, yt, rows, cols, l.cached);
    return cudaGetLastError();
}

template <typename T, typename Op> cudaError_t launchUnary(const void* x, void* y, int64_t n, cudaStream_t stream)
{
    constexpr int N = kVec<T>;
    const bool vectorized = aligned(x, 16) && aligned(y, 16);
    int sms = 0;
    if (const cudaError_t e = multiprocessorCount(sms); e != cudaSuccess)
        return e;
    const UnaryGeometry l = unaryGeometry(vectorized ? n / N + n % N : n, sms, {});
    kforge_kernels::unaryKernel<T, Op, N, kBuiltInUnaryThreads>
        <<<l.grid, l.block, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, vectorized);
    return cudaGetLastError();
}

template <typename Op> cudaError_t dispatchUnary(const void* x, void* y, int64_t n, DType type, cudaStream_t stream)
{
    switch (type) {
    case DType::Float32:
        return launchUnary<float, Op>(x, y, n, stream);
    case DType::BFloat16:
        return launchUnary<Bf16, Op>(x, y, n, stream);
    case DType::Float16:
        return launchUnary<Half, Op>(x, y, n, stream);
    }
    return cudaErrorInvalidValue;
}

} // namespace

cudaError_t layerNorm(const void* x, const void* weight, const void* bias, DType paramType, void* y, int64_t rows,
                      int64_t cols, float eps, DType type, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    const bool floatParams = paramType == DType::Float32;
    if (!floatParams && paramType != type)
        return cudaErrorInvalidValue;
    switch (type) {
    case DType::Float32:
        return launchLayerNorm<float, float>(x, weight, bias, y, rows, cols, eps, stream);
    case DType::BFloat16:
        return floatParams ? launchLayerNorm<Bf16, float>(x, weight, bias, y, rows, cols, eps, stream)
                           : launchLayerNorm<Bf16, Bf16>(x, weight, bias, y, rows, cols, eps, stream);
    case DType::Float16:
        return floatParams ? launchLayerNorm<Half, float>(x, weight, bias, y, rows, cols, eps, stream)
                           : launchLayerNorm<Half, Half>(x, weight, bias, y, rows, cols, eps, stream);
    }
    return cudaErrorInvalidValue;
}

cudaError_t rmsNorm(const void* x, const void* weight, void* y, int64_t rows, int64_t cols, float eps, DType type,
                    cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    switch (type) {
    case DType::Float32:
        return launchRmsNorm<float>(x, weight, y, rows, cols, eps, stream);
    case DType::BFloat16:
        return launchRmsNorm<Bf16>(x, weight, y, rows, cols, eps, stream);
    case DType::Float16:
        return launchRmsNorm<Half>(x, weight, y, rows, cols, eps, stream);
    }
    return cudaErrorInvalidValue;
}

cudaError_t softmax(const void* x, void* y, int64_t rows, int64_t cols, DType inType, DType outType,
                    cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    if (outType != inType && outType != DType::Float32)
        return cudaErrorInvalidValue;
    const bool floatOut = outType == DType::Float32;
    switch (inType) {
    case DType::Float32:
        return launchSoftmax<float, float>(x, y, rows, cols, stream);
    case DType::BFloat16:
        return floatOut ? launchSoftmax<Bf16, float>(x, y, rows, cols, stream)
                        : launchSoftmax<Bf16, Bf16>(x, y, rows, cols, stream);
    case DType::Float16:
        return floatOut ? launchSoftmax<Half, float>(x, y, rows, cols, stream)
                        : launchSoftmax<Half, Half>(x, y, rows, cols, stream);
    }
    return cudaErrorInvalidValue;
}

cudaError_t gelu(const void* x, void* y, int64_t n, GeluApproximation approximation, DType type, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    return approximation == GeluApproximation::Tanh ? dispatchUnary<kforge_kernels::GeluTanh>(x, y, n, type, stream)
                                                    : dispatchUnary<kforge_kernels::GeluErf>(x, y, n, type, stream);
}

cudaError_t silu(const void* x, void* y, int64_t n, DType type, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    return dispatchUnary<kforge_kernels::Silu>(x, y, n, type, stream);
}

} // namespace kforge::cuda_kernels
