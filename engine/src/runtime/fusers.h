// SPDX-License-Identifier: Apache-2.0
#pragma once
namespace torch::jit {
struct Module;
}

namespace kforge::runtime {

// Fusers (NNC/TensorExpr, the legacy fuser) pull ops such as gelu into fused groups that are never
// dispatched one by one, which would hide them from interception: they are off while any plan is active.
class Fusers {
public:
    static void disableWhilePlanActive();
    static void restoreAfterPlan();
    static bool disabledForPlan();
    static const char* notice();

    // Whether an executor of the module's methods holds an optimised plan with fused groups (built by forwards
    // that ran before a plan was active).
    static bool holdFusedGroups(const torch::jit::Module& module);
    // Drops such plans, so that the next forward re-optimises with the fusers off (R1: interception does not
    // depend on what ran before activation). Plans without fused groups are kept: re-profiling costs forwards.
    static void dropFusedPlans(const torch::jit::Module& module);
};

} // namespace kforge::runtime
