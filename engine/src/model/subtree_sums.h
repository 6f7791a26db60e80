// SPDX-License-Identifier: Apache-2.0
#pragma once
// The subtree sums of a module tree (ModuleInfo::subtree*): parameters and the function inventory of a module and
// every module below it. A tensor held by several modules (tied weights: T5's shared embedding, a head tied to the
// token embedding) counts once in every subtree that holds it, as Python's parameters() counts it; each module's
// own count still includes it.
#include <kforge/module_info.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge {

// A parameter a module holds: `identity` tells one tensor from another (a TensorImpl address, a .pt2 weight file).
struct HeldParameter {
    std::string identity;
    std::int64_t count = 0;
    std::int64_t bytes = 0;
};

// Fills the subtree fields of `modules` (pre-order: every module before its descendants, children listed by path)
// from each module's own functions and the parameters `held` lists per module path. A subtree's functions are the
// calls one forward of the model makes in the module or below it: each module's own calls, times the number of times
// its forward runs per forward of the model (`forwardRuns`, by path; a module it lacks runs once: a .pt2 program's
// own counts already hold every call made in the module).
// `ownCalls`, where it has a module: its own calls per forward of the model, counted per forward method (a traced
// module's forward and forward1 take different code), used instead of its functions times its runs.
void fillSubtreeSums(std::vector<ModuleInfo>& modules,
                     const std::unordered_map<std::string, std::vector<HeldParameter>>& held,
                     const std::unordered_map<std::string, int>& forwardRuns = {},
                     const std::unordered_map<std::string, std::map<std::string, int>>& ownCalls = {});

} // namespace kforge
