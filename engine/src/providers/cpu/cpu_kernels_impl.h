// SPDX-License-Identifier: Apache-2.0
// The Cpu*Provider kernels, once per instruction set. Not a normal header: cpu_kernels_{default,avx2,avx512}.cpp
// each include it exactly once, after <ATen/cpu/vec/vec.h> for their ISA and after defining
//   KFORGE_CPU_ISA_NS       the namespace of this copy (isa_default, isa_avx2, isa_avx512)
//   KFORGE_CPU_ISA          its Isa enumerator
//   KFORGE_CPU_ISA_NAME     "DEFAULT", "AVX2", "AVX512"
//   KFORGE_CPU_TABLE_FN     the accessor it defines (defaultKernels, avx2Kernels, avx512Kernels)
// Everything but the accessor has internal linkage, so the copies never meet at link time.
//
// Arithmetic is in float32 (bfloat16 is widened on load and rounded, nearest even, once per output element on
// store, like ATen's CPU kernels for these ops); only layer_norm's per-row merge of its lane statistics uses
// double.
#include "providers/cpu/cpu_kernels.h"

#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

namespace kforge::providers::cpu {
namespace KFORGE_CPU_ISA_NS {
namespace {

using fVec = at::vec::Vectorized<float>;
using bf16 = c10::BFloat16;
constexpr std::int64_t W = fVec::size(); // float lanes
constexpr std::int64_t kStep = 2 * W;    // elements per load2/store2: one Vectorized<BFloat16>
// Work per parallel chunk, in elements: ATen's at::internal::GRAIN_SIZE unless the provider's tuning says otherwise.
std::int64_t grainElements() { return tuning().grainElements; }

std::int64_t rowGrain(std::int64_t elementsPerRow)
{
    return std::max<std::int64_t>(1, grainElements() / std::max<std::int64_t>(1, elementsPerRow));
}

// Loads and stores of float vectors from float or bfloat16 memory. The partial forms take 0 <= n < width
// elements; lanes past n load as 0 and are not stored.
template <typename T> struct Io;

template <> struct Io<float> {
    static void load2(const float* p, fVec& a, fVec& b)
    {
        a = fVec::loadu(p);
        b = fVec::loadu(p + W);
    }
    static void load2(const float* p, std::int64_t n, fVec& a, fVec& b)
    {
        if (n > W) {
            a = fVec::loadu(p);
            b = fVec::loadu(p + W, n - W);
        } else {
            a = fVec::loadu(p, n);
            b = fVec(0.0f);
        }
    }
    static void store2(float* p, const fVec& a, const fVec& b)
    {
        a.store(p);
        b.store(p + W);
    }
    static void store2(float* p, std::int64_t n, const fVec& a, const fVec& b)
    {
        if (n > W) {
            a.store(p);
            b.store(p + W, n - W);
        } else if (n > 0) {
            a.store(p, n);
        }
    }
    static fVec load1(const float* p) { return fVec::loadu(p); }
    static fVec load1(const float* p, std::int64_t n) { return fVec::loadu(p, n); }
    static void store1(float* p, const fVec& a) { a.store(p); }
    static void store1(float* p, std::int64_t n, const fVec& a) { a.store(p, n); }
};

template <> struct Io<bf16> {
    using bVec = at::vec::Vectorized<bf16>;
    static_assert(bVec::size() == kStep, "one Vectorized<BFloat16> widens to two Vectorized<float>");

    static void load2(const bf16* p, fVec& a, fVec& b) { at::vec::load_fp32_from_bf16(p, a, b); }
    static void load2(const bf16* p, std::int64_t n, fVec& a, fVec& b)
    {
        std::tie(a, b) = at::vec::convert_bfloat16_float(bVec::loadu(p, static_cast<int16_t>(n)));
    }
    static void store2(bf16* p, const fVec& a, const fVec& b) { at::vec::convert_float_bfloat16(a, b).store(p); }
    static void store2(bf16* p, std::int64_t n, const fVec& a, const fVec& b)
    {
        if (n > 0)
            at::vec::convert_float_bfloat16(a, b).store(p, static_cast<int>(n));
    }
    static fVec load1(const bf16* p)
    {
        fVec a;
        at::vec::load_fp32_from_bf16(p, a);
        return a;
    }
    static fVec load1(const bf16* p, std::int64_t n)
    {
        return std::get<0>(at::vec::convert_bfloat16_float(bVec::loadu(p, static_cast<int16_t>(n))));
    }
    static void store1(bf16* p, const fVec& a) { at::vec::convert_float_bfloat16(a, a).store(p, static_cast<int>(W)); }
    static void store1(bf16* p, std::int64_t n, const fVec& a)
    {
        if (n > 0)
            at::vec::convert_float_bfloat16(a, a).store(p, static_cast<int>(n));
    }
};

// Horizontal reductions by ATen's shuffle trees (log2 W steps), not a store and a scalar loop: per row they cost as
// much as the row's own work on short rows (softmax over 49 keys). hmax propagates NaN, as at::vec::maximum does.
float hsum(const fVec& v)
{
    return at::vec::vec_reduce_all<float>([](const fVec& a, const fVec& b) { return a + b; }, v);
}

float hmax(const fVec& v)
{
    return at::vec::vec_reduce_all<float>([](const fVec& a, const fVec& b) { return at::vec::maximum(a, b); }, v);
}

// ---------------------------------------------------------------------------------------------------------
// Element-wise: y = op(x) on n contiguous elements, 2W at a time, the tail as one partial step.

template <typename T, typename Op> void elementwise(const T* x, T* y, std::int64_t n, const Op& op)
{
    parallelFor(0, n, grainElements(), [&](std::int64_t begin, std::int64_t end) {
        std::int64_t i = begin;
        for (; i + kStep <= end; i += kStep) {
            fVec a, b;
            Io<T>::load2(x + i, a, b);
            Io<T>::store2(y + i, op(a), op(b));
        }
        if (i < end) {
            fVec a, b;
            Io<T>::load2(x + i, end - i, a, b);
            Io<T>::store2(y + i, end - i, op(a), op(b));
        }
    });
}

// The element-wise math. ATen's Vectorized<float>::erf / tanh / exp call Sleef (an out-of-line call per vector
// that dominates these kernels); ours use ATen's inlined exp_u20 polynomial instead (error <= 20 ulp, i.e. a
// relative 2.4e-6 on exp, which moves GELU/SiLU results by at most ~1e-6 relative: far inside float32
// tolerances and invisible after bfloat16 rounding). On the DEFAULT build exp_u20 is std::exp.

// erf on [0, 4) in 16 pieces of width 1/4, each a degree-5 polynomial in u = z - (piece centre), interpolated at
// Chebyshev nodes (numpy.polyfit through math.erf at the nodes, in double, rounded to float): |error| <= 6e-8 over
// [0, 4) in float arithmetic (the Abramowitz-Stegun 7.1.26 form that Vectorized<float>::erf uses: 1.4e-7), and
// erf(z >= 4) rounds to 1 in float. Six table lookups and five FMAs instead of an exp and a division: what oneDNN's
// AVX-512 gelu_erf does, and why ATen's exact GELU (oneDNN) was faster than the A&S form on large tensors.
alignas(64) constexpr float kErfPieces[6][16] = {
    {0.140316203f, 0.404116899f, 0.623240888f, 0.784075081f, 0.888388216f, 0.948170066f, 0.978443742f, 0.99199003f,
     0.997345984f, 0.999217033f, 0.999794602f, 0.999952137f, 0.999990106f, 0.999998212f, 0.999999702f, 0.99999994f},
    {1.11088526f, 0.980352819f, 0.763499558f, 0.524745047f, 0.318273962f, 0.170359775f, 0.0804722607f, 0.0335458294f,
     0.0123408204f, 0.004006478f, 0.00114787521f, 0.000290228345f, 6.47587149e-05f, 1.27517533e-05f, 2.21592404e-06f,
     3.39823345e-07f},
    {-0.138857558f, -0.367625445f, -0.477181554f, -0.459150493f, -0.35806033f, -0.234247714f, -0.130769402f,
     -0.0628989935f, -0.0262239985f, -0.00951495953f, -0.00301286369f, -0.000834249309f, -0.000202308423f,
     -4.30168475e-05f, -8.02722025e-06f, -1.31555453e-06f},
    {-0.358720094f, -0.234875441f, -0.0556737408f, 0.0929210559f, 0.162451014f, 0.157937899f, 0.114841461f,
     0.0674417689f, 0.0330376625f, 0.0137305176f, 0.0048903334f, 0.00150246348f, 0.00039998311f, 9.2568851e-05f,
     1.86693815e-05f, 3.28737428e-06f},
    {0.0681782365f, 0.165413633f, 0.175493583f, 0.112152815f, 0.0283349641f, -0.0299829599f, -0.0493812561f,
     -0.0421630777f, -0.0264029484f, -0.0132059548f, -0.00546693942f, -0.00190853619f, -0.000568220916f,
     -0.000145342128f, -3.21033694e-05f, -6.14637884e-06f},
    {0.10362111f, 0.0453474596f, -0.027088888f, -0.0667813793f, -0.0610986724f, -0.0306385867f, -0.0022792879f,
     0.011347224f, 0.0124515528f, 0.00836014375f, 0.00423377566f, 0.00172564492f, 0.000583217712f, 0.00016617775f,
     4.0335286e-05f, 8.39861332e-06f}};

// Each lane's entry of a 16-float table, the lane's piece index given as a whole float in [0, 15].
class PieceLookup {
public:
    explicit PieceLookup(const fVec& piece)
    {
#if defined(CPU_CAPABILITY_AVX512)
        m_index = _mm512_cvttps_epi32(piece);
#elif defined(CPU_CAPABILITY_AVX2)
        m_index = _mm256_cvttps_epi32(piece);
        m_upper = _mm256_castsi256_ps(_mm256_cmpgt_epi32(m_index, _mm256_set1_epi32(7)));
#else
        float lanes[W];
        piece.store(lanes);
        for (std::int64_t i = 0; i < W; ++i)
            m_index[i] = lanes[i] >= 0.0f && lanes[i] <= 15.0f ? static_cast<int>(lanes[i]) : 0; // NaN: any entry
#endif
    }
    fVec operator()(const float* table) const
    {
#if defined(CPU_CAPABILITY_AVX512)
        return _mm512_permutexvar_ps(m_index, _mm512_load_ps(table));
#elif defined(CPU_CAPABILITY_AVX2)
        const __m256 low = _mm256_permutevar8x32_ps(_mm256_load_ps(table), m_index);
        const __m256 high = _mm256_permutevar8x32_ps(_mm256_load_ps(table + 8), m_index);
        return _mm256_blendv_ps(low, high, m_upper);
#else
        float lanes[W];
        for (std::int64_t i = 0; i < W; ++i)
            lanes[i] = table[m_index[i]];
        return fVec::loadu(lanes);
#endif
    }

private:
#if defined(CPU_CAPABILITY_AVX512)
    __m512i m_index;
#elif defined(CPU_CAPABILITY_AVX2)
    __m256i m_index;
    __m256 m_upper;
#else
    int m_index[W];
#endif
};

// GELU, exact form: x/2 (1 + erf(x / sqrt 2)), erf from the pieces above.
struct GeluErf {
    fVec operator()(const fVec& x) const
    {
        const fVec z = at::vec::minimum(x.abs() * fVec(static_cast<float>(M_SQRT1_2)), fVec(3.999f));
        const fVec piece = (z * fVec(4.0f)).floor();
        const fVec u = at::vec::fmadd(piece, fVec(-0.25f), z - fVec(0.125f)); // z - (piece + 1/2) / 4
        const PieceLookup coefficient(piece);                                 // per lane, of its piece
        fVec erf = at::vec::fmadd(coefficient(kErfPieces[5]), u, coefficient(kErfPieces[4]));
        erf = at::vec::fmadd(erf, u, coefficient(kErfPieces[3]));
        erf = at::vec::fmadd(erf, u, coefficient(kErfPieces[2]));
        erf = at::vec::fmadd(erf, u, coefficient(kErfPieces[1]));
        erf = at::vec::minimum(at::vec::fmadd(erf, u, coefficient(kErfPieces[0])), fVec(1.0f)); // erf(|x| / sqrt 2)
        const fVec half = x * fVec(0.5f);
        return at::vec::fmadd(half, erf ^ (x & fVec(-0.0f)), half); // sign(x) erf, so x/2 (1 -+ erf) below zero
    }
};

// GELU, tanh approximation: x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed through the identity
// (1 + tanh(u)) / 2 = 1 / (1 + exp(-2u)): one exp and one division per element.
struct GeluTanh {
    fVec operator()(const fVec& x) const
    {
        const fVec kMinusTwoBeta(static_cast<float>(-2.0 * M_SQRT2 * M_2_SQRTPI * 0.5)), kKappa(0.044715f), kOne(1.0f);
        const fVec u = at::vec::fmadd(kKappa * x * x, x, x); // x + kappa x^3
        return x / (kOne + (kMinusTwoBeta * u).exp_u20());
    }
};

// SiLU: x / (1 + exp(-x)).
struct Silu {
    fVec operator()(const fVec& x) const { return x / (fVec(1.0f) + x.neg().exp_u20()); }
};

template <typename T> void geluT(const void* x, void* y, std::int64_t n, bool tanh)
{
    if (tanh)
        elementwise(static_cast<const T*>(x), static_cast<T*>(y), n, GeluTanh{});
    else
        elementwise(static_cast<const T*>(x), static_cast<T*>(y), n, GeluErf{});
}

void gelu(c10::ScalarType dtype, const void* x, void* y, std::int64_t n, bool tanh)
{
    if (dtype == c10::ScalarType::BFloat16)
        geluT<bf16>(x, y, n, tanh);
    else
        geluT<float>(x, y, n, tanh);
}

void silu(c10::ScalarType dtype, const void* x, void* y, std::int64_t n)
{
    if (dtype == c10::ScalarType::BFloat16)
        elementwise(static_cast<const bf16*>(x), static_cast<bf16*>(y), n, Silu{});
    else
        elementwise(static_cast<const float*>(x), static_cast<float*>(y), n, Silu{});
}

// ---------------------------------------------------------------------------------------------------------
// layer_norm: two passes over the row (it stays in L1), each with 4 independent accumulator vectors: the sum, then
// the sum of squared deviations from that mean; then one normalize pass. Squared deviations from the row's own
// mean keep a large common offset from costing digits, and the lane totals are added in double. (A one-pass
// Welford update per vector needs a division per step and a scalar merge of 4W lane states per row, which cost
// more than the extra read: 1.2x ATen's time on [8,512,768] float32.)
struct Moments {
    double mean = 0.0;
    double m2 = 0.0; // sum of squared deviations
};

double hsumDouble(const fVec& v)
{
    alignas(64) float lanes[W];
    v.store(lanes);
    double s = 0.0;
    for (std::int64_t l = 0; l < W; ++l)
        s += lanes[l];
    return s;
}

// Sum over the row of f(v) for each vector v of elements (lanes past the row's end excluded).
template <typename T, typename F> double rowSum(const T* x, std::int64_t n, const F& f)
{
    fVec s0(0.0f), s1(0.0f), s2(0.0f), s3(0.0f);
    std::int64_t i = 0;
    for (; i + 4 * W <= n; i += 4 * W) {
        fVec v0, v1, v2, v3;
        Io<T>::load2(x + i, v0, v1);
        Io<T>::load2(x + i + kStep, v2, v3);
        s0 = s0 + f(v0);
        s1 = s1 + f(v1);
        s2 = s2 + f(v2);
        s3 = s3 + f(v3);
    }
    for (; i < n; i += kStep) {
        const std::int64_t count = std::min(kStep, n - i);
        fVec a, b;
        Io<T>::load2(x + i, count, a, b);
        s0 = s0 + fVec::set(fVec(0.0f), f(a), std::min(count, W));
        s1 = s1 + fVec::set(fVec(0.0f), f(b), std::max<std::int64_t>(count - W, 0));
    }
    return hsumDouble((s0 + s1) + (s2 + s3));
}

template <typename T> Moments rowMoments(const T* x, std::int64_t n)
{
    Moments m;
    m.mean = rowSum(x, n, [](const fVec& v) { return v; }) / static_cast<double>(n);
    const fVec meanV(static_cast<float>(m.mean));
    m.m2 = rowSum(x, n, [&](const fVec& v) {
        const fVec d = v - meanV;
        return d * d;
    });
    return m;
}

template <typename T>
void layerNormRow(const T* x, const float* weight, const float* bias, T* y, std::int64_t n, float eps)
{
    const Moments m = rowMoments(x, n);
    const float var = static_cast<float>(std::max(m.m2 / static_cast<double>(n), 0.0));
    const float rstd = 1.0f / std::sqrt(var + eps);
    const fVec meanV(static_cast<float>(m.mean)), rstdV(rstd);
    auto normalize = [&](fVec v, std::int64_t at) {
        v = (v - meanV) * rstdV;
        if (weight)
            v = v * fVec::loadu(weight + at);
        if (bias)
            v = v + fVec::loadu(bias + at);
        return v;
    };
    auto normalizePartial = [&](fVec v, std::int64_t at, std::int64_t count) {
        v = (v - meanV) * rstdV;
        if (weight)
            v = v * fVec::loadu(weight + at, count);
        if (bias)
            v = v + fVec::loadu(bias + at, count);
        return v;
    };
    std::int64_t i = 0;
    for (; i + kStep <= n; i += kStep) {
        fVec a, b;
        Io<T>::load2(x + i, a, b);
        Io<T>::store2(y + i, normalize(a, i), normalize(b, i + W));
    }
    if (i < n) {
        const std::int64_t rest = n - i;
        fVec a, b;
        Io<T>::load2(x + i, rest, a, b);
        const fVec na = normalizePartial(a, i, std::min(rest, W));
        const fVec nb = rest > W ? normalizePartial(b, i + W, rest - W) : fVec(0.0f);
        Io<T>::store2(y + i, rest, na, nb);
    }
}

template <typename T>
void layerNormT(const void* xv, const float* weight, const float* bias, void* yv, std::int64_t rows, std::int64_t cols,
                float eps)
{
    const T* x = static_cast<const T*>(xv);
    T* y = static_cast<T*>(yv);
    parallelFor(0, rows, rowGrain(cols), [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r)
            layerNormRow(x + r * cols, weight, bias, y + r * cols, cols, eps);
    });
}

void layerNorm(c10::ScalarType dtype, const void* x, const float* weight, const float* bias, void* y, std::int64_t rows,
               std::int64_t cols, float eps)
{
    if (dtype == c10::ScalarType::BFloat16)
        layerNormT<bf16>(x, weight, bias, y, rows, cols, eps);
    else
        layerNormT<float>(x, weight, bias, y, rows, cols, eps);
}

// ---------------------------------------------------------------------------------------------------------
// rms_norm: sum of squares with 4 accumulator vectors, then y = x * rsqrt(mean + eps) * weight.

template <typename T> void rmsNormRow(const T* x, const float* weight, T* y, std::int64_t n, float eps)
{
    fVec acc0(0.0f), acc1(0.0f), acc2(0.0f), acc3(0.0f);
    std::int64_t i = 0;
    for (; i + 4 * W <= n; i += 4 * W) {
        fVec v0, v1, v2, v3;
        Io<T>::load2(x + i, v0, v1);
        Io<T>::load2(x + i + kStep, v2, v3);
        acc0 = at::vec::fmadd(v0, v0, acc0);
        acc1 = at::vec::fmadd(v1, v1, acc1);
        acc2 = at::vec::fmadd(v2, v2, acc2);
        acc3 = at::vec::fmadd(v3, v3, acc3);
    }
    float sum = hsum((acc0 + acc1) + (acc2 + acc3));
    for (; i < n; ++i) {
        const float v = static_cast<float>(x[i]);
        sum += v * v;
    }
    const float r = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
    const fVec rV(r);
    i = 0;
    for (; i + kStep <= n; i += kStep) {
        fVec a, b;
        Io<T>::load2(x + i, a, b);
        a = a * rV;
        b = b * rV;
        if (weight) {
            a = a * fVec::loadu(weight + i);
            b = b * fVec::loadu(weight + i + W);
        }
        Io<T>::store2(y + i, a, b);
    }
    if (i < n) {
        const std::int64_t rest = n - i;
        fVec a, b;
        Io<T>::load2(x + i, rest, a, b);
        a = a * rV;
        b = b * rV;
        if (weight) {
            a = a * fVec::loadu(weight + i, std::min(rest, W));
            if (rest > W)
                b = b * fVec::loadu(weight + i + W, rest - W);
        }
        Io<T>::store2(y + i, rest, a, b);
    }
}

template <typename T>
void rmsNormT(const void* xv, const float* weight, void* yv, std::int64_t rows, std::int64_t cols, float eps)
{
    const T* x = static_cast<const T*>(xv);
    T* y = static_cast<T*>(yv);
    parallelFor(0, rows, rowGrain(cols), [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r)
            rmsNormRow(x + r * cols, weight, y + r * cols, cols, eps);
    });
}

void rmsNorm(c10::ScalarType dtype, const void* x, const float* weight, void* y, std::int64_t rows, std::int64_t cols,
             float eps)
{
    if (dtype == c10::ScalarType::BFloat16)
        rmsNormT<bf16>(x, weight, y, rows, cols, eps);
    else
        rmsNormT<float>(x, weight, y, rows, cols, eps);
}

// ---------------------------------------------------------------------------------------------------------
// softmax, online: pass 1 reads x once, keeping per lane the running max m and the running sum s of
// exp(x - m). Per block of values it takes the block max, and if that raises m it rescales s by
// exp(m_old - m_new) (one exp per block, not per element, and none when no lane's max rose); it also stores
// e = exp(x - m_block) and the block's reference max. Pass 2 turns each e into exp(x - M) / S with one
// per-block factor exp(m_block - M) / S, where M is the row max and S the row sum: no exp per element in
// pass 2.
//
// -inf values (masks) are handled: a lane that has seen only -inf uses reference 0 (its e are exp(-inf) = 0
// and its s stays 0), and factors are exp(min(m_block - M, 0)) so such lanes never form 0 * inf. A row
// that is all -inf gives NaN, as ATen's softmax does.

// Functions, not namespace-scope constants: a vector constant would be a dynamic initializer compiled for this
// ISA and run at load time, before kernels() has checked that the CPU supports it.
fVec negInf() { return fVec(-std::numeric_limits<float>::infinity()); }
fVec zero() { return fVec(0.0f); }

// max with -inf replaced by 0: the reference used for exp(x - ref).
fVec safeRef(const fVec& m) { return fVec::blendv(m, zero(), m == negInf()); }

// Whether any lane of mNew differs from m (NaN lanes count as different). When none does, the rescale factor
// exp(m - ref) is exactly 1 for every lane (or multiplies a sum that is still 0), so it can be skipped: after the
// first blocks of a row this is the common case, and it saves the per-block exp.
bool maxRose(const fVec& mNew, const fVec& m)
{
    constexpr int kAllLanes = static_cast<int>((std::int64_t{1} << W) - 1);
    return (mNew != m).zero_mask() != kAllLanes;
}

// Exps: ATen's inlined exp_u20 (see the element-wise section), which needs finite or -inf arguments, for the
// elements and the per-block factors alike (an out-of-line Sleef call per block factor cost bfloat16 rows of 512
// a third of ATen's time); a row whose max is NaN or +inf (x - max is then NaN) is redone with Sleef's exp, which
// propagates the NaN as ATen's softmax does.
struct FastExp {
    fVec operator()(const fVec& v) const { return v.exp_u20(); }
};
struct ExactExp {
    fVec operator()(const fVec& v) const { return v.exp(); }
};

// Some lane of m is NaN or +inf.
bool anyNanOrPosInf(const fVec& m)
{
    constexpr int kAllLanes = static_cast<int>((std::int64_t{1} << W) - 1);
    const fVec bad = (m != m) | (m == fVec(std::numeric_limits<float>::infinity()));
    return bad.zero_mask() != kAllLanes;
}

// count in (0, kStep]: two vectors, lanes past count set to -inf (they add exp(-inf) = 0).
template <typename T> void loadPadded(const T* p, std::int64_t count, fVec& a, fVec& b)
{
    if (count == kStep) {
        Io<T>::load2(p, a, b);
        return;
    }
    Io<T>::load2(p, count, a, b);
    a = fVec::set(negInf(), a, std::min(count, W));
    b = fVec::set(negInf(), b, std::max<std::int64_t>(count - W, 0));
}

// Rows along the last dimension (inner == 1): lane-wise state across the row, blocks of kSoftmaxBlock elements
// (the block max is taken first, from a block small enough to stay in L1, then its exps).
constexpr std::int64_t kSoftmaxBlock = 4 * kStep;

// Pass 1 over one row: the lane states (running max m, running sum s), e and the block references.
template <typename Exp, typename Ti>
void softmaxRowPass1(const Ti* x, std::int64_t n, float* e, float* blockRef, fVec& m, fVec& s)
{
    const Exp exp;
    m = negInf();
    s = zero();
    std::int64_t block = 0;
    for (std::int64_t i = 0; i < n; i += kSoftmaxBlock, ++block) {
        const std::int64_t len = std::min(kSoftmaxBlock, n - i);
        // The block in float into e (one conversion per element), with its max; then the exps from e (in L1).
        fVec blockMax = negInf();
        for (std::int64_t j = 0; j < len; j += kStep) {
            const std::int64_t count = std::min(kStep, len - j);
            fVec a, b;
            loadPadded(x + i + j, count, a, b);
            Io<float>::store2(e + i + j, count, a, b);
            blockMax = at::vec::maximum(blockMax, at::vec::maximum(a, b));
        }
        const fVec mNew = at::vec::maximum(m, blockMax);
        const fVec ref = safeRef(mNew);
        if (maxRose(mNew, m))
            s = s * exp(m - ref); // m - ref is <= 0 or -inf (a lane's first finite block) while the row is finite
        fVec sum = zero();
        for (std::int64_t j = 0; j < len; j += kStep) {
            const std::int64_t count = std::min(kStep, len - j);
            fVec a, b;
            loadPadded(e + i + j, count, a, b);
            const fVec ea = exp(a - ref);
            const fVec eb = exp(b - ref);
            sum = sum + ea;
            sum = sum + eb;
            Io<float>::store2(e + i + j, count, ea, eb);
        }
        s = s + sum;
        m = mNew;
        ref.store(blockRef + block * W);
    }
}

// Pass 2: e * exp(m_block - M) / S. The factors' arguments are finite and <= 0 unless the row holds NaN or +inf.
template <typename Exp, typename To>
void softmaxRowPass2(To* y, std::int64_t n, const float* e, const float* blockRef, const fVec& m, const fVec& s)
{
    const Exp exp;
    const float rowMax = hmax(m);
    const fVec rowMaxV(rowMax);
    const float rowSum = hsum(s * exp(at::vec::minimum(safeRef(m) - rowMaxV, zero())));
    const fVec invSum(1.0f / rowSum);
    std::int64_t block = 0;
    for (std::int64_t i = 0; i < n; i += kSoftmaxBlock, ++block) {
        const std::int64_t len = std::min(kSoftmaxBlock, n - i);
        const fVec factor = exp(at::vec::minimum(fVec::loadu(blockRef + block * W) - rowMaxV, zero())) * invSum;
        for (std::int64_t j = 0; j < len; j += kStep) {
            const std::int64_t count = std::min(kStep, len - j);
            fVec a, b;
            if (count == kStep) {
                Io<float>::load2(e + i + j, a, b);
                Io<To>::store2(y + i + j, a * factor, b * factor);
            } else {
                Io<float>::load2(e + i + j, count, a, b);
                Io<To>::store2(y + i + j, count, a * factor, b * factor);
            }
        }
    }
}

template <typename Ti, typename To>
void softmaxLastDimRow(const Ti* x, To* y, std::int64_t n, float* e, float* blockRef)
{
    fVec m, s;
    softmaxRowPass1<FastExp>(x, n, e, blockRef, m, s);
    if (!anyNanOrPosInf(m)) {
        softmaxRowPass2<FastExp>(y, n, e, blockRef, m, s);
        return;
    }
    softmaxRowPass1<ExactExp>(x, n, e, blockRef, m, s);
    softmaxRowPass2<ExactExp>(y, n, e, blockRef, m, s);
}

// A row short enough to stay in L1 as floats: the classic three passes, without the online blocks' bookkeeping
// (block maxima, rescales, per-block factors), which dominates short rows: attention over 7x7 windows (swin_t,
// rows of 49) took 2x ATen's time with it. The row into e with its max; e = exp(e - max) with the sum; y = e / sum.
constexpr std::int64_t kShortRow = 1024;

// e = exp(e - max), and y = e / sum.
template <typename Exp, typename To> void softmaxShortRowExp(To* y, std::int64_t n, float* e, const fVec& rowMax)
{
    const Exp exp;
    fVec sA = zero(), sB = zero();
    for (std::int64_t i = 0; i < n; i += kStep) {
        const std::int64_t count = std::min(kStep, n - i);
        fVec a, b;
        loadPadded(e + i, count, a, b);
        a = exp(a - rowMax);
        b = exp(b - rowMax);
        Io<float>::store2(e + i, count, a, b);
        sA = sA + a;
        sB = sB + b;
    }
    const fVec invSum(1.0f / hsum(sA + sB));
    for (std::int64_t i = 0; i < n; i += kStep) {
        const std::int64_t count = std::min(kStep, n - i);
        fVec a, b;
        Io<float>::load2(e + i, count, a, b);
        Io<To>::store2(y + i, count, a * invSum, b * invSum);
    }
}

template <typename Ti, typename To> void softmaxShortRow(const Ti* x, To* y, std::int64_t n, float* e)
{
    fVec mA = negInf(), mB = negInf();
    for (std::int64_t i = 0; i < n; i += kStep) {
        const std::int64_t count = std::min(kStep, n - i);
        fVec a, b;
        loadPadded(x + i, count, a, b);
        Io<float>::store2(e + i, count, a, b);
        mA = at::vec::maximum(mA, a);
        mB = at::vec::maximum(mB, b);
    }
    const fVec laneMax = at::vec::maximum(mA, mB);
    const float rowMax = hmax(laneMax);
    // A NaN, a +inf or a fully masked row (max -inf) makes x - max NaN somewhere: only Sleef's exp propagates that
    // into the all-NaN row ATen gives.
    if (!anyNanOrPosInf(laneMax) && rowMax != -std::numeric_limits<float>::infinity())
        softmaxShortRowExp<FastExp>(y, n, e, fVec(rowMax));
    else
        softmaxShortRowExp<ExactExp>(y, n, e, fVec(rowMax));
}

template <typename Ti, typename To> void softmaxLastDim(const Ti* x, To* y, std::int64_t rows, std::int64_t n)
{
    if (n <= kShortRow) {
        parallelFor(0, rows, rowGrain(n), [&](std::int64_t r0, std::int64_t r1) {
            alignas(64) float e[kShortRow];
            for (std::int64_t r = r0; r < r1; ++r)
                softmaxShortRow(x + r * n, y + r * n, n, e);
        });
        return;
    }
    parallelFor(0, rows, rowGrain(n), [&](std::int64_t r0, std::int64_t r1) {
        const std::int64_t blocks = (n + kSoftmaxBlock - 1) / kSoftmaxBlock;
        std::vector<float> blockRef(static_cast<size_t>(blocks * W));
        // e goes straight into a float output; a bfloat16 output gets a float scratch row (rounding e to
        // bfloat16 before the final scaling would round twice).
        std::vector<float> scratch;
        if constexpr (!std::is_same_v<To, float>)
            scratch.resize(static_cast<size_t>(n));
        for (std::int64_t r = r0; r < r1; ++r) {
            float* e;
            if constexpr (std::is_same_v<To, float>)
                e = y + r * n;
            else
                e = scratch.data();
            softmaxLastDimRow(x + r * n, y + r * n, n, e, blockRef.data());
        }
    });
}

// Reduction over a middle dimension (inner > 1): W adjacent inner positions are W independent rows; walk
// `dim` with stride `inner`, blocks of kRowsPerBlock values per lane.
constexpr std::int64_t kRowsPerBlock = 8;

template <typename Exp, typename Ti>
void softmaxStripPass1(const Ti* x, std::int64_t dim, std::int64_t inner, std::int64_t lanes, float* e, float* blockRef,
                       fVec& m, fVec& s)
{
    const Exp exp;
    auto load = [&](std::int64_t d) {
        return lanes == W ? Io<Ti>::load1(x + d * inner) : Io<Ti>::load1(x + d * inner, lanes);
    };
    m = negInf();
    s = zero();
    std::int64_t block = 0;
    for (std::int64_t d0 = 0; d0 < dim; d0 += kRowsPerBlock, ++block) {
        const std::int64_t count = std::min(kRowsPerBlock, dim - d0);
        fVec v[kRowsPerBlock];
        fVec blockMax = negInf();
        for (std::int64_t k = 0; k < count; ++k) {
            v[k] = load(d0 + k);
            blockMax = at::vec::maximum(blockMax, v[k]);
        }
        const fVec mNew = at::vec::maximum(m, blockMax);
        const fVec ref = safeRef(mNew);
        fVec sum = zero();
        for (std::int64_t k = 0; k < count; ++k) {
            const fVec ek = exp(v[k] - ref);
            ek.store(e + (d0 + k) * W);
            sum = sum + ek;
        }
        if (maxRose(mNew, m))
            s = s * exp(m - ref);
        s = s + sum;
        m = mNew;
        ref.store(blockRef + block * W);
    }
}

template <typename Ti, typename To>
void softmaxStrip(const Ti* x, To* y, std::int64_t dim, std::int64_t inner, std::int64_t lanes, float* e,
                  float* blockRef)
{
    fVec m, s;
    softmaxStripPass1<FastExp>(x, dim, inner, lanes, e, blockRef, m, s);
    // Lanes past `lanes` hold zeros (finite), so only real rows can trigger the exact redo.
    const bool exact = anyNanOrPosInf(m);
    if (exact)
        softmaxStripPass1<ExactExp>(x, dim, inner, lanes, e, blockRef, m, s);
    // Every lane is its own row: M = m, and S = s (a lane that saw only -inf has s = 0 and gives NaN).
    const fVec invSum = fVec(1.0f) / s;
    std::int64_t block = 0;
    for (std::int64_t d0 = 0; d0 < dim; d0 += kRowsPerBlock, ++block) {
        const std::int64_t count = std::min(kRowsPerBlock, dim - d0);
        const fVec shift = at::vec::minimum(fVec::loadu(blockRef + block * W) - m, zero());
        const fVec factor = (exact ? ExactExp{}(shift) : FastExp{}(shift)) * invSum;
        for (std::int64_t k = 0; k < count; ++k) {
            const fVec out = fVec::loadu(e + (d0 + k) * W) * factor;
            if (lanes == W)
                Io<To>::store1(y + (d0 + k) * inner, out);
            else
                Io<To>::store1(y + (d0 + k) * inner, lanes, out);
        }
    }
}

template <typename Ti, typename To>
void softmaxInner(const Ti* x, To* y, std::int64_t outer, std::int64_t dim, std::int64_t inner)
{
    const std::int64_t strips = (inner + W - 1) / W;
    parallelFor(0, outer * strips, rowGrain(dim * W), [&](std::int64_t t0, std::int64_t t1) {
        const std::int64_t blocks = (dim + kRowsPerBlock - 1) / kRowsPerBlock;
        std::vector<float> e(static_cast<size_t>(dim * W));
        std::vector<float> blockRef(static_cast<size_t>(blocks * W));
        for (std::int64_t t = t0; t < t1; ++t) {
            const std::int64_t o = t / strips;
            const std::int64_t j = (t % strips) * W;
            const std::int64_t offset = o * dim * inner + j;
            softmaxStrip(x + offset, y + offset, dim, inner, std::min(W, inner - j), e.data(), blockRef.data());
        }
    });
}

template <typename Ti, typename To>
void softmaxT(const void* xv, void* yv, std::int64_t outer, std::int64_t dim, std::int64_t inner)
{
    const Ti* x = static_cast<const Ti*>(xv);
    To* y = static_cast<To*>(yv);
    if (inner == 1)
        softmaxLastDim(x, y, outer, dim);
    else
        softmaxInner(x, y, outer, dim, inner);
}

void softmax(c10::ScalarType inDtype, c10::ScalarType outDtype, const void* x, void* y, std::int64_t outer,
             std::int64_t dim, std::int64_t inner)
{
    const bool inBf16 = inDtype == c10::ScalarType::BFloat16;
    const bool outBf16 = outDtype == c10::ScalarType::BFloat16;
    if (inBf16 && outBf16)
        softmaxT<bf16, bf16>(x, y, outer, dim, inner);
    else if (inBf16)
        softmaxT<bf16, float>(x, y, outer, dim, inner);
    else if (outBf16)
        softmaxT<float, bf16>(x, y, outer, dim, inner);
    else
        softmaxT<float, float>(x, y, outer, dim, inner);
}

} // namespace

const KernelTable& KFORGE_CPU_TABLE_FN()
{
    static constexpr KernelTable table{
        KFORGE_CPU_ISA, KFORGE_CPU_ISA_NAME, static_cast<int>(W), &layerNorm, &rmsNorm, &softmax, &gelu, &silu};
    return table;
}

} // namespace KFORGE_CPU_ISA_NS

const KernelTable& KFORGE_CPU_TABLE_FN() { return KFORGE_CPU_ISA_NS::KFORGE_CPU_TABLE_FN(); }

} // namespace kforge::providers::cpu
