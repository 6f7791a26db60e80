// SPDX-License-Identifier: Apache-2.0
#include "measure/tensor_agreement.h"

#include "model/model_inputs.h"
#include "model/output_digest.h"

#include <ATen/ATen.h>

#include <cstdio>

namespace kforge {

Tolerance verifyTolerance(const std::string& dtype)
{
    if (dtype == "float32")
        return {1e-4, 1e-3};
    if (dtype == "float64")
        return {1e-8, 1e-6};
    if (dtype == "bfloat16")
        return {1e-2, 5e-2};
    if (dtype == "float16")
        return {1e-3, 1e-2};
    return {0.0, 0.0}; // integers and bool: exact
}

namespace measure {
namespace {

std::string number(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
}

std::int64_t countOf(const at::Tensor& mask) { return mask.sum().item<std::int64_t>(); }

// Rows of a [batch, classes] or [batch, tokens, vocab] output: the last dimension scores classes.
bool scoresClasses(const at::Tensor& t)
{
    return t.is_floating_point() && (t.dim() == 2 || t.dim() == 3) && t.size(-1) >= 2;
}

void addTopK(TensorAgreement& a, const at::Tensor& baseline, const at::Tensor& plan)
{
    const at::Tensor b = baseline.reshape({-1, baseline.size(-1)});
    const at::Tensor p = plan.reshape({-1, plan.size(-1)});
    if (b.size(0) == 0)
        return;
    a.top1Agreement = b.argmax(-1).eq(p.argmax(-1)).to(at::kDouble).mean().item<double>();
    if (b.size(-1) >= 5) {
        const at::Tensor b5 = std::get<0>(std::get<1>(b.topk(5, -1)).sort(-1));
        const at::Tensor p5 = std::get<0>(std::get<1>(p.topk(5, -1)).sort(-1));
        a.top5Agreement = b5.eq(p5).all(-1).to(at::kDouble).mean().item<double>();
    }
}

} // namespace

TensorAgreement agreementOf(const std::string& path, const at::Tensor& baseline, const at::Tensor& plan,
                            const VerifyThresholds& thresholds)
{
    TensorAgreement a;
    a.path = path;
    a.dtype = dtypeName(baseline.scalar_type());
    a.shape = baseline.sizes().vec();
    const auto fail = [&](std::string why) {
        a.passed = false;
        if (a.problem.empty())
            a.problem = std::move(why);
    };
    if (plan.scalar_type() != baseline.scalar_type())
        fail("dtype " + dtypeName(plan.scalar_type()) + " where the baseline's is " + a.dtype);
    if (!plan.sizes().equals(baseline.sizes()))
        fail("shape " + c10::str(plan.sizes()) + " where the baseline's is " + c10::str(baseline.sizes()));
    if (!a.passed)
        return a;
    if (baseline.numel() == 0)
        return a;

    const at::Tensor b = baseline.detach().to(at::kCPU, at::kDouble);
    const at::Tensor p = plan.detach().to(at::kCPU, at::kDouble);
    const at::Tensor bFinite = b.isfinite(), pFinite = p.isfinite();
    const at::Tensor both = bFinite.logical_and(pFinite);
    a.baselineNonFinite = countOf(bFinite.logical_not());
    a.planNonFinite = countOf(pFinite.logical_not());
    a.newNonFinite = countOf(bFinite.logical_and(pFinite.logical_not()));
    // Where the baseline is NaN or Inf, the plan must be the same (NaN for NaN, the same infinity).
    const at::Tensor sameNonFinite = b.isnan().logical_and(p.isnan()).logical_or(b.isinf().logical_and(p.eq(b)));
    const std::int64_t lostNonFinite = countOf(bFinite.logical_not().logical_and(sameNonFinite.logical_not()));

    const at::Tensor bb = b.where(both, 0.0), pp = p.where(both, 0.0);
    const at::Tensor diff = (pp - bb).abs();
    a.maxAbsError = diff.max().item<double>();
    const at::Tensor nonZero = both.logical_and(bb.ne(0.0));
    if (countOf(nonZero) > 0)
        a.maxRelError = (diff / bb.abs()).where(nonZero, 0.0).max().item<double>();
    const double bNorm = bb.norm().item<double>(), pNorm = pp.norm().item<double>();
    a.cosine = bNorm == 0.0 && pNorm == 0.0   ? 1.0
               : bNorm == 0.0 || pNorm == 0.0 ? 0.0
                                              : (bb * pp).sum().item<double>() / (bNorm * pNorm);

    const Tolerance byType = verifyTolerance(a.dtype);
    const double atol = thresholds.absolute.value_or(byType.absolute);
    const double rtol = thresholds.relative.value_or(byType.relative);
    a.outsideTolerance = countOf(both.logical_and(diff.gt(atol + rtol * bb.abs()))) + lostNonFinite;
    if (scoresClasses(baseline))
        addTopK(a, b, p);

    if (a.newNonFinite > 0 && !thresholds.allowNewNonFinite)
        fail(std::to_string(a.newNonFinite) + " NaN/Inf where the baseline is finite");
    if (a.cosine < thresholds.minCosine)
        fail("cosine similarity " + number(a.cosine) + " < " + number(thresholds.minCosine));
    if (a.outsideTolerance > 0)
        fail(std::to_string(a.outsideTolerance) + " of " + std::to_string(baseline.numel()) + " elements outside " +
             number(atol) + " + " + number(rtol) + " x |baseline| (max abs error " + number(a.maxAbsError) + ")");
    if (thresholds.minTop1Agreement && a.top1Agreement && *a.top1Agreement < *thresholds.minTop1Agreement)
        fail("top-1 agreement " + number(*a.top1Agreement) + " < " + number(*thresholds.minTop1Agreement));
    return a;
}

std::vector<TensorAgreement> agreementOfOutputs(const c10::IValue& baseline, const c10::IValue& plan,
                                                const VerifyThresholds& thresholds)
{
    const auto named = [](const c10::IValue& output) {
        auto tensors = flattenOutput(output);
        std::erase_if(tensors, [](const auto& named) { return !named.second.defined(); }); // None typed as Tensor
        for (auto& [path, tensor] : tensors)
            if (path.empty())
                path = "0";
        return tensors;
    };
    const auto b = named(baseline), p = named(plan);
    std::vector<TensorAgreement> out;
    for (size_t i = 0; i < b.size(); ++i) {
        if (i < p.size() && p[i].first == b[i].first) {
            out.push_back(agreementOf(b[i].first, b[i].second, p[i].second, thresholds));
            continue;
        }
        TensorAgreement missing;
        missing.path = b[i].first;
        missing.passed = false;
        missing.problem = "the plan's forward returns no output '" + b[i].first + "'";
        out.push_back(std::move(missing));
    }
    for (size_t i = b.size(); i < p.size(); ++i) {
        TensorAgreement extra;
        extra.path = p[i].first;
        extra.passed = false;
        extra.problem = "the plan's forward returns an output the baseline's does not";
        out.push_back(std::move(extra));
    }
    return out;
}

} // namespace measure
} // namespace kforge
