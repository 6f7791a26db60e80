// SPDX-License-Identifier: Apache-2.0
#include "measure/tensor_agreement.h"

#include "model/model_inputs.h"
#include "model/output_digest.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace kforge {

Tolerance verifyTolerance(const std::string& dtype)
{
    if (dtype == "float32" || dtype == "complex64") // a complex tensor compares as its float parts
        return {1e-4, 1e-3};
    if (dtype == "float64" || dtype == "complex128")
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

// "int", "float", "bool", "str", "Tensor", ...: a non-tensor output's dtype as verify reports it.
std::string valueTypeName(const c10::IValue& v)
{
    if (v.isInt())
        return "int";
    if (v.isDouble())
        return "float";
    if (v.isBool())
        return "bool";
    if (v.isString())
        return "str";
    return v.tagKind();
}

std::string valueText(const c10::IValue& v)
{
    if (v.isDouble())
        return number(v.toDouble());
    if (v.isString())
        return "'" + v.toStringRef() + "'";
    std::ostringstream text;
    text << v;
    return text.str();
}

} // namespace

// A number, bool or string a model returns: ints, bools and strings must be equal, floats agree within float64's
// tolerance (NaN with NaN), anything else is compared by value.
TensorAgreement agreementOfValues(const std::string& path, const c10::IValue& baseline, const c10::IValue& plan)
{
    TensorAgreement a;
    a.path = path;
    a.dtype = valueTypeName(baseline);
    if (valueTypeName(plan) != a.dtype) {
        a.passed = false;
        a.problem = "a " + valueTypeName(plan) + " where the baseline's is a " + a.dtype;
        return a;
    }
    bool same = false;
    if (baseline.isDouble()) {
        const double x = baseline.toDouble(), y = plan.toDouble();
        const Tolerance t = verifyTolerance("float64");
        a.maxAbsError = std::isnan(x) || std::isnan(y) ? 0.0 : std::abs(y - x);
        same = (std::isnan(x) && std::isnan(y)) || x == y || a.maxAbsError <= t.absolute + t.relative * std::abs(x);
    } else if (baseline.isTensor()) {
        same = false; // a tensor against a non-tensor was caught above
    } else {
        same = baseline == plan;
        if (!same && baseline.isInt())
            a.maxAbsError = std::abs(double(plan.toInt()) - double(baseline.toInt()));
    }
    if (!same) {
        a.passed = false;
        a.cosine = 0.0;
        a.problem = valueText(plan) + " where the baseline's is " + valueText(baseline);
    }
    return a;
}

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

    // A complex tensor compares as its real and imaginary parts (a cast to double would keep the real parts only).
    const auto comparable = [](const at::Tensor& t) {
        const at::Tensor on = t.detach().to(at::kCPU);
        return (on.is_complex() ? at::view_as_real(on.resolve_conj()) : on).to(at::kDouble);
    };
    const at::Tensor b = comparable(baseline);
    const at::Tensor p = comparable(plan);
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

std::vector<std::pair<std::string, c10::IValue>> judgedLeaves(const c10::IValue& output)
{
    auto leaves = flattenOutputLeaves(output);
    std::erase_if(leaves, [](const auto& named) { // None, or None typed as Tensor: nothing to compare
        return named.second.isNone() || (named.second.isTensor() && !named.second.toTensor().defined());
    });
    for (auto& [path, leaf] : leaves)
        if (path.empty())
            path = "0";
    return leaves;
}

std::vector<TensorAgreement> agreementOfOutputs(const c10::IValue& baseline, const c10::IValue& plan,
                                                const VerifyThresholds& thresholds)
{
    const auto b = judgedLeaves(baseline), p = judgedLeaves(plan);
    std::vector<TensorAgreement> out;
    for (size_t i = 0; i < b.size(); ++i) {
        if (i < p.size() && p[i].first == b[i].first) {
            const c10::IValue& before = b[i].second;
            const c10::IValue& after = p[i].second;
            out.push_back(before.isTensor() && after.isTensor()
                              ? agreementOf(b[i].first, before.toTensor(), after.toTensor(), thresholds)
                              : agreementOfValues(b[i].first, before, after));
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
