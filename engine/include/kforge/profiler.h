// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/profiling.h>

namespace kforge {

class ModelSession;

// Runs warm-up and measured forwards of `session` and returns what it measured. device "cuda" traces CUDA
// kernels with CUPTI (kforge::Error when no CUDA device or CUPTI is available); "cpu" times every ATen op
// execution and every intercepted function call on the host. Never run alongside LibTorch's own profiler.
ProfileRun profile(ModelSession& session, const ProfileOptions& options);

} // namespace kforge
