// SPDX-License-Identifier: Apache-2.0
#include "measure/output_check.h"

#include <algorithm>

namespace kforge::measure {

bool OutputCheck::passed() const
{
    return !judged.outputs.empty() && std::all_of(judged.outputs.begin(), judged.outputs.end(),
                                                  [](const TensorAgreement& a) { return a.passed && a.judged; });
}

bool OutputCheck::inconclusive() const
{
    return !judged.outputs.empty() &&
           std::all_of(judged.outputs.begin(), judged.outputs.end(), [](const auto& a) { return a.passed; }) &&
           std::any_of(judged.outputs.begin(), judged.outputs.end(), [](const auto& a) { return !a.judged; });
}

OutputCheck checkOutputs(const std::function<c10::IValue()>& baseline, const std::function<c10::IValue()>& plan,
                         const VerifyThresholds& thresholds)
{
    // Several baselines: a model that still disagrees with itself (random numbers not replayed, nondeterministic
    // kernels) must not have its own spread blamed on the plan, nor hide the plan's error in it.
    std::vector<c10::IValue> baselines;
    while (int(baselines.size()) < kFirstBaselines)
        baselines.push_back(baseline());
    if (baselinesMove(baselines, thresholds))
        while (int(baselines.size()) < kMovingBaselines)
            baselines.push_back(baseline());
    OutputCheck check;
    check.judged = judgeOutputs(baselines, plan(), thresholds);
    check.baselineForwards = int(baselines.size());
    return check;
}

} // namespace kforge::measure
