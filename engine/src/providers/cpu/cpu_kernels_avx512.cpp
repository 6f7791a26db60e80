// SPDX-License-Identifier: Apache-2.0
// The Cpu*Provider kernels for AVX-512 (F, BW, VL, DQ) + FMA (Vectorized<float> = __m512), the feature set
// ATen compiles its own AVX512 kernels for; kernels() uses them only on CPUs that have all of it.
// See cpu_kernels.h and cpu_isa_preinclude.h.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include "providers/cpu/cpu_isa_preinclude.h"

// GCC 12 reports its own AVX-512 intrinsics (_mm512_undefined_*, self-initialized on purpose) as
// "used uninitialized" once they are inlined here; ATen builds with -Wno-maybe-uninitialized for the same.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")
#define KFORGE_SLEEF_AVX512
#include "providers/cpu/cpu_isa_sleef.h"
#define CPU_CAPABILITY AVX512
#define CPU_CAPABILITY_AVX512

#define KFORGE_CPU_ISA_NS isa_avx512
#define KFORGE_CPU_ISA Isa::Avx512
#define KFORGE_CPU_ISA_NAME "AVX512"
#define KFORGE_CPU_TABLE_FN avx512Kernels
#include "providers/cpu/cpu_kernels_impl.h"
#pragma GCC pop_options

#else
#include "providers/cpu/cpu_kernels.h"
// Not GCC on x86-64: no AVX-512 copy (availableIsas() does not list it).
const kforge::providers::cpu::KernelTable& kforge::providers::cpu::avx512Kernels() { return defaultKernels(); }
#endif
