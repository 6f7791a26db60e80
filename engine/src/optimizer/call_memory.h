// SPDX-License-Identifier: Apache-2.0
#pragma once
// What one call adds to the memory live at its moment: its workspace and outputs, measured through the allocator's
// reports (profiling/memory_recorder.h). make_plan's peak budget compares a candidate's with the original's.
#include "optimizer/candidate_timing.h"

#include <cstdint>
#include <vector>

namespace kforge::optimizer {

// The most bytes live at once during `call` above those live before it, on `device` ("cpu" or "cuda"), the largest
// over the samples (each called once, on a copy of its arguments).
std::int64_t callPeakBytes(const std::vector<const torch::jit::Stack*>& samples, const std::string& device,
                           const SampleCall& call);

} // namespace kforge::optimizer
