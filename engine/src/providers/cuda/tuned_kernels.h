// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Cuda*Provider kernels with the launch a Tuning chooses (block size, vector width, rows per block, the row
// length compiled in, grid cap): each variant is compiled by NVRTC on first use (runtime_kernels.h) and launched
// through the CUDA runtime. Arguments as in row_kernels.h. A variant the call's alignment or row length does not
// allow is narrowed (vector width halved until it fits). Throws kforge::Error when a kernel cannot be compiled or
// loaded; returns the launch status. No LibTorch here.
#include "providers/cuda/launch_geometry.h"
#include "providers/cuda/row_kernels.h"

#include <cstdint>
#include <string>

namespace kforge::cuda_kernels {

cudaError_t layerNormTuned(const void* x, const void* weight, const void* bias, DType paramType, void* y,
                           std::int64_t rows, std::int64_t cols, float eps, DType type, const Tuning& tuning,
                           cudaStream_t stream);
cudaError_t rmsNormTuned(const void* x, const void* weight, void* y, std::int64_t rows, std::int64_t cols, float eps,
                         DType type, const Tuning& tuning, cudaStream_t stream);
cudaError_t softmaxTuned(const void* x, void* y, std::int64_t rows, std::int64_t cols, DType inType, DType outType,
                         const Tuning& tuning, cudaStream_t stream);
cudaError_t geluTuned(const void* x, void* y, std::int64_t n, GeluApproximation approximation, DType type,
                      const Tuning& tuning, cudaStream_t stream);
cudaError_t siluTuned(const void* x, void* y, std::int64_t n, DType type, const Tuning& tuning, cudaStream_t stream);

// The instantiations, by name (what NVRTC compiles): "kforge_kernels::layerNormKernel<kforge_kernels::Bf16, float,
// 8, 2, 768, 1024>". cols > 0 only when the tuning compiles the row length in; blockBound: the most threads a
// block is launched with (rowBlockBound, unaryBlockBound).
std::string layerNormKernelName(DType type, DType paramType, int vector, int rowsPerBlock, std::int64_t cols,
                                int blockBound);
std::string rmsNormKernelName(DType type, int vector, int rowsPerBlock, std::int64_t cols, int blockBound);
std::string softmaxKernelName(DType inType, DType outType, int vector, int rowsPerBlock, std::int64_t cols,
                              int blockBound);
std::string unaryKernelName(DType type, const char* op, int vector, int blockBound); // op: GeluErf, GeluTanh, Silu

} // namespace kforge::cuda_kernels
