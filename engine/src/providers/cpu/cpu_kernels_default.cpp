// SPDX-License-Identifier: Apache-2.0
// The Cpu*Provider kernels for the build's baseline instruction set (Vectorized<float> is ATen's generic
// 8-lane type). Always available; see cpu_kernels.h.
#define CPU_CAPABILITY DEFAULT
#define CPU_CAPABILITY_DEFAULT

#define KFORGE_CPU_ISA_NS isa_default
#define KFORGE_CPU_ISA Isa::Default
#define KFORGE_CPU_ISA_NAME "DEFAULT"
#define KFORGE_CPU_TABLE_FN defaultKernels
#include "providers/cpu/cpu_kernels_impl.h"
