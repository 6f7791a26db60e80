#pragma once
namespace kforge::runtime {

// Fusers (NNC/TensorExpr, the legacy fuser) pull ops such as gelu into fused groups that are never
// dispatched one by one, which would hide them from interception: they are off while any plan is active.
class Fusers {
public:
    static void disableWhilePlanActive();
    static void restoreAfterPlan();
    static bool disabledForPlan();
    static const char* notice();
};

} // namespace kforge::runtime
