// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>
#include <kforge/functions.h>
#include <kforge/model_session.h>
#include <kforge/module_path.h>
#include <kforge/provider_sdk.h>
#include <kforge/revalidate.h>

#include "measure/benchmark_lock.h"
#include "measure/correctness.h"
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

// The model's calls of the entry's function inside its scope, narrowed to the recorded signatures when any of them
// was called (a plan may be loaded with other inputs than it was measured on: then every call in scope counts).
std::vector<torch::jit::Stack> callsToCheck(const optimizer::ObservedSamples& observed, const PlanEntry& entry,
                                            std::string& note)
{
    std::vector<torch::jit::Stack> inScope, recorded;
    for (size_t i = 0; i < observed.unique.size(); ++i) {
        const bool within =
            std::any_of(observed.scopeCounts[i].begin(), observed.scopeCounts[i].end(),
                        [&](const auto& count) { return module_path::isWithin(count.first, entry.scope); });
        if (!within)
            continue;
        inScope.push_back(observed.unique[i]);
        const std::string signature = optimizer::signatureOf(observed.unique[i]);
        if (entry.measured && std::find(entry.measured->signatures.begin(), entry.measured->signatures.end(),
                                        signature) != entry.measured->signatures.end())
            recorded.push_back(observed.unique[i]);
    }
    if (!recorded.empty())
        return recorded;
    if (entry.measured && !entry.measured->signatures.empty() && !inScope.empty())
        note = "none of the recorded signatures is called with these inputs; checked on the calls that are";
    return inScope;
}

void revalidateEntry(PlanEntry& entry, EntryRevalidation& r, const optimizer::ObservedSamples& observed,
                     const std::string& device, const RevalidateOptions& options)
{
    const std::int64_t start = runtime::nowNs();
    std::string note;
    const std::vector<torch::jit::Stack> calls = callsToCheck(observed, entry, note);
    r.signatures = int(calls.size());
    const auto finish = [&](bool kept, const std::string& verdict) {
        r.kept = kept;
        r.verdict = verdict + (note.empty() ? "" : " (" + note + ")");
        r.seconds = double(runtime::nowNs() - start) / 1e9;
        if (!kept) {
            entry.enabled = false;
            entry.note = "disabled by re-validation: " + r.verdict + (entry.note.empty() ? "" : "; " + entry.note);
        }
    };
    if (calls.empty())
        return finish(true, "not checked: '" + entry.function + "' is not called in " +
                                module_path::displayName(entry.scope) + " with these inputs");
    const OpOverload& normalForm = functionInfo(*functionFromName(entry.function)).normalForm;
    const auto op =
        c10::Dispatcher::singleton().findSchema({std::string(normalForm.name), std::string(normalForm.overload)});
    if (!op)
        return finish(false, "the op is missing from this LibTorch");
    try {
        auto provider = ProviderRegistry::instance().create(entry.provider);
        if (!provider->prepare(calls))
            return finish(false, "prepare() rejected a call of this model");
        const CorrectnessReport correctness = measure::checkProvider(*provider, *op, calls);
        if (!correctness.passed)
            return finish(false, "incorrect here: " + correctness.reason);
        const std::string correct = "correct on " + std::to_string(calls.size()) + " signature(s)";
        if (!entry.measured || !entry.measured->measured())
            return finish(true, correct + "; not benchmarked (no measured speedup to compare with)");
        std::vector<const torch::jit::Stack*> bench;
        for (const torch::jit::Stack& s : calls)
            bench.push_back(&s);
        c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
        std::lock_guard timing(measure::benchmarkMutex());
        const auto deadline = start + std::int64_t(options.secondsPerEntry * 1e9);
        const optimizer::PairedRounds rounds = optimizer::benchmarkAgainstOriginal(
            bench, options.benchmarkRounds, device, [&](torch::jit::Stack& s) { provider->call(*op, s); },
            [&](torch::jit::Stack& s) { op->callBoxed(s); }, deadline);
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
    session.forwardDiscardingOutputs();
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
            revalidateEntry(entry, r, capture.samples(*function), device, options);
        }
        if (options.log)
            options.log("  " + entryName(plan, r.entry) + ": " + (r.kept ? "kept, " : "disabled, ") + r.verdict);
        report.entries.push_back(std::move(r));
    }
    return report;
}

} // namespace kforge
