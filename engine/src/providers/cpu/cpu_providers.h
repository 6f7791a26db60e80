// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU kernel providers written for KernelForge (cpu_providers.cpp):
//
//   CpuFusedLayerNormProvider  layer_norm   two-pass mean and variance per row, then normalize
//   CpuRmsNormProvider         rms_norm     sum of squares per row, then scale (ATen composite semantics)
//   CpuOnlineSoftmaxProvider   softmax      online softmax: running max and sum in one pass, then normalize
//   CpuGeluProvider            gelu         {approximate: "none" (erf) | "tanh"}
//   CpuSiluProvider            silu
//
// float32 and bfloat16 on CPU (bfloat16 computed in float32, rounded once), vectorized with
// at::vec::Vectorized<float> for the widest ISA both the CPU and ATen use, rows split over ATen's intra-op
// threads (cpu_kernels.h). Eligibility (prepare): CPU strided tensors of those dtypes whose arguments the
// kernel handles; anything else (int, double, half, CUDA, a softmax dtype other than the input's or float32
// from bfloat16, mismatched parameter shapes, ...) makes supports() false.
//
// At run time a call that prepare() would have refused (a provider restored from settings skips prepare), or
// one that needs autograd (grad mode on and an input requiring grad: our kernels record no graph), is declined
// with the reason (CallResult): the runtime runs the original ATen kernel and reports the call as the original's.
//
// Copies: layer_norm, rms_norm and softmax read non-contiguous inputs through a contiguous copy (as ATen's
// kernels do); gelu and silu work in place on any dense layout (a transposed or channels-last tensor is not
// copied, and the output keeps its strides) and copy only non-dense inputs (slices with gaps).
#include <kforge/provider_sdk.h>

#include <cstdint>
