// SPDX-License-Identifier: Apache-2.0
#pragma once
// The built-in autotuning generator for CUDA: for layer_norm, rms_norm, softmax, gelu and silu on CUDA
// tensors it tries the Cuda*Provider launch settings (threads per block, elements per load, rows per block, the row
// length compiled in, grid cap), each variant compiled by NVRTC and cached on disk, on the observed samples; keeps
// the correct ones and emits the fastest as the provider's settings, which a plan replays without tuning again.
#include <kforge/generator_sdk.h>

namespace kforge::optimizer {

// Registers nothing when the engine was built without the CUDA toolkit.
void registerCudaAutotuner(GeneratorRegistry& registry);

} // namespace kforge::optimizer
