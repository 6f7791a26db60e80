// SPDX-License-Identifier: Apache-2.0
#pragma once
// Device code of the Cuda*Provider kernels, compiled twice: by nvcc into the engine (row_kernels.cu, the default
// variants) and at run time by NVRTC (runtime_kernels.cpp embeds this file's text) for the variants the CUDA
// autotuner tries and tuned plans name. So it includes nothing (NVRTC has no C++ library and no CUDA headers
// unless told where they are): its own 16-bit float types, PTX conversions, the built-in math functions.
//
// Template parameters of the row kernels: T the element type, N the elements per load (a Pack of N; 16 bytes at
// most, 32 for two loads), R the rows each block works on at once (its threads split into R groups of
// blockDim.x / R, a multiple of 32), C the row length when the variant is specialised for it (0: the `cols`
// argument), B the most threads a block of it is launched with (its __launch_bounds__: the compiler keeps each
// thread's registers within what B threads may share; an unbounded kernel launched with 1024 threads can need more
// and is refused, "too many resources requested for launch"). Accumulation is in float32. Rows may be kept, converted to float, in dynamic shared memory (R rows
// of `cols` floats, 16-byte aligned); each thread re-reads only the elements it wrote itself, so no barrier is
// needed for it.

namespace kforge_kernels {

using i64 = long long;

// ---- Types --------------------------------------------------------------------------------------------------

// bfloat16 and float16 storage (the bits of __nv_bfloat16 and __half); conversions round to nearest even, as
// __float2bfloat16_rn and __float2half_rn do.
struct alignas(2) Bf16 {
    unsigned short bits;
};
struct alignas(2) Half {
    unsigned short bits;
};

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(Bf16 v) { return __uint_as_float(unsigned(v.bits) << 16); }
__device__ __forceinline__ float toFloat(Half v)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
    return f;
}

template <typename T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) { return v; }
template <> __device__ __forceinline__ Bf16 fromFloat<Bf16>(float v)
{
    Bf16 r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
    return r;
}
template <> __device__ __forceinline__ Half fromFloat<Half>(float v)
{
    Half r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
    return r;
}

// N consecutive elements, loaded and stored as one.
template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

// Elements in 16 bytes: the default vector width.
template <typename T> constexpr int kVec = 16 / int(sizeof(T));

__device__ __forceinline__ float negativeInfinity() { return __int_as_float(0xff800000); }

// ---- Reductions over a row group (R groups of blockDim.x / R threads, each a whole number of warps) ----------

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float warpSum(float v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// The total over the calling thread's group, returned to each of its threads. `scratch` holds 32 floats; it is
// free again on return. Every thread of the block calls it.
template <int R> __device__ __forceinline__ float groupSum(float v, float* scratch)
{
    const int warp = threadIdx.x >> 5;
    const int warpsPerGroup = int(blockDim.x >> 5) / R;
    const int firstWarp = warp - warp % warpsPerGroup;
    v = warpSum(v);
    if ((threadIdx.x & 31) == 0)
        scratch[warp] = v;
    __syncthreads();
    float total = 0.f;
    for (int w = 0; w < warpsPerGroup; ++w)
        total += scratch[firstWarp + w];
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
    } else if (v != negativeInfinity()) { // v <= m, or NaN
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

template <int R> __device__ __forceinline__ MaxSum groupMaxSum(MaxSum st, float* scratchM, float* scratchS)
{
    const int warp = threadIdx.x >> 5;
    const int warpsPerGroup = int(blockDim.x >> 5) / R;
    const int firstWarp = warp - warp % warpsPerGroup;
    st = warpMaxSum(st);
    if ((threadIdx.x & 31) == 0) {
        scratchM[warp] = st.m;
        scratchS[warp] = st.s;
    }
    __syncthreads();
    MaxSum total{negativeInfinity(), 0.f};
    for (int w = 0; w < warpsPerGroup; ++w)
        total = merge(total, MaxSum{scratchM[firstWarp + w], scratchS[firstWarp + w]});
    __syncthreads();
    return total;
}

// ---- Row access -------------------------------------------------------------------------------------------------

// Chunk c of a row: elements c*N .. c*N+N-1, as floats.
template <typename T, int N> __device__ __forceinline__ void loadChunk(float (&xs)[N], const Pack<T, N>* row, i64 c)
{
    const Pack<T, N> p = row[c];
#pragma unroll
    for (int j = 0; j < N; ++j)
        xs[j] = toFloat(p.v[j]);
}

template <int N> __device__ __forceinline__ void cacheChunk(const float (&xs)[N], float* cache, i64 c)
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

template <int N> __device__ __forceinline__ void uncacheChunk(float (&xs)[N], const float* cache, i64 c)
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
                                            i64 c)
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

// Where a thread works: its group's row among the block's R rows, its index in the group, the group's size.
template <int R> struct RowGroup {
    int group;
    int thread;
    int threads;
    __device__ __forceinline__ RowGroup()
    {
        threads = int(blockDim.x) / R;
        group = int(threadIdx.x) / threads;
        thread = int(threadIdx.x) - group * threads;
    }
};

// ---- Row kernels (R rows per block at a time, grid-stride over rows) ----------------------------------------------

template <typename T, typename TP, int N, int R, int C, int B>
__global__ void __launch_bounds__(B) layerNormKernel(const T* __restrict__ x, const TP* __restrict__ weight, const TP* __restrict__ bias,
                                T* __restrict__ y, i64 rows, i64 colsArgument, float eps, bool cached)
{
    __shared__ float scratch[32];
    const i64 cols = C > 0 ? i64(C) : colsArgument;
    const RowGroup<R> g;
    float* cache = rowCache() + g.group * cols;
    const i64 chunks = cols / N;
    const auto* w = reinterpret_cast<const Pack<TP, N>*>(weight);
    const auto* b = reinterpret_cast<const Pack<TP, N>*>(bias);
    for (i64 first = i64(blockIdx.x) * R; first < rows; first += i64(gridDim.x) * R) {
        const i64 r = first + g.group;
        const i64 mine = r < rows ? chunks : 0; // a group past the last row only joins the reductions
        const auto* xr = reinterpret_cast<const Pack<T, N>*>(x + r * cols);
        auto* yr = reinterpret_cast<Pack<T, N>*>(y + r * cols);

        float sum = 0.f;
        for (i64 c = g.thread; c < mine; c += g.threads) {
            float xs[N];
            loadChunk(xs, xr, c);
            if (cached)
                cacheChunk(xs, cache, c);
#pragma unroll
            for (int j = 0; j < N; ++j)
                sum += xs[j];
        }
        const float mean = groupSum<R>(sum, scratch) / float(cols);

        float squares = 0.f;
        for (i64 c = g.thread; c < mine; c += g.threads) {
            float xs[N];
            reloadChunk(xs, xr, cache, cached, c);
#pragma unroll
            for (int j = 0; j < N; ++j) {
                const float d = xs[j] - mean;
                squares += d * d;
            }
        }
        const float var = groupSum<R>(squares, scratch) / float(cols);
        const float rstd = rsqrtf(var + eps);

        for (i64 c = g.thread; c < mine; c += g.threads) {
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

template <typename T, int N, int R, int C, int B>
__global__ void __launch_bounds__(B) rmsNormKernel(const T* __restrict__ x, const T* __restrict__ weight, T* __restrict__ y, i64 rows,
                              i64 colsArgument, float eps, bool cached)
{
    __shared__ float scratch[32];
    const i64 cols = C > 0 ? i64(C) : colsArgument;
    const RowGroup<R> g;
    float* cache = rowCache() + g.group * cols;
    const i64 chunks = cols / N;
    const auto* w = reinterpret_cast<const Pack<T, N>*>(weight);
    for (i64 first = i64(blockIdx.x) * R; first < rows; first += i64(gridDim.x) * R) {
        const i64 r = first + g.group;
        const i64 mine = r < rows ? chunks : 0;
        const auto* xr = reinterpret_cast<const Pack<T, N>*>(x + r * cols);
        auto* yr = reinterpret_cast<Pack<T, N>*>(y + r * cols);

        float squares = 0.f;
        for (i64 c = g.thread; c < mine; c += g.threads) {
            float xs[N];
            loadChunk(xs, xr, c);
            if (cached)
                cacheChunk(xs, cache, c);
#pragma unroll
            for (int j = 0; j < N; ++j)
                squares += xs[j] * xs[j];
        }
        const float rstd = rsqrtf(groupSum<R>(squares, scratch) / float(cols) + eps);

        for (i64 c = g.thread; c < mine; c += g.threads) {
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

template <typename TI, typename TO, int N, int R, int C, int B>
__global__ void __launch_bounds__(B) softmaxKernel(const TI* __restrict__ x, TO* __restrict__ y, i64 rows, i64 colsArgument, bool cached)
{
    __shared__ float scratchM[32];
    __shared__ float scratchS[32];
    const i64 cols = C > 0 ? i64(C) : colsArgument;
    const RowGroup<R> g;
    float* cache = rowCache() + g.group * cols;
    const i64 chunks = cols / N;
    for (i64 first = i64(blockIdx.x) * R; first < rows; first += i64(gridDim.x) * R) {
        const i64 r = first + g.group;
        const i64 mine = r < rows ? chunks : 0;
        const auto* xr = reinterpret_cast<const Pack<TI, N>*>(x + r * cols);
        auto* yr = reinterpret_cast<Pack<TO, N>*>(y + r * cols);

        MaxSum st{negativeInfinity(), 0.f};
        for (i64 c = g.thread; c < mine; c += g.threads) {
            float xs[N];
            loadChunk(xs, xr, c);
            if (cached)
                cacheChunk(xs, cache, c);
#pragma unroll
            for (int j = 0; j < N; ++j)
                accumulate(st, xs[j]);
        }
        // A row of -inf only gives max -inf and sum 0: exp(nan) / 0 = NaN, as ATen gives.
        const MaxSum total = groupMaxSum<R>(st, scratchM, scratchS);

        for (i64 c = g.thread; c < mine; c += g.threads) {
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

// Grid-stride over packs of N when `vectorized` (the pointers aligned for a Pack<T, N>), then the tail one by one.
template <typename T, typename Op, int N, int B>
__global__ void __launch_bounds__(B) unaryKernel(const T* __restrict__ x, T* __restrict__ y, i64 n, bool vectorized)
{
    const Op op;
    const i64 stride = i64(gridDim.x) * blockDim.x;
    const i64 tid = i64(blockIdx.x) * blockDim.x + threadIdx.x;
    i64 done = 0;
    if (vectorized) {
        const i64 packs = n / N;
        const auto* xp = reinterpret_cast<const Pack<T, N>*>(x);
        auto* yp = reinterpret_cast<Pack<T, N>*>(y);
        for (i64 i = tid; i < packs; i += stride) {
            const Pack<T, N> in = xp[i];
            Pack<T, N> out;
#pragma unroll
            for (int j = 0; j < N; ++j)
                out.v[j] = fromFloat<T>(op(toFloat(in.v[j])));
            yp[i] = out;
        }
        done = packs * N;
    }
    for (i64 i = done + tid; i < n; i += stride)
        y[i] = fromFloat<T>(op(toFloat(x[i])));
}

} // namespace kforge_kernels
