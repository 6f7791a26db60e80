// SPDX-License-Identifier: Apache-2.0
// kforge verify: the plan's forward against the baseline's on the model's own outputs, then where it diverges.
#include "measure/module_comparison.h"
#include "measure/tensor_agreement.h"
#include "model/output_digest.h"
#include "model/session_impl.h"
#include "runtime/observer.h"

#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/module_path.h>
#include <kforge/runtime.h>
#include <kforge/verify.h>

#include <algorithm>

namespace kforge {
namespace {

constexpr const char* kWhere = "verify";

// Counts forwards for the progress callback; a cancel stops before the next one.
class ForwardCounter {
public:
    ForwardCounter(const ProgressCallback& progress, int total) : m_progress(progress), m_total(total) {}
    void grow(int more) { m_total += more; }
    c10::IValue forward(ModelSession& session)
    {
        c10::IValue output = guardedForward(sessionImpl(session));
        if (!keepGoing(m_progress, ++m_done, m_total))
            throw Error(kWhere, "cancelled");
        return output;
    }

private:
    const ProgressCallback& m_progress;
    int m_total;
    int m_done = 0;
};

// The enabled entries whose scope holds the module.
std::vector<int> entriesAt(const Plan& plan, const std::string& module)
{
    std::vector<int> out;
    for (size_t i = 0; i < plan.entries.size(); ++i)
        if (plan.entries[i].enabled && module_path::isWithin(module, plan.entries[i].scope))
            out.push_back(int(i));
    return out;
}

// Adds one window's per-module agreement to the report's (a module called in several windows is summed).
void mergeModules(std::vector<ModuleAgreement>& into, const std::vector<ModuleAgreement>& window)
{
    for (const ModuleAgreement& w : window) {
        const auto same = std::find_if(into.begin(), into.end(), [&](const auto& m) { return m.module == w.module; });
        if (same == into.end()) {
            into.push_back(w);
            continue;
        }
        same->calls += w.calls;
        same->outputsAgree = same->outputsAgree && w.outputsAgree;
        same->inputsAgree = same->inputsAgree && w.inputsAgree;
        same->maxAbsError = std::max(same->maxAbsError, w.maxAbsError);
        same->minCosine = std::min(same->minCosine, w.minCosine);
        same->newNonFinite += w.newNonFinite;
    }
}

// Windows of module calls, each a baseline forward that keeps its calls and a plan forward that compares against
// them, until one diverges or the calls run out.
void locate(ModelSession& session, KernelProviderRuntime& runtime, const VerifyOptions& options,
            ForwardCounter& forwards, VerifyReport& report)
{
    int first = 0;
    for (;;) {
        forwards.grow(2);
        measure::BaselineModuleRecorder baseline(first, options.moduleOutputBudgetBytes);
        {
            runtime::ObserverScope watch(baseline);
            forwards.forward(session);
        }
        measure::PlanModuleComparer plan(baseline, options.thresholds);
        {
            auto applied = runtime.applied();
            runtime::ObserverScope watch(plan);
            forwards.forward(session);
        }
        ++report.passes;
        mergeModules(report.modules, plan.modules());
        if (plan.divergence()) {
            report.divergence = plan.divergence();
            report.divergence->entries = entriesAt(runtime.plan(), report.divergence->module);
            return;
        }
        if (!plan.mismatch().empty()) {
            report.localisationNote = plan.mismatch();
            return;
        }
        const int end = baseline.windowEnd();
        if (end >= int(baseline.endOrder().size()) || end <= first) {
            if (report.passed) // compared for VerifyReport::modules only: nothing to locate
                return;
            report.localisationNote =
                baseline.endOrder().empty()
                    ? "the forward made no module call that could be compared"
                    : "no module call's output diverges while its inputs agree (" +
                          std::to_string(baseline.endOrder().size()) +
                          " module calls compared): the outputs diverge after the last module call ends";
            return;
        }
        first = end;
    }
}

} // namespace

VerifyReport verifyPlan(ModelSession& session, const Plan& plan, const VerifyOptions& options)
{
    if (!plan.hasEnabledEntry())
        throw Error(kWhere, "the plan has no enabled entry: there is nothing to verify");
    KernelProviderRuntime runtime(session, plan); // refuses a plan it cannot run, naming each problem
    ForwardCounter forwards(options.progress, 3);
    VerifyReport report;
    // The baseline twice: a model that disagrees with itself (random numbers, a buffer or an input it changes) must
    // not have its own spread blamed on the plan.
    const c10::IValue baseline = forwards.forward(session);
    const c10::IValue again = forwards.forward(session);
    c10::IValue withPlan;
    {
        auto applied = runtime.applied();
        withPlan = forwards.forward(session);
    }
    measure::OutputsJudged judged = measure::judgeOutputs(baseline, again, withPlan, options.thresholds);
    report.outputs = std::move(judged.outputs);
    report.nondeterminism = std::move(judged.nondeterminism);
    report.passed = !report.outputs.empty();
    for (const auto& o : report.outputs)
        report.passed = report.passed && o.passed;
    if (report.outputs.empty())
        report.localisationNote = "the forward returns no output to compare";
    if (!report.nondeterminism.empty()) {
        if (!report.passed)
            report.localisationNote = "not located: the model is not deterministic, so module outputs that differ "
                                      "may differ without the plan too";
        return report;
    }
    if (!report.outputs.empty() && ((!report.passed && options.locate) || options.compareModules))
        locate(session, runtime, options, forwards, report);
    return report;
}

} // namespace kforge
