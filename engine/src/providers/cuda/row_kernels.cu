// SPDX-License-Identifier: Apache-2.0
// CUDA kernels of the Cuda*Provider types: layer_norm, rms_norm and softmax over the last dimension (one
// thread block per row), gelu and silu (elementwise, grid-stride). No LibTorch headers: see row_kernels.h.
//
// Loads and stores move 16 bytes at a time (a Pack of 4 floats or 8 halves) when every pointer is aligned
// for it and the row length is a multiple of the pack; otherwise the same kernels run with packs of one.
// Accumulation is in float32. The row kernels keep the row, converted to float, in shared memory when it
// fits (each thread re-reads only the elements it wrote itself, so no barrier is needed for it), and re-read
// global memory otherwise.
#include "row_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

namespace kforge::cuda_kernels {
namespace {

// ---- Types --------------------------------------------------------------------------------------------------

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }

template <typename T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half fromFloat<__half>(float v) { return __float2half_rn(v); }

// N consecutive elements, loaded and stored as one (16 bytes for N = kVec<T>).
template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

template <typename T> constexpr int kVec = 16 / int(sizeof(T));

bool aligned(const void* p, std::size_t bytes)
{
    return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// ---- Reductions (blockDim.x is a multiple of 32, at most 1024) ------------------------------------------------

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float warpSum(float v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// The block's total, returned to every thread. `scratch` holds 32 floats; it is free again on return.
__device__ __forceinline__ float blockSum(float v, float* scratch)
{
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    v = warpSum(v);
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < int(blockDim.x >> 5) ? scratch[lane] : 0.f;
        v = warpSum(v);
        if (lane == 0)
            scratch[0] = v;
    }
    __syncthreads();
    const float total = scratch[0];
    __syncthreads();
    return total;
}

// Online softmax state: running max m and sum s of exp(x - m). s == 0 means "nothing but -inf seen yet" (m is
// then -inf); such a part contributes nothing when merged, so masked (-inf) elements are exact and a part of a
// row never turns into exp(-inf - -inf) = NaN. A NaN input makes s NaN, and the whole row NaN, as in ATen.
struct MaxSum {
    float m;
    float s;
};

__device__ __forceinline__ float rescaled(float s, float m, float newMax)
{
    return s == 0.f ? 0.f : s * expf(m - newMax);
}

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b)
{
    const float m = fmaxf(a.m, b.m);
    return {m, rescaled(a.s, a.m, m) + rescaled(b.s, b.m, m)};
}

__device__ __forceinline__ void accumulate(MaxSum& st, float v)
{
    if (v > st.m) {
        st.s = rescaled(st.s, st.m, v) + 1.f;
        st.m = v;
    } else if (v != -INFINITY) { // v <= m, or NaN
        st.s += expf(v - st.m);
    }
}

__device__ __forceinline__ MaxSum warpMaxSum(MaxSum st)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const MaxSum other{__shfl_xor_sync(kFullMask, st.m, offset), __shfl_xor_sync(kFullMask, st.s, offset)};
        st = merge(st, other);
    }
    return st;
}

__device__ __forceinline__ MaxSum blockMaxSum(MaxSum st, float* scratchM, float* scratchS)
{
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    st = warpMaxSum(st);
    if (lane == 0) {
        scratchM[warp] = st.m;
        scratchS[warp] = st.s;
    }
    __syncthreads();
    if (warp == 0) {
        st = lane < int(blockDim.x >> 5) ? MaxSum{scratchM[lane], scratchS[lane]} : MaxSum{-INFINITY, 0.f};
        st = warpMaxSum(st);
        if (lane == 0) {
            scratchM[0] = st.m;
            scratchS[0] = st.s;
        }
    }
    __syncthreads();
    const MaxSum total{scratchM[0], scratchS[0]};
    __syncthreads();
    return total;
}

// ---- Row access -------------------------------------------------------------------------------------------------

// Chunk c of a row: elements c*N .. c*N+N-1, as floats.
template <typename T, int N> __device__ __forceinline__ void loadChunk(float (&xs)[N], const Pack<T, N>* row, int64_t c)
{
    const Pack<T, N> p = row[c];
#pragma unroll
    for (int j = 0; j < N; ++j)
        xs[j] = toFloat(p.v[j]);
}

template <int N> __device__ __forceinline__ void cacheChunk(const float (&xs)[N], float* cache, int64_t c)
{
    if constexpr (N % 4 == 0) {
        auto* q = reinterpret_cast<float4*>(cache + c * N);
#pragma unroll
        for (int k = 0; k < N / 4; ++k)
            q[k] = make_float4(xs[4 * k], xs[4 * k + 1], xs[4 * k + 2], xs[4 * k + 3]);
    } else {
#pragma unroll
        for (int j = 0; j < N; ++j)
            cache[c * N + j] = xs[j];
    }
}

template <int N> __device__ __forceinline__ void uncacheChunk(float (&xs)[N], const float* cache, int64_t c)
{
    if constexpr (N % 4 == 0) {
        const auto* q = reinterpret_cast<const float4*>(cache + c * N);
#pragma unroll
        for (int k = 0; k < N / 4; ++k) {
            const float4 f = q[k];
            xs[4 * k] = f.x;
            xs[4 * k + 1] = f.y;
            xs[4 * k + 2] = f.z;
            xs[4 * k + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < N; ++j)
            xs[j] = cache[c * N + j];
    }
}

template <typename T, int N>
__device__ __forceinline__ void reloadChunk(float (&xs)[N], const Pack<T, N>* row, const float* cache, bool cached,
                                            int64_t c)
{
    if (cached)
        uncacheChunk(xs, cache, c);
    else
        loadChunk(xs, row, c);
}

// Dynamic shared memory: the row cache (16-byte aligned).
__device__ __forceinline__ float* rowCache()
{
    extern __shared__ float4 kforgeRowCache[];
    return reinterpret_cast<float*>(kforgeRowCache);
}

// ---- Row kernels (one block per row, grid-stride over rows) ------------------------------------------------------

template <typename T, typename TP, int N>
__global__ void layerNormKernel(const T* __restrict__ x, const TP* __restrict__ weight, const TP* __restrict__ bias,
                                T* __restrict__ y, int64_t rows, int64_t cols, float eps, bool cached)
{
    __shared__ float scratch[32];
    float* cache = rowCache();
    const int64_t chunks = cols / N;
    const auto* w = reinterpret_cast<const Pack<TP, N>*>(weight);
    const auto* b = reinterpret_cast<const Pack<TP, N>*>(bias);
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const auto* xr = reinterpret_cast<const Pack<T, N>*>(x + r * cols);
        auto* yr = reinterpret_cast<Pack<T, N>*>(y + r * cols);

        float sum = 0.f;
        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
            float xs[N];
            loadChunk(xs, xr, c);
            if (cached)
                cacheChunk(xs, cache, c);
#pragma unroll
            for (int j = 0; j < N; ++j)
                sum += xs[j];
        }
        const float mean = blockSum(sum, scratch) / float(cols);

        float squares = 0.f;
        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
            float xs[N];
            reloadChunk(xs, xr, cache, cached, c);
#pragma unroll
            for (int j = 0; j < N; ++j) {
                const float d = xs[j] - mean;
                squares += d * d;
            }
        }
        const float var = blockSum(squares, scratch) / float(cols);
        const float rstd = rsqrtf(var + eps);

        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
            float xs[N];
            reloadChunk(xs, xr, cache, cached, c);
            float ws[N], bs[N];
#pragma unroll
            for (int j = 0; j < N; ++j) {
                ws[j] = 1.f;
                bs[j] = 0.f;
            }
            if (w)
                loadChunk(ws, w, c);
            if (b)
                loadChunk(bs, b, c);
            Pack<T, N> out;
#pragma unroll
            for (int j = 0; j < N; ++j)
                out.v[j] = fromFloat<T>((xs[j] - mean) * rstd * ws[j] + bs[j]);
            yr[c] = out;
        }
    }
}

template <typename T, int N>
__global__ void rmsNormKernel(const T* __restrict__ x, const T* __restrict__ weight, T* __restrict__ y, int64_t rows,
                              int64_t cols, float eps, bool cached)
{
    __shared__ float scratch[32];
    float* cache = rowCache();
    const int64_t chunks = cols / N;
    const auto* w = reinterpret_cast<const Pack<T, N>*>(weight);
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const auto* xr = reinterpret_cast<const Pack<T, N>*>(x + r * cols);
        auto* yr = reinterpret_cast<Pack<T, N>*>(y + r * cols);

        float squares = 0.f;
        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
            float xs[N];
            loadChunk(xs, xr, c);
            if (cached)
                cacheChunk(xs, cache, c);
#pragma unroll
            for (int j = 0; j < N; ++j)
                squares += xs[j] * xs[j];
        }
        const float rstd = rsqrtf(blockSum(squares, scratch) / float(cols) + eps);

        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
            float xs[N];
            reloadChunk(xs, xr, cache, cached, c);
            float ws[N];
#pragma unroll
            for (int j = 0; j < N; ++j)
                ws[j] = 1.f;
            if (w)
                loadChunk(ws, w, c);
            Pack<T, N> out;
#pragma unroll
            for (int j = 0; j < N; ++j)
                out.v[j] = fromFloat<T>(xs[j] * rstd * ws[j]);
            yr[c] = out;
        }
    }
}

template <typename TI, typename TO, int N>
__global__ void softmaxKernel(const TI* __restrict__ x, TO* __restrict__ y, int64_t rows, int64_t cols, bool cached)
{
    __shared__ float scratchM[32];
    __shared__ float scratchS[32];
    float* cache = rowCache();
    const int64_t chunks = cols / N;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const auto* xr = reinterpret_cast<const Pack<TI, N>*>(x + r * cols);
        auto* yr = reinterpret_cast<Pack<TO, N>*>(y + r * cols);

        MaxSum st{-INFINITY, 0.f};
        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
            float xs[N];
            loadChunk(xs, xr, c);
            if (cached)
                cacheChunk(xs, cache, c);
#pragma unroll
            for (int j = 0; j < N; ++j)
                accumulate(st, xs[j]);
        }
        // A row of -inf only gives max -inf and sum 0: exp(nan) / 0 = NaN, as ATen gives.
        const MaxSum total = blockMaxSum(st, scratchM, scratchS);

        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
            float xs[N];
            reloadChunk(xs, xr, cache, cached, c);
            Pack<TO, N> out;
#pragma unroll
            for (int j = 0; j < N; ++j)
                out.v[j] = fromFloat<TO>(expf(xs[j] - total.m) / total.s);
            yr[c] = out;
        }
    }
}

// ---- Elementwise kernels ------------------------------------------------------------------------------------------

// As ATen's CUDA kernels compute them (in float).
struct GeluErf {
    __device__ __forceinline__ float operator()(float v) const
    {
        constexpr float kAlpha = 0.70710678118654752440f; // M_SQRT1_2
        return v * 0.5f * (1.f + erff(v * kAlpha));
    }
};

struct GeluTanh {
    __device__ __forceinline__ float operator()(float v) const
    {
        constexpr float kBeta = 0.79788456080286535588f; // M_SQRT2 * M_2_SQRTPI * 0.5 = sqrt(2/pi)
        constexpr float kKappa = 0.044715f;
        const float cube = v * v * v;
        const float inner = kBeta * (v + kKappa * cube);
        return 0.5f * v * (1.f + tanhf(inner));
    }
};

struct Silu {
    __device__ __forceinline__ float operator()(float v) const { return v / (1.f + expf(-v)); }
};

template <typename T, typename Op>
__global__ void unaryKernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, bool vectorized, Op op)
{
    constexpr int N = kVec<T>;
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    int64_t done = 0;
    if (vectorized) {
        const int64_t packs = n / N;
        const auto* xp = reinterpret_cast<const Pack<T, N>*>(x);
        auto* yp = reinterpret_cast<Pack<T, N>*>(y);
        for (int64_t i = tid; i < packs; i += stride) {
            const Pack<T, N> in = xp[i];
            Pack<T, N> out;
#pragma unroll
            for (int j = 0; j < N; ++j)
                out.v[j] = fromFloat<T>(op(toFloat(in.v[j])));
            yp[i] = out;
        }
        done = packs * N;
    }
    for (int64_t i = done + tid; i < n; i += stride)
        y[i] = fromFloat<T>(op(toFloat(x[i])));
}

// ---- Launch configuration ------------------------------------------------------------------------------------

constexpr int64_t kMaxCachedCols = 8192; // 32 KiB of shared memory per block
constexpr int64_t kMaxGridBlocks = int64_t(1) << 20;

struct RowLaunch {
    dim3 grid;
    dim3 block;
    std::size_t sharedBytes;
    bool cached;
};

RowLaunch rowLaunch(int64_t rows, int64_t cols, int n)
{
    const int64_t chunks = cols / n;
    const int64_t threads = std::clamp<int64_t>((chunks + 31) / 32 * 32, 32, 512);
    const bool cached = cols <= kMaxCachedCols;
    return {dim3(unsigned(std::min(rows, kMaxGridBlocks))), dim3(unsigned(threads)),
            cached ? std::size_t(cols) * sizeof(float) : 0, cached};
}

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
    if (vectorized) {
        const RowLaunch l = rowLaunch(rows, cols, N);
        layerNormKernel<T, TP, N>
            <<<l.grid, l.block, l.sharedBytes, stream>>>(xt, wt, bt, yt, rows, cols, eps, l.cached);
    } else {
        const RowLaunch l = rowLaunch(rows, cols, 1);
        layerNormKernel<T, TP, 1>
            <<<l.grid, l.block, l.sharedBytes, stream>>>(xt, wt, bt, yt, rows, cols, eps, l.cached);
    }
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
    if (vectorized) {
        const RowLaunch l = rowLaunch(rows, cols, N);
        rmsNormKernel<T, N><<<l.grid, l.block, l.sharedBytes, stream>>>(xt, wt, yt, rows, cols, eps, l.cached);
    } else {
        const RowLaunch l = rowLaunch(rows, cols, 1);
        rmsNormKernel<T, 1><<<l.grid, l.block, l.sharedBytes, stream>>>(xt, wt, yt, rows, cols, eps, l.cached);
    }
    return cudaGetLastError();
}

template <typename TI, typename TO>
cudaError_t launchSoftmax(const void* x, void* y, int64_t rows, int64_t cols, cudaStream_t stream)
{
    constexpr int N = kVec<TI>;
    const bool vectorized = cols % N == 0 && aligned(x, 16) && aligned(y, sizeof(TO) * N);
    const auto* xt = static_cast<const TI*>(x);
    auto* yt = static_cast<TO*>(y);
    if (vectorized) {
        const RowLaunch l = rowLaunch(rows, cols, N);
        softmaxKernel<TI, TO, N><<<l.grid, l.block, l.sharedBytes, stream>>>(xt, yt, rows, cols, l.cached);
    } else {
        const RowLaunch l = rowLaunch(rows, cols, 1);
        softmaxKernel<TI, TO, 1><<<l.grid, l.block, l.sharedBytes, stream>>>(xt, yt, rows, cols, l.cached);
    }
    return cudaGetLastError();
}

// The current device's SM count, asked once per device (so that nothing but launches happens on the stream
// path, CUDA graph capture included).
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

template <typename T, typename Op>
cudaError_t launchUnary(const void* x, void* y, int64_t n, Op op, cudaStream_t stream)
{
    constexpr int kThreads = 256;
    const bool vectorized = aligned(x, 16) && aligned(y, 16);
    const int64_t units = vectorized ? n / kVec<T> + n % kVec<T> : n;
    int sms = 0;
    if (const cudaError_t e = multiprocessorCount(sms); e != cudaSuccess)
        return e;
    const int64_t blocks = std::clamp<int64_t>((units + kThreads - 1) / kThreads, 1, int64_t(sms) * 16);
    unaryKernel<T, Op>
        <<<unsigned(blocks), kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, vectorized, op);
    return cudaGetLastError();
}

template <typename Op>
cudaError_t dispatchUnary(const void* x, void* y, int64_t n, DType type, Op op, cudaStream_t stream)
{
    switch (type) {
    case DType::Float32:
        return launchUnary<float>(x, y, n, op, stream);
    case DType::BFloat16:
        return launchUnary<__nv_bfloat16>(x, y, n, op, stream);
    case DType::Float16:
        return launchUnary<__half>(x, y, n, op, stream);
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
        return floatParams ? launchLayerNorm<__nv_bfloat16, float>(x, weight, bias, y, rows, cols, eps, stream)
                           : launchLayerNorm<__nv_bfloat16, __nv_bfloat16>(x, weight, bias, y, rows, cols, eps, stream);
    case DType::Float16:
        return floatParams ? launchLayerNorm<__half, float>(x, weight, bias, y, rows, cols, eps, stream)
                           : launchLayerNorm<__half, __half>(x, weight, bias, y, rows, cols, eps, stream);
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
        return launchRmsNorm<__nv_bfloat16>(x, weight, y, rows, cols, eps, stream);
    case DType::Float16:
        return launchRmsNorm<__half>(x, weight, y, rows, cols, eps, stream);
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
        return floatOut ? launchSoftmax<__nv_bfloat16, float>(x, y, rows, cols, stream)
                        : launchSoftmax<__nv_bfloat16, __nv_bfloat16>(x, y, rows, cols, stream);
    case DType::Float16:
        return floatOut ? launchSoftmax<__half, float>(x, y, rows, cols, stream)
                        : launchSoftmax<__half, __half>(x, y, rows, cols, stream);
    }
    return cudaErrorInvalidValue;
}

cudaError_t gelu(const void* x, void* y, int64_t n, GeluApproximation approximation, DType type, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    return approximation == GeluApproximation::Tanh ? dispatchUnary(x, y, n, type, GeluTanh{}, stream)
                                                    : dispatchUnary(x, y, n, type, GeluErf{}, stream);
}

cudaError_t silu(const void* x, void* y, int64_t n, DType type, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    return dispatchUnary(x, y, n, type, Silu{}, stream);
}

} // namespace kforge::cuda_kernels
