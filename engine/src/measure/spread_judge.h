// SPDX-License-Identifier: Apache-2.0
#pragma once
// A plan's outputs judged against several forwards without it: what kforge verify, bench's "outputs agree" and
// optimize's end-to-end check call the plan keeping the model's outputs (docs/verify.md, "The model's own spread").
#include <kforge/verify.h>

#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace kforge::measure {

// The least baseline forwards to judge moving outputs by, and the most a check takes when an output moves.
inline constexpr int kFirstBaselines = 3;
inline constexpr int kMovingBaselines = 8;

struct OutputsJudged {
    std::vector<TensorAgreement> outputs;
    std::string nondeterminism; // what moved between the baselines; "" when they agreed
};

// Whether the baselines disagree on any output (the check should then take kMovingBaselines of them).
bool baselinesMove(const std::vector<c10::IValue>& baselines, const VerifyThresholds& thresholds);

// `plan` against `baselines` (at least one), output by output, element by element. An element every baseline agrees
// on (within the tolerance) is judged as in a deterministic model: tolerance, cosine, NaN/Inf, top-k, against the
// first baseline. Elements that move are judged against their own spread: each one's error is measured in its own
// standard deviations over the baselines, and the output fails when more elements lie far outside than the
// baselines show against each other (leave one out), or when the errors lean to one side (a mean signed error the
// baselines do not show): a provider that adds a constant fails even inside the noise's maximum. An output that
// moves but cannot be judged so (fewer than 4 baselines, fewer than 4 moving elements outside the baselines' range,
// a number that changes) is left unjudged, saying why: the verdict is then inconclusive, never a pass.
OutputsJudged judgeOutputs(const std::vector<c10::IValue>& baselines, const c10::IValue& plan,
                           const VerifyThresholds& thresholds);

} // namespace kforge::measure
