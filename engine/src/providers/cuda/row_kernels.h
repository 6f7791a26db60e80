// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain CUDA kernels behind the Cuda*Provider types (cuda_providers.cpp). No LibTorch here: the launch
// functions take raw device pointers, sizes, a dtype and a stream, and return the launch status
// (cudaGetLastError) for the caller to turn into an exception. Tensors are contiguous; row-wise ops
// reduce over the last `cols` elements of each of `rows` rows. All math is done in float32.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace kforge::cuda_kernels {

enum class DType : int { Float32, BFloat16, Float16 };
enum class GeluApproximation : int { None, Tanh };

// y = (x - mean) / sqrt(var + eps) * weight + bias per row (biased variance). weight and bias may be null;
// when present they hold `cols` elements of `paramType`, which is `type` or Float32.
cudaError_t layerNorm(const void* x, const void* weight, const void* bias, DType paramType, void* y, std::int64_t rows,
                      std::int64_t cols, float eps, DType type, cudaStream_t stream);

// y = x / sqrt(mean(x^2) + eps) * weight per row; weight (of `type`) may be null.
cudaError_t rmsNorm(const void* x, const void* weight, void* y, std::int64_t rows, std::int64_t cols, float eps,
                    DType type, cudaStream_t stream);

// Softmax over each row. outType is inType or Float32.
cudaError_t softmax(const void* x, void* y, std::int64_t rows, std::int64_t cols, DType inType, DType outType,
                    cudaStream_t stream);

// Elementwise over n elements.
cudaError_t gelu(const void* x, void* y, std::int64_t n, GeluApproximation approximation, DType type,
                 cudaStream_t stream);
cudaError_t silu(const void* x, void* y, std::int64_t n, DType type, cudaStream_t stream);

} // namespace kforge::cuda_kernels
