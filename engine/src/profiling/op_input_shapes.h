// SPDX-License-Identifier: Apache-2.0
#pragma once
// An op's input shapes as torch.profiler's record_shapes spells them (KernelRecord::inputShapes).
#include <string>

namespace at {
struct RecordFunction;
}

namespace kforge::profiling {

// "[[1, 3, 224, 224], [64, 3, 7, 7], []]": each of the op's arguments, a tensor's sizes or [] for anything else, a
// tensor list as a list of sizes. Call from a start callback registered with needsInputs(true).
std::string opInputShapes(const at::RecordFunction& fn);

} // namespace kforge::profiling
