// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU kernels behind the Cpu*Provider family (cpu_providers.cpp): row-wise layer_norm / rms_norm /
// softmax and element-wise gelu / silu, written with at::vec::Vectorized<float> (bfloat16 is widened to float
// for all arithmetic and rounded once on the store) and split over ATen's intra-op threads.
//
// Each kernel set is compiled three times from cpu_kernels_impl.h, as ATen compiles its own CPU kernels:
//   DEFAULT  (cpu_kernels_default.cpp)  the build's baseline ISA; Vectorized<float> is the generic 8-lane type
//   AVX2     (cpu_kernels_avx2.cpp)     #pragma GCC target("avx2,fma"), Vectorized<float> = __m256
//   AVX512   (cpu_kernels_avx512.cpp)   avx512f/bw/vl/dq + fma, Vectorized<float> = __m512
// kernels() picks, once, the widest set that both this CPU and ATen's own dispatch (at::get_cpu_capability(),
// which honours ATEN_CPU_CAPABILITY) allow, so a provider and the ATen op it replaces run the same ISA.
//
// All pointers are to contiguous data; the providers make that so (and say where they copy).
//
// Precision: layer_norm / rms_norm match ATen to float32 rounding (layer_norm's row statistics are merged in
// double, which makes it more accurate than ATen's on rows with a large offset). gelu, silu and softmax's
// per-element exps use ATen's inlined Vectorized<float>::exp_u20 polynomial (<= 20 ulp, relative 2.4e-6)
// instead of Sleef's out-of-line exp: results differ from ATen's by ~1e-6 relative at most in float32.
#include <c10/core/ScalarType.h>
#include <c10/util/FunctionRef.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kforge::providers::cpu {

enum class Isa { Default, Avx2, Avx512 };

struct KernelTable {
    Isa isa;
    const char* name; // "DEFAULT", "AVX2", "AVX512"
    int floatLanes;   // Vectorized<float>::size()

    // x, y: [rows, cols] of `dtype` (Float or BFloat16). weight/bias: [cols] float32 (the provider widens
    // bfloat16 parameters once per call) or nullptr. Two-pass mean and variance per row (biased
    // variance, as ATen), then y = (x - mean) * rstd * weight + bias with rstd = 1 / sqrt(var + eps).
    void (*layerNorm)(c10::ScalarType dtype, const void* x, const float* weight, const float* bias, void* y,
                      std::int64_t rows, std::int64_t cols, float eps);
    // y = x * rsqrt(mean(x^2) + eps) * weight, in float, rounded once to `dtype` (ATen's rms_norm composite).
    void (*rmsNorm)(c10::ScalarType dtype, const void* x, const float* weight, void* y, std::int64_t rows,
                    std::int64_t cols, float eps);
    // x: [outer, dim, inner] of inDtype, softmax over `dim`, y the same shape in outDtype (Float or BFloat16;
    // BFloat16 -> Float is the softmax(dtype=float32) case). Online softmax: one pass keeps the running max
    // and the running sum of exp, rescaling the sum when the max grows; a second pass normalizes.
    void (*softmax)(c10::ScalarType inDtype, c10::ScalarType outDtype, const void* x, void* y, std::int64_t outer,
                    std::int64_t dim, std::int64_t inner);
    // n elements. tanh = false: x/2 * (1 + erf(x / sqrt(2))); true: x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    void (*gelu)(c10::ScalarType dtype, const void* x, void* y, std::int64_t n, bool tanh);
    // y = x / (1 + exp(-x)).
    void (*silu)(c10::ScalarType dtype, const void* x, void* y, std::int64_t n);
};

const KernelTable& defaultKernels();
const KernelTable& avx2Kernels();
const KernelTable& avx512Kernels();

// Which sets this CPU can run (Default always).
std::vector<Isa> availableIsas();
const KernelTable& kernelsFor(Isa isa); // throws c10::Error when this CPU cannot run `isa`
// The set the providers use: the widest available one that ATen also uses, unless overridden.
const KernelTable& kernels();
// For tests and benchmarks: force one set process-wide (nullopt-like reset with resetIsaOverride()).
void setIsaOverride(Isa isa);
void resetIsaOverride();

// Per-call tuning a provider's settings choose (the autotuning generator searches them, optimizer/autotune.cpp): the
// work per parallel chunk, in elements, and a cap on the threads. Thread-local; TuningScope sets it around a call.
struct Tuning {
    std::int64_t grainElements = 32768; // ATen's at::internal::GRAIN_SIZE
    int maxThreads = 0;                 // 0: ATen's intra-op thread count
};
const Tuning& tuning();
class TuningScope {
public:
    explicit TuningScope(const Tuning& tuning);
    ~TuningScope();
    TuningScope(const TuningScope&) = delete;
    TuningScope& operator=(const TuningScope&) = delete;

private:
    Tuning m_saved;
};
std::string_view isaName(Isa isa); // "default", "avx2", "avx512"
std::optional<Isa> isaFromName(std::string_view name);

// at::parallel_for over [begin, end) in chunks of at least `grain`, on ATen's intra-op thread pool.
// at::parallel_for is a header template whose OpenMP path exists only in translation units compiled with
// -fopenmp; the engine is not, so calling it here would run serially. This one calls the OpenMP runtime that
// LibTorch already loaded (see cpu_parallel.cpp) and behaves like at::parallel_for: serial inside a parallel
// region, with one thread, or when the range is not larger than `grain`. At most tuning().maxThreads threads.
void parallelFor(std::int64_t begin, std::int64_t end, std::int64_t grain,
                 c10::function_ref<void(std::int64_t, std::int64_t)> f);
// True when parallelFor can use more than one thread in this process.
bool parallelForIsParallel();

} // namespace kforge::providers::cpu
