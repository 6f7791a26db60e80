// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>
#include <kforge/functions.h>
#include <kforge/model_session.h>
#include <kforge/module_path.h>
#include <kforge/provider_sdk.h>
#include <kforge/revalidate.h>

#include "measure/benchmark_lock.h"
#include "measure/correctness.h"
#include "model/forward_state.h"
#include "optimizer/candidate_timing.h"
#include "optimizer/sample_capture.h"
#include "runtime/clock.h"
#include "runtime/mode_key.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <cstdio>

namespace kforge {
namespace {

std::string entryName(const Plan& plan, int index)
{
    const PlanEntry& e = plan.entries[size_t(index)];
    return "entry " + std::to_string(index) + " (" + module_path::displayName(e.scope) + ", " + e.function + " -> " +
           e.providerType() + ")";
}

std::string joined(const std::vector<std::string>& parts)
{
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : "; ") + p;
    return out;
}

// Whether any call of sample `i` was made inside `scope` (as it runs: runScopeOf) or below.
bool calledWithin(const optimizer::ObservedSamples& observed, size_t i, const std::string& scope)
{
    return std::any_of(observed.scopeCounts[i].begin(), observed.scopeCounts[i].end(),
                       [&](const auto& count) { return module_path::isWithin(count.first, scope); });
}

// Every signature of the model's calls of the entry's function inside its scope (`runScope`: as it runs), several
// calls of each and edge values (optimizer::checkSamples): the entry will serve them all, not only the ones it was
// measured on (a provider right on one shape and wrong on another was kept when only the recorded signatures were
// checked, and one wrong on negative inputs when only each signature's first call was). `note` says so when none
// of the recorded ones is called with these inputs.
optimizer::CheckSamples callsToCheck(const optimizer::ObservedSamples& observed, const PlanEntry& entry,
                                     const std::string& runScope, std::string& note)
{
    bool recordedCalled = false, anyInScope = false;
    for (size_t i = 0; i < observed.unique.size(); ++i) {
        if (!calledWithin(observed, i, runScope))
            continue;
        anyInScope = true;
        const std::string signature = optimizer::signatureOf(observed.unique[i]);
        recordedCalled = recordedCalled || (entry.measured && std::find(entry.measured->signatures.begin(),
                                                                        entry.measured->signatures.end(),
                                                                        signature) != entry.measured->signatures.end());
    }
    if (!recordedCalled && entry.measured && !entry.measured->signatures.empty() && anyInScope)
        note = "none of the recorded signatures is called with these inputs; checked on the calls that are";
    return optimizer::checkSamples(
        observed, [&](size_t i) { return calledWithin(observed, i, runScope); },
        [&](const std::string& scope) { return module_path::isWithin(scope, runScope); });
}

// The calls of one op the entry's provider will be given: the normal form's, or a Variant form's (another op's
// schema, passed to the provider as is). Every one of them is checked: an entry is never kept on calls it was not
// run on.
struct OpCalls {
    std::string opName;
    const c10::OperatorHandle* op = nullptr;
    std::vector<torch::jit::Stack> calls; // the model's calls, then edge values made from them
    int recorded = 0, edges = 0, signatures = 0;
};

std::vector<OpCalls> variantCallsToCheck(const optimizer::SampleCapture& capture, Function function,
                                         const std::string& runScope)
{
    std::vector<OpCalls> out;
    for (const auto& [name, variant] : capture.variantSamples(function)) {
        const optimizer::ObservedSamples& observed = variant.samples;
        optimizer::CheckSamples checked = optimizer::checkSamples(
            observed, [&](size_t i) { return calledWithin(observed, i, runScope); },
            [&](const std::string& scope) { return module_path::isWithin(scope, runScope); });
        if (checked.calls.empty())
            continue;
        OpCalls calls{name, &variant.op, std::move(checked.calls)};
        calls.recorded = checked.recorded;
        calls.edges = checked.edges;
        for (size_t i = 0; i < observed.unique.size(); ++i)
            calls.signatures += calledWithin(observed, i, runScope) ? 1 : 0;
        out.push_back(std::move(calls));
    }
    return out;
}

void revalidateEntry(PlanEntry& entry, EntryRevalidation& r, const optimizer::SampleCapture& capture, Function function,
                     const std::string& runScope, const std::string& device, const RevalidateOptions& options)
{
    const std::int64_t start = runtime::nowNs();
    std::string note;
    const optimizer::ObservedSamples& observed = capture.samples(function);
    const optimizer::CheckSamples checked = callsToCheck(observed, entry, runScope, note);
    // The recorded calls (several per signature), then the edge values made from them.
    const std::vector<torch::jit::Stack> calls(checked.calls.begin(), checked.calls.begin() + checked.recorded);
    const std::vector<torch::jit::Stack> edges(checked.calls.begin() + checked.recorded, checked.calls.end());
    std::vector<torch::jit::Stack> firstCalls; // one per signature: what the speed is timed on
    for (size_t i = 0; i < observed.unique.size(); ++i)
        if (calledWithin(observed, i, runScope))
            firstCalls.push_back(observed.unique[i]);
    const std::vector<OpCalls> variants = variantCallsToCheck(capture, function, runScope);
    r.signatures = int(firstCalls.size());
    r.calls = int(calls.size());
    r.edgeSamples = int(edges.size());
    for (const OpCalls& v : variants) {
        r.signatures += v.signatures;
        r.calls += v.recorded;
        r.edgeSamples += v.edges;
    }
    const auto finish = [&](bool kept, const std::string& verdict) {
        r.kept = kept;
        r.verdict = verdict + (note.empty() ? "" : " (" + note + ")");
        r.seconds = double(runtime::nowNs() - start) / 1e9;
        if (!kept) {
            entry.enabled = false;
            entry.note = "disabled by re-validation: " + r.verdict + (entry.note.empty() ? "" : "; " + entry.note);
        }
    };
    // Never kept unchecked: calls these inputs do not make may come with others (or in a form sampling missed).
    if (r.signatures == 0)
        return finish(false,
                      "not exercised here: '" + entry.function + "' is not called in " +
                          module_path::displayName(entry.scope) +
                          " with these inputs, so it could not be checked (re-validate with inputs that call it)");
    const OpOverload& normalForm = functionInfo(function).normalForm;
    const auto op =
        c10::Dispatcher::singleton().findSchema({std::string(normalForm.name), std::string(normalForm.overload)});
    if (!op && !calls.empty())
        return finish(false, "the op is missing from this LibTorch");
    try {
        auto provider = ProviderRegistry::instance().create(entry.provider);
        if (!provider->prepare(calls))
            return finish(false, "prepare() rejected a call of this model");
        if (!calls.empty()) {
            const CorrectnessReport correctness = measure::checkProvider(*provider, *op, calls);
            if (!correctness.passed)
                return finish(false, "incorrect here: " + correctness.reason);
            // Edge values of the same calls: served ones must match the original (a decline runs the original).
            const CorrectnessReport edge = measure::checkServedCalls(*provider, *op, edges);
            if (!edge.passed)
                return finish(false, "incorrect here on edge values (the model's calls negated, zeroed, times 8, "
                                     "with NaN and Inf): " +
                                         edge.reason);
        }
        std::string variantOps;
        for (const OpCalls& v : variants) {
            const CorrectnessReport correctness = measure::checkServedCalls(*provider, *v.op, v.calls);
            if (!correctness.passed)
                return finish(false, "incorrect here on its calls of " + v.opName + ": " + correctness.reason);
            variantOps += (variantOps.empty() ? "" : ", ") + v.opName;
        }
        const std::string correct = "correct on " + std::to_string(r.signatures) + " signature(s), " +
                                    std::to_string(r.calls) + " call(s) and " + std::to_string(r.edgeSamples) +
                                    " edge-value sample(s)" +
                                    (variantOps.empty() ? "" : " (calls of " + variantOps + " included)");
        if (!entry.measured || !entry.measured->measured())
            return finish(true, correct + "; not benchmarked (no measured speedup to compare with)");
        // Timed on the normal form's calls, or on the first Variant form's when the scope makes none.
        OpCalls timed = firstCalls.empty() ? variants.front() : OpCalls{"", &*op, firstCalls};
        if (firstCalls.empty()) // the model's calls only, not the edge values made from them
            timed.calls.resize(size_t(timed.recorded));
        std::vector<const torch::jit::Stack*> bench;
        for (const torch::jit::Stack& s : timed.calls)
            bench.push_back(&s);
        c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
        std::lock_guard timing(measure::benchmarkMutex());
        const auto deadline = start + std::int64_t(options.secondsPerEntry * 1e9);
        const optimizer::PairedRounds rounds = optimizer::benchmarkAgainstOriginal(
            bench, options.benchmarkRounds, device, [&](torch::jit::Stack& s) { provider->call(*timed.op, s); },
            [&](torch::jit::Stack& s) { timed.op->callBoxed(s); }, deadline);
        const SpeedComparison speed = rounds.compare();
        r.speedup = speed.speedup;
        char where[80];
        std::snprintf(where, sizeof where, " (%.2fx where it was measured)", entry.measured->speedup);
        if (speed.verdict != SpeedVerdict::Faster)
            return finish(false, correct + " but not faster here: " + describe(speed) + where);
        finish(true, correct + ", " + describe(speed) + where);
    } catch (const std::exception& e) {
        finish(false, std::string("failed here: ") + e.what());
    }
}

} // namespace

RevalidationReport revalidatePlan(ModelSession& session, Plan& plan, const RevalidateOptions& options)
{
    RevalidationReport report;
    report.hadProvenance = plan.provenance.has_value();
    if (!report.hadProvenance) {
        report.note = "not re-validated: the plan carries no provenance (AITune's, or written by hand)";
        return report;
    }
    const std::string device = session.device();
    const MachineFingerprint here = options.here ? *options.here : machineFingerprint(device);
    const std::vector<ProvenanceChange> changes = provenanceChanges(plan, here);
    if (changes.empty()) {
        report.note = "the plan's provenance matches this machine: not re-validated";
        return report;
    }
    std::vector<std::string> refused;
    for (const ProvenanceChange& c : changes)
        if (c.pluginChanged)
            refused.push_back(entryName(plan, c.entry) + ": " + joined(c.reasons));
    if (!refused.empty() && !options.acceptChangedPlugins)
        throw Error("plan",
                    "refused: a provider plugin differs from the one the plan was measured with: " + joined(refused) +
                        "; accept it to re-validate those entries here (--accept-changed-plugins)");

    at::NoGradGuard noGrad;
    optimizer::SampleCapture capture;
    {
        // The sampling forward leaves the model as it found it (buffers, attributes, random generators): landing a
        // plan never changes what the user's next forward computes.
        SavedForwardState state(sessionImpl(session), SavedForwardState::Randomness::Fresh);
        session.forwardDiscardingOutputs();
    }
    capture.stop();
    for (size_t i = 0; i < changes.size(); ++i) {
        EntryRevalidation r;
        r.entry = changes[i].entry;
        r.reasons = changes[i].reasons;
        PlanEntry& entry = plan.entries[size_t(r.entry)];
        if (!keepGoing(options.progress, int(i), int(changes.size()))) {
            report.cancelled = true;
            entry.enabled = false;
            r.verdict = "not re-validated (cancelled): disabled";
        } else if (const auto function = functionFromName(entry.function); !function) {
            entry.enabled = false;
            r.verdict = "disabled: unknown function '" + entry.function + "'";
        } else {
            if (options.log)
                options.log("re-validating " + entryName(plan, r.entry) + ": " + joined(r.reasons));
            revalidateEntry(entry, r, capture, *function, runScopeOf(sessionImpl(session), entry.scope), device,
                            options);
        }
        if (options.log)
            options.log("  " + entryName(plan, r.entry) + ": " + (r.kept ? "kept, " : "disabled, ") + r.verdict);
        report.entries.push_back(std::move(r));
    }
    return report;
}

} // namespace kforge
