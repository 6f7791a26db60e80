// SPDX-License-Identifier: Apache-2.0
#pragma once
// Leftover patches summarised for a reader. A scope holding many entries for one function (a plan with duplicates,
// or one generated per shape) leaves one patch per entry when its forward fails: one line each buries the few that
// differ under thousands that do not.
#include <kforge/runtime_types.h>

#include <cstddef>
#include <vector>

namespace kforge {

// Patches alike in all but their push time: one function, provider, module, thread, runtime, state, error, capture.
struct LeftoverGroup {
    LeftoverPatch patch; // the group's first patch, in the order given
    std::size_t count = 0;
};

// The groups of `patches`, in the order of each group's first patch.
std::vector<LeftoverGroup> groupLeftovers(const std::vector<LeftoverPatch>& patches);

} // namespace kforge
