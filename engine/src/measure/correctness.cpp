// SPDX-License-Identifier: Apache-2.0
#include "measure/correctness.h"

#include "model/model_inputs.h"
#include "runtime/mode_key.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

namespace kforge {

Tolerance defaultTolerance(const std::string& dtype)
{
    if (dtype == "float32")
        return {1e-5, 1e-4};
    if (dtype == "float64")
        return {1e-10, 1e-8};
    if (dtype == "bfloat16")
        return {1e-2, 2e-2};
    if (dtype == "float16")
        return {1e-3, 1e-2};
    return {0.0, 0.0};
}

namespace measure {
namespace {

c10::IValue deepCopy(const c10::IValue& v)
{
    if (v.isTensor())
        return v.toTensor().clone();
    if (v.isTensorList()) {
        std::vector<at::Tensor> out;
        for (const at::Tensor& t : v.toTensorVector())
            out.push_back(t.clone());
        return out;
    }
    return v;
}

torch::jit::Stack copyOf(const torch::jit::Stack& sample)
{
    torch::jit::Stack out;
    for (const auto& v : sample)
        out.push_back(deepCopy(v));
    return out;
}

std::string dtypeOf(const at::Tensor& t)
{
    const std::string d = describeIValue(t);
    return d.substr(0, d.find('['));
}

} // namespace

OutputComparison compareOutput(const c10::IValue& expected, const c10::IValue& actual,
                               const std::optional<Tolerance>& tol)
{
    OutputComparison c;
    if (expected.isTensor() != actual.isTensor()) {
        c.problem = "output kinds differ (" + expected.tagKind() + " vs " + actual.tagKind() + ")";
        c.withinTolerance = false;
        return c;
    }
    if (!expected.isTensor()) {
        c.withinTolerance = expected == actual;
        if (!c.withinTolerance)
            c.problem = "non-tensor outputs differ";
        return c;
    }
    const at::Tensor& e = expected.toTensor();
    const at::Tensor& a = actual.toTensor();
    c.dtype = dtypeOf(e);
    c.shape = e.sizes().vec();
    if (e.sizes() != a.sizes()) {
        c.problem = "shape " + describeIValue(a) + " instead of " + describeIValue(e);
        c.withinTolerance = false;
        return c;
    }
    if (e.scalar_type() != a.scalar_type()) {
        c.problem = "dtype " + dtypeOf(a) + " instead of " + c.dtype;
        c.withinTolerance = false;
        return c;
    }
    if (e.numel() == 0)
        return c;
    const at::Tensor ed = e.detach().to(at::kCPU).to(at::kDouble);
    const at::Tensor ad = a.detach().to(at::kCPU).to(at::kDouble);
    const at::Tensor eFinite = at::isfinite(ed);
    const at::Tensor aFinite = at::isfinite(ad);
    c.nonFiniteMismatch = !at::equal(eFinite, aFinite) || !at::equal(at::isnan(ed), at::isnan(ad));
    const at::Tensor both = eFinite.logical_and(aFinite);
    const at::Tensor diff = (ed - ad).abs().masked_fill(both.logical_not(), 0.0);
    const at::Tensor ref = ed.abs().masked_fill(both.logical_not(), 0.0);
    c.maxAbsError = diff.max().item<double>();
    c.maxRelError = (diff / ref.clamp_min(1e-12)).masked_fill(ref == 0, 0.0).max().item<double>();
    const Tolerance t = tol ? *tol : defaultTolerance(c.dtype);
    c.withinTolerance = !c.nonFiniteMismatch && (diff <= t.absolute + t.relative * ref).all().item<bool>();
    if (c.nonFiniteMismatch)
        c.problem = "NaN/Inf where the original has none (or the reverse)";
    return c;
}

namespace {

CorrectnessReport emptyReport(const KernelProvider& provider, const std::vector<torch::jit::Stack>& samples)
{
    CorrectnessReport report;
    report.provider = provider.displayName();
    report.function = std::string(functionName(provider.function()));
    report.samples = int(samples.size());
    return report;
}

// The original and the provider on copies of each sample, compared; a decline fails unless `declinesAllowed`.
void compareOnSamples(KernelProvider& provider, const c10::OperatorHandle& op,
                      const std::vector<torch::jit::Stack>& samples, const std::optional<Tolerance>& tolerance,
                      bool declinesAllowed, CorrectnessReport& report)
{
    at::NoGradGuard noGrad;
    c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
    for (size_t s = 0; s < samples.size(); ++s) {
        torch::jit::Stack original = copyOf(samples[s]);
        torch::jit::Stack candidate = copyOf(samples[s]);
        op.callBoxed(original);
        try {
            if (const CallResult r = provider.call(op, candidate); !r.wasServed()) {
                if (declinesAllowed)
                    continue; // the original runs it
                report.reason = "sample " + std::to_string(s) + ": the provider declined it (" + r.declined + ")";
                return;
            }
        } catch (const std::exception& e) {
            report.reason = "sample " + std::to_string(s) + ": the provider threw: " + e.what();
            return;
        }
        if (original.size() != candidate.size()) {
            report.reason = "sample " + std::to_string(s) + ": " + std::to_string(candidate.size()) +
                            " outputs instead of " + std::to_string(original.size());
            return;
        }
        for (size_t i = 0; i < original.size(); ++i) {
            OutputComparison c = compareOutput(original[i], candidate[i], tolerance);
            c.sample = int(s);
            c.path = std::to_string(i);
            report.maxAbsError = std::max(report.maxAbsError, c.maxAbsError);
            report.maxRelError = std::max(report.maxRelError, c.maxRelError);
            if (!c.withinTolerance && report.reason.empty())
                report.reason =
                    "sample " + std::to_string(s) + ", output " + c.path + ": " +
                    (c.problem.empty() ? "max abs error " + std::to_string(c.maxAbsError) + " exceeds the tolerance"
                                       : c.problem);
            report.outputs.push_back(std::move(c));
        }
    }
}

} // namespace

CorrectnessReport checkProvider(KernelProvider& provider, const c10::OperatorHandle& op,
                                const std::vector<torch::jit::Stack>& samples, std::optional<Tolerance> tolerance)
{
    CorrectnessReport report = emptyReport(provider, samples);
    if (!provider.prepare(samples)) {
        report.reason = "not eligible: prepare() rejected a sample";
        return report;
    }
    compareOnSamples(provider, op, samples, tolerance, /*declinesAllowed=*/false, report);
    report.passed = report.reason.empty();
    return report;
}

CorrectnessReport checkServedCalls(KernelProvider& provider, const c10::OperatorHandle& op,
                                   const std::vector<torch::jit::Stack>& samples, std::optional<Tolerance> tolerance)
{
    CorrectnessReport report = emptyReport(provider, samples);
    compareOnSamples(provider, op, samples, tolerance, /*declinesAllowed=*/true, report);
    report.passed = report.reason.empty();
    return report;
}

} // namespace measure
} // namespace kforge
