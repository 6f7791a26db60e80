// SPDX-License-Identifier: Apache-2.0
#include "measure/spread_judge.h"

#include "measure/tensor_agreement.h"
#include "model/model_inputs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kforge::measure {
namespace {

// An error this many of its element's own standard deviations away is "far outside": a t with 2 degrees of freedom
// (4 baselines, one left out) passes it about once in 180 elements, with 6 (8 baselines) once in 3,000.
constexpr double kFarOutside = 8.0;
// Far-outside elements fail the output when they are this many times the most any baseline shows against the others
// (and at least kLeastFarOutside of them).
constexpr double kFarOutsideFactor = 4.0;
constexpr std::int64_t kLeastFarOutside = 3;
// The mean signed error, each element's error clamped to +-kShiftClamp of its standard deviations: a one-sided shift
// fails when it is kShiftFactor times the largest the baselines show and kShiftStandardErrors standard errors away
// from 0.
constexpr double kShiftClamp = 3.0;
constexpr double kShiftFactor = 3.0;
constexpr double kShiftStandardErrors = 5.0;
// The plan's mean squared error, per element in its own standard deviations (each squared error capped at
// kSquareCap: an element whose forwards happened to agree closely says little) and over the whole output in its
// units, fails beyond kSpreadFactor times the largest the forwards show against each other.
constexpr double kSquareCap = 100.0;
constexpr double kSpreadFactor = 3.0;
constexpr int kLeastBaselinesToJudge = 4;
constexpr std::int64_t kLeastMovingElements = 4;

std::string spreadNumber(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", value);
    return text;
}

using Leaves = std::vector<std::pair<std::string, c10::IValue>>;

Leaves leavesOf(const c10::IValue& output) { return judgedLeaves(output); }

const c10::IValue* leafAt(const Leaves& leaves, const std::string& path)
{
    for (const auto& [p, v] : leaves)
        if (p == path)
            return &v;
    return nullptr;
}

at::Tensor flatDoubles(const at::Tensor& t)
{
    const at::Tensor on = t.detach().to(at::kCPU);
    return (on.is_complex() ? at::view_as_real(on.resolve_conj()) : on).to(at::kDouble).reshape({-1});
}

// Per element, the plan's error in units of the element's own spread over `others`, as a t statistic: `x` is one
// draw, `others` the rest.
at::Tensor standardisedError(const at::Tensor& x, const at::Tensor& others, const at::Tensor& floor)
{
    const std::int64_t n = others.size(0);
    const at::Tensor mean = others.mean(0);
    const at::Tensor sd = at::maximum(others.std(0, /*unbiased=*/true), floor);
    return (x - mean) / (sd * std::sqrt(1.0 + 1.0 / double(n)));
}

struct SpreadStatistics {
    double farOutside = 0; // fraction of moving elements beyond kFarOutside
    double shift = 0;      // mean clamped t
    double shiftSd = 0;    // its elements' standard deviation
    double meanSquare = 0; // mean capped t squared
    double energy = 0;     // mean squared error in the output's units
};

SpreadStatistics statisticsOf(const at::Tensor& t, const at::Tensor& error)
{
    SpreadStatistics s;
    s.meanSquare = (t * t).clamp_max(kSquareCap).mean().item<double>();
    s.energy = (error * error).mean().item<double>();
    s.farOutside = t.abs().gt(kFarOutside).to(at::kDouble).mean().item<double>();
    const at::Tensor clamped = t.clamp(-kShiftClamp, kShiftClamp);
    s.shift = clamped.mean().item<double>();
    s.shiftSd = t.numel() > 1 ? clamped.std().item<double>() : 0.0;
    return s;
}

// A moving floating output, judged against its own spread; `result` is its agreement with the first baseline.
void judgeMovingTensor(TensorAgreement& result, const std::vector<at::Tensor>& baselines, const at::Tensor& plan,
                       const VerifyThresholds& thresholds)
{
    const std::int64_t n = std::int64_t(baselines.size());
    const at::Tensor stack = at::stack(baselines); // [n, elements]
    const at::Tensor p = flatDoubles(plan);
    const at::Tensor finite = stack.isfinite().all(0).logical_and(p.isfinite());
    const at::Tensor baseFinite = stack.isfinite().all(0);
    const std::int64_t newNonFinite = baseFinite.logical_and(p.isfinite().logical_not()).sum().item<std::int64_t>();
    const Tolerance byType = verifyTolerance(result.dtype);
    const double atol = thresholds.absolute.value_or(byType.absolute);
    const double rtol = thresholds.relative.value_or(byType.relative);
    const at::Tensor lo = std::get<0>(stack.min(0)), hi = std::get<0>(stack.max(0));
    const at::Tensor tolerance = atol + rtol * stack.mean(0).abs();
    const at::Tensor steady = finite.logical_and((hi - lo).le(tolerance));
    const at::Tensor moving = finite.logical_and(steady.logical_not());
    result.movingElements = moving.sum().item<std::int64_t>();
    result.judged = true;
    result.passed = true;
    result.problem.clear();
    const auto fail = [&](const std::string& why) {
        if (result.passed)
            result.problem = why;
        result.passed = false;
    };
    if (newNonFinite > 0 && !thresholds.allowNewNonFinite)
        fail(std::to_string(newNonFinite) + " NaN/Inf where all " + std::to_string(n) +
             " forwards without the plan are finite");
    // The elements every baseline agrees on: as in a deterministic model.
    const at::Tensor steadyOutside = steady.logical_and((p - stack[0]).abs().gt(tolerance + (hi - lo))).sum();
    const std::int64_t outside = steadyOutside.item<std::int64_t>();
    if (outside > 0)
        fail(std::to_string(outside) + " of the " + std::to_string(steady.sum().item<std::int64_t>()) +
             " elements all " + std::to_string(n) + " forwards without the plan agree on lie outside " +
             spreadNumber(atol) + " + " + spreadNumber(rtol) + " x |baseline|");
    if (result.movingElements == 0)
        return;
    const at::Tensor movingAt = moving.nonzero().reshape({-1});
    const at::Tensor s = stack.index_select(1, movingAt), pm = p.index_select(0, movingAt);
    // Outside every baseline's range by more than the tolerance: the elements the spread has to explain.
    const at::Tensor outsideRange =
        pm.lt(lo.index_select(0, movingAt) - tolerance.index_select(0, movingAt))
            .logical_or(pm.gt(hi.index_select(0, movingAt) + tolerance.index_select(0, movingAt)));
    if (n < kLeastBaselinesToJudge || result.movingElements < kLeastMovingElements) {
        if (outsideRange.any().item<bool>()) {
            result.judged = !result.passed; // a fail found elsewhere stands
            if (!result.judged)
                result.problem = "not judged: " + std::to_string(result.movingElements) + " elements differ between " +
                                 std::to_string(n) + " forwards without the plan, too " +
                                 (n < kLeastBaselinesToJudge ? "few forwards" : "few elements") +
                                 " to judge the plan's values outside their range against that spread";
        }
        return;
    }
    // Leave one out: the plan against n-1 baselines, and each baseline against the other n-1, so that under an
    // exact plan all n+1 statistics are drawn alike.
    const at::Tensor floor = (tolerance.index_select(0, movingAt) / 2).clamp_min(1e-300);
    const at::Tensor allButLast = s.narrow(0, 0, n - 1);
    const SpreadStatistics planStats = statisticsOf(standardisedError(pm, allButLast, floor), pm - allButLast.mean(0));
    double mostFarOutside = 0, mostShift = 0, mostMeanSquare = 0, mostEnergy = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const at::Tensor others = at::cat({s.narrow(0, 0, i), s.narrow(0, i + 1, n - i - 1)});
        const SpreadStatistics b = statisticsOf(standardisedError(s[i], others, floor), s[i] - others.mean(0));
        mostFarOutside = std::max(mostFarOutside, b.farOutside);
        mostShift = std::max(mostShift, std::abs(b.shift));
        mostMeanSquare = std::max(mostMeanSquare, b.meanSquare);
        mostEnergy = std::max(mostEnergy, b.energy);
    }
    const double m = double(result.movingElements);
    const double farCount = planStats.farOutside * m;
    if (farCount >= double(kLeastFarOutside) && planStats.farOutside > kFarOutsideFactor * mostFarOutside)
        fail(std::to_string(std::int64_t(std::llround(farCount))) + " of the " + std::to_string(result.movingElements) +
             " elements that differ between " + std::to_string(n) + " forwards without the plan lie more than " +
             spreadNumber(kFarOutside) +
             " of their own standard deviations from those forwards' mean (the forwards "
             "themselves: at most " +
             std::to_string(std::int64_t(std::llround(mostFarOutside * m))) + ")");
    if (planStats.meanSquare > kSpreadFactor * mostMeanSquare)
        fail("the plan's errors on the " + std::to_string(result.movingElements) +
             " elements that differ between forwards without the plan average " +
             spreadNumber(std::sqrt(planStats.meanSquare)) +
             " of their own standard deviations (root mean square; "
             "the forwards themselves: at most " +
             spreadNumber(std::sqrt(mostMeanSquare)) + ")");
    if (planStats.energy > kSpreadFactor * mostEnergy)
        fail("the plan's root mean squared error on the elements that differ between forwards without the plan is " +
             spreadNumber(std::sqrt(planStats.energy)) + ", the forwards' own at most " +
             spreadNumber(std::sqrt(mostEnergy)));
    const double standardError = planStats.shiftSd / std::sqrt(m);
    if (std::abs(planStats.shift) > kShiftFactor * mostShift &&
        std::abs(planStats.shift) > kShiftStandardErrors * std::max(standardError, 1e-12))
        fail(std::string("the plan's errors lean to one side: mean signed error ") + spreadNumber(planStats.shift) +
             " standard deviations over the " + std::to_string(result.movingElements) +
             " elements that differ between forwards without the plan (the forwards themselves: at most " +
             spreadNumber(mostShift) + ")");
}

std::string movedText(const TensorAgreement& self) { return "output " + self.path + ": " + self.problem; }

} // namespace

bool baselinesMove(const std::vector<c10::IValue>& baselines, const VerifyThresholds& thresholds)
{
    for (size_t i = 1; i < baselines.size(); ++i)
        for (const TensorAgreement& a : agreementOfOutputs(baselines[0], baselines[i], thresholds))
            if (!a.passed)
                return true;
    return false;
}

OutputsJudged judgeOutputs(const std::vector<c10::IValue>& baselines, const c10::IValue& plan,
                           const VerifyThresholds& thresholds)
{
    OutputsJudged judged;
    judged.outputs = agreementOfOutputs(baselines.front(), plan, thresholds);
    const std::int64_t n = std::int64_t(baselines.size());
    std::vector<Leaves> leaves;
    for (const c10::IValue& b : baselines)
        leaves.push_back(leavesOf(b));
    const Leaves planLeaves = leavesOf(plan);
    std::vector<std::vector<TensorAgreement>> spreads;
    for (size_t i = 1; i < baselines.size(); ++i)
        spreads.push_back(agreementOfOutputs(baselines[0], baselines[i], thresholds));
    std::string unstable;
    for (TensorAgreement& output : judged.outputs) {
        // The first disagreement among the baselines, if any.
        std::string moved;
        for (const auto& spread : spreads)
            for (const TensorAgreement& self : spread)
                if (moved.empty() && self.path == output.path && !self.passed)
                    moved = movedText(self);
        if (moved.empty())
            continue;
        unstable += (unstable.empty() ? "" : "; ") + moved;
        std::vector<at::Tensor> tensors;
        for (const Leaves& l : leaves) {
            const c10::IValue* leaf = leafAt(l, output.path);
            if (leaf && leaf->isTensor() && leaf->toTensor().defined() &&
                (leaf->toTensor().is_floating_point() || leaf->toTensor().is_complex()))
                tensors.push_back(flatDoubles(leaf->toTensor()));
        }
        const c10::IValue* planLeaf = leafAt(planLeaves, output.path);
        const auto floating = [](const at::Tensor& t) { return t.is_floating_point() || t.is_complex(); };
        const bool structural =
            !output.passed && (output.problem.rfind("dtype", 0) == 0 || output.problem.rfind("shape", 0) == 0 ||
                               output.problem.find("returns") != std::string::npos);
        if (structural)
            continue; // a structural difference fails whatever the spread
        const bool comparable = std::int64_t(tensors.size()) == n && planLeaf && planLeaf->isTensor() &&
                                floating(planLeaf->toTensor()) &&
                                std::all_of(tensors.begin(), tensors.end(),
                                            [&](const at::Tensor& t) { return t.numel() == tensors[0].numel(); }) &&
                                planLeaf->toTensor().numel() == tensors[0].numel();
        if (!comparable) {
            output.judged = false;
            output.passed = true;
            output.problem = "not judged: it differs between forwards without the plan (" + moved +
                             "), and a value that is not a floating tensor cannot be judged against that spread";
            continue;
        }
        judgeMovingTensor(output, tensors, planLeaf->toTensor(), thresholds);
    }
    if (!unstable.empty())
        judged.nondeterminism = "the model's outputs differ between " + std::to_string(n) +
                                " forwards without the plan (" + unstable +
                                "): it draws random numbers the forwards do not replay, or runs nondeterministic "
                                "kernels; those outputs are judged element by element against that spread";
    return judged;
}

} // namespace kforge::measure
