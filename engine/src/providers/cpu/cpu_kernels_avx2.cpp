// SPDX-License-Identifier: Apache-2.0
// The Cpu*Provider kernels for AVX2 + FMA (Vectorized<float> = __m256), compiled with #pragma GCC target so
// the engine needs no per-file compiler flags; kernels() uses them only on CPUs that have AVX2 and FMA.
// See cpu_kernels.h and cpu_isa_preinclude.h.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include "providers/cpu/cpu_isa_preinclude.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "providers/cpu/cpu_isa_sleef.h"
#define CPU_CAPABILITY AVX2
#define CPU_CAPABILITY_AVX2

#define KFORGE_CPU_ISA_NS isa_avx2
#define KFORGE_CPU_ISA Isa::Avx2
#define KFORGE_CPU_ISA_NAME "AVX2"
#define KFORGE_CPU_TABLE_FN avx2Kernels
#include "providers/cpu/cpu_kernels_impl.h"
#pragma GCC pop_options

#else
#include "providers/cpu/cpu_kernels.h"
// Not GCC on x86-64: no AVX2 copy (availableIsas() does not list it).
const kforge::providers::cpu::KernelTable& kforge::providers::cpu::avx2Kernels() { return defaultKernels(); }
#endif
