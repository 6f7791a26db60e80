// SPDX-License-Identifier: Apache-2.0
#pragma once
// The built-in autotuning generator for the CPU: for a function with a KernelForge CPU provider, it
// tries the provider's tuning settings (kernel set, work per parallel chunk, thread cap) on the observed samples,
// keeps the correct ones, and emits the fastest configuration as the provider's settings.
#include <kforge/generator_sdk.h>

namespace kforge::optimizer {

void registerCpuAutotuner(GeneratorRegistry& registry);

} // namespace kforge::optimizer
