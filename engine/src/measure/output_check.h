// SPDX-License-Identifier: Apache-2.0
#pragma once
// The plan's outputs against several forwards without it, each forward from the same saved state (fresh inputs,
// buffers put back, random draws replayed): the check kforge verify starts with and bench's "outputs agree" is.
#include "measure/spread_judge.h"

#include <functional>

namespace kforge::measure {

struct OutputCheck {
    OutputsJudged judged;
    int baselineForwards = 0;
    bool passed() const;       // every output judged and passing
    bool inconclusive() const; // none failed, one could not be judged
};

// kFirstBaselines forwards of `baseline` (kMovingBaselines when an output moves between them), then one of `plan`;
// the callers restore their state before each.
OutputCheck checkOutputs(const std::function<c10::IValue()>& baseline, const std::function<c10::IValue()>& plan,
                         const VerifyThresholds& thresholds);

} // namespace kforge::measure
