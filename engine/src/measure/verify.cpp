// SPDX-License-Identifier: Apache-2.0
// kforge verify: the plan's forward against the baseline's on the model's own outputs, then where it diverges.
#include "measure/module_comparison.h"
#include "measure/output_check.h"
#include "measure/tensor_agreement.h"
#include "model/forward_state.h"
#include "model/output_digest.h"
#include "model/session_impl.h"
#include "runtime/observer.h"

#include <kforge/error.h>
#include <kforge/functions.h>
#include <kforge/model_session.h>
#include <kforge/module_path.h>
#include <kforge/runtime.h>
#include <kforge/verify.h>

#include <algorithm>

namespace kforge {
namespace {

constexpr const char* kWhere = "verify";

// Counts forwards for the progress callback; a cancel stops before the next one. Every forward starts from the saved
// state (buffers, attributes and, when replayed, the random generators).
class ForwardCounter {
public:
    ForwardCounter(const ProgressCallback& progress, int total, SavedForwardState& state)
        : m_progress(progress), m_total(total), m_state(state)
    {
    }
    void grow(int more) { m_total += more; }
    c10::IValue forward(ModelSession& session)
    {
        m_state.restore();
        c10::IValue output = guardedForward(sessionImpl(session));
        if (!keepGoing(m_progress, ++m_done, m_total))
            throw Error(kWhere, "cancelled");
        return output;
    }

private:
    const ProgressCallback& m_progress;
    int m_total;
    SavedForwardState& m_state;
    int m_done = 0;
};

// The first enabled entry for a function that draws random numbers itself (dropout): replaying the generators
// would judge its draws against the original's, which an exact replacement need not match. -1 when none.
int entryDrawingRandomNumbers(const Plan& plan)
{
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        if (!plan.entries[i].enabled)
            continue;
        const auto function = functionFromName(plan.entries[i].function);
        if (function && functionInfo(*function).category == "dropout")
            return int(i);
    }
    return -1;
}

// The enabled entries whose scope holds the module (as calls run: an entry on a shared module's second name holds
// the calls made under its first).
std::vector<int> entriesAt(const ModelSession& session, const Plan& plan, const std::string& module)
{
    std::vector<int> out;
    for (size_t i = 0; i < plan.entries.size(); ++i)
        if (plan.entries[i].enabled &&
            module_path::isWithin(module, runScopeOf(sessionImpl(session), plan.entries[i].scope)))
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
        measure::PlanModuleComparer plan(baseline, options.thresholds, sessionImpl(session).forksTasks);
        {
            auto applied = runtime.applied();
            runtime::ObserverScope watch(plan);
            forwards.forward(session);
        }
        ++report.passes;
        mergeModules(report.modules, plan.modules());
        if (plan.divergence()) {
            report.divergence = plan.divergence();
            report.divergence->entries = entriesAt(session, runtime.plan(), report.divergence->module);
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
    VerifyReport report;
    const int drawing = entryDrawingRandomNumbers(plan);
    const bool replay = options.replayRandomness && drawing < 0;
    report.randomness =
        replay ? "replayed: every forward started from the same random generator state"
        : drawing >= 0
            ? "fresh: entry " + std::to_string(drawing) + " (" + plan.entries[size_t(drawing)].function +
                  ") draws random numbers itself, so outputs that move are judged against their spread"
            : "fresh: each forward draws its own random numbers; outputs that move are judged against their spread";
    SavedForwardState state(sessionImpl(session),
                            replay ? SavedForwardState::Randomness::Replayed : SavedForwardState::Randomness::Fresh);
    ForwardCounter forwards(options.progress, measure::kFirstBaselines + 1, state);
    int baselineCalls = 0;
    measure::OutputCheck check = measure::checkOutputs(
        [&] {
            if (++baselineCalls > measure::kFirstBaselines) // the check takes more: the outputs move
                forwards.grow(1);
            return forwards.forward(session);
        },
        [&] {
            auto applied = runtime.applied();
            return forwards.forward(session);
        },
        options.thresholds);
    report.baselineForwards = check.baselineForwards;
    report.passed = check.passed();
    report.inconclusive = check.inconclusive();
    report.outputs = std::move(check.judged.outputs);
    report.nondeterminism = std::move(check.judged.nondeterminism);
    const bool anyFailed = !report.passed && !report.inconclusive && !report.outputs.empty();
    const auto finish = [&] {
        state.restore();
        report.restoredState = state.restored();
        for (const std::string& p : state.changedParameters())
            report.restoredState.push_back("parameter " + p + " (written in place by a forward: not put back)");
        return report;
    };
    if (report.outputs.empty())
        report.localisationNote = "the forward returns no output to compare";
    if (!report.nondeterminism.empty()) {
        if (anyFailed)
            report.localisationNote = "not located: the model's outputs differ between forwards without the plan, "
                                      "so module outputs that differ may differ without the plan too";
        return finish();
    }
    if (!report.outputs.empty() && ((!report.passed && options.locate) || options.compareModules))
        locate(session, runtime, options, forwards, report);
    return finish();
}

} // namespace kforge
