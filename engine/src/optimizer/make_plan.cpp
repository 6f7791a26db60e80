// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>
#include <kforge/generator_sdk.h>
#include <kforge/model_session.h>
#include <kforge/module_path.h>
#include <kforge/optimizer.h>
#include <kforge/profiling.h>
#include <kforge/provider_catalog.h>
#include <kforge/verify.h>

#include "measure/benchmark_lock.h"
#include "measure/correctness.h"
#include "model/forward_state.h"
#include "optimizer/call_memory.h"
#include "optimizer/candidate_timing.h"
#include "optimizer/sample_capture.h"
#include "optimizer/scope_selection.h"
#include "optimizer/settings_tuner.h"
#include "runtime/clock.h"
#include "runtime/mode_key.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <set>

namespace kforge {
namespace {

void log(const OptimizeOptions& o, const std::string& line)
{
    if (o.log)
        o.log(line);
}

// Settings to try for a provider type: every value of each enumerated setting (e.g. SDPA backends).
std::vector<nlohmann::json> settingsVariants(const ProviderTypeInfo& info)
{
    std::vector<nlohmann::json> variants{{{"type", info.typeName}}};
    for (const auto& [key, schema] : info.settingsSchema.items()) {
        if (!schema.contains("enum"))
            continue;
        std::vector<nlohmann::json> next;
        for (const auto& v : variants)
            for (const auto& value : schema["enum"]) {
                nlohmann::json s = v;
                s[key] = value;
                next.push_back(std::move(s));
            }
        variants = std::move(next);
    }
    return variants;
}

bool runsOn(const ProviderTypeInfo& info, const std::string& device)
{
    return std::find(info.devices.begin(), info.devices.end(), device) != info.devices.end();
}

// One generation task: submitted before the providers are evaluated, collected when its function's turn comes.
struct PendingGeneration {
    std::string generator;
    std::future<GenerationResult> result;
    std::chrono::steady_clock::time_point deadline;
    std::string failure; // set when prepare or submit already failed
};

bool wanted(const std::vector<std::string>& names, const std::string& name)
{
    return std::find(names.begin(), names.end(), "all") != names.end() ||
           std::find(names.begin(), names.end(), name) != names.end();
}

// Submits every wanted generator that handles `function` on the device and accepts its samples.
std::vector<PendingGeneration> submitGeneration(Function function, const optimizer::ObservedSamples& samples,
                                                const OptimizeOptions& options)
{
    std::vector<PendingGeneration> pending;
    for (const KernelGeneratorInfo& info : GeneratorRegistry::instance().list()) {
        if (!wanted(options.generators, info.name))
            continue;
        PendingGeneration p;
        p.generator = info.name;
        try {
            const auto generator = info.create();
            const auto devices = generator->devices();
            const auto functions = generator->functions();
            if (std::find(devices.begin(), devices.end(), options.device) == devices.end() ||
                std::find(functions.begin(), functions.end(), function) == functions.end())
                continue;
            if (!generator->prepare(function, samples.unique)) {
                p.failure = "prepare() rejected an observed sample";
            } else {
                p.deadline = std::chrono::steady_clock::now() +
                             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(options.generationTimeoutSeconds));
                p.result = generator->submit(function, samples.unique);
            }
        } catch (const std::exception& e) {
            p.failure = std::string("generator threw: ") + e.what();
        }
        pending.push_back(std::move(p));
    }
    return pending;
}

// Waits for a task until its deadline: the settings it generated, or why there are none (`failure`).
nlohmann::json collectGeneration(PendingGeneration& p, double timeoutSeconds, std::string& description,
                                 std::string& failure)
{
    if (!p.failure.empty()) {
        failure = p.failure;
        return {};
    }
    if (p.result.wait_until(p.deadline) != std::future_status::ready) {
        char text[96];
        std::snprintf(text, sizeof text, "generation timed out after %g s", timeoutSeconds);
        failure = text;
        return {};
    }
    try {
        GenerationResult r = p.result.get();
        description = r.description;
        if (!r.error.empty())
            failure = "generation failed: " + r.error;
        else if (!r.settings.is_object() || !r.settings.contains("type"))
            failure = "generation failed: the generator returned no provider settings";
        return failure.empty() ? r.settings : nlohmann::json();
    } catch (const std::exception& e) {
        failure = std::string("generation failed: ") + e.what();
        return {};
    }
}

// What a kept entry was measured on: each observed signature once, with the speedup found there.
EntryMeasurement measurementOf(const std::vector<const torch::jit::Stack*>& samples, const SpeedComparison& speed)
{
    EntryMeasurement m;
    for (const torch::jit::Stack* sample : samples) {
        const std::string signature = optimizer::signatureOf(*sample);
        if (std::find(m.signatures.begin(), m.signatures.end(), signature) == m.signatures.end())
            m.signatures.push_back(signature);
    }
    m.speedup = speed.speedup;
    if (speed.enoughRounds()) {
        m.speedupLow = speed.low;
        m.speedupHigh = speed.high;
    }
    return m;
}

EntryMeasurement measurementOf(const std::vector<torch::jit::Stack>& samples, const SpeedComparison& speed)
{
    std::vector<const torch::jit::Stack*> pointers;
    for (const torch::jit::Stack& s : samples)
        pointers.push_back(&s);
    return measurementOf(pointers, speed);
}

// Step 5 (granularity module/auto): where the function's calls differ between modules, times every correct
// candidate and the original on each signature alone and, when per-module choices win, replaces the function's
// model-wide entry with entries per module scope.
void planPerModule(FunctionReport& fr, const std::vector<CandidateReport*>& judged,
                   const optimizer::ObservedSamples& samples, const c10::OperatorHandle& op,
                   const OptimizeOptions& options, Plan& plan)
{
    std::set<std::string> scopes;
    for (const auto& counts : samples.scopeCounts)
        for (const auto& [scope, _] : counts)
            scopes.insert(scope);
    std::vector<CandidateReport*> correct;
    for (CandidateReport* c : judged)
        if (c->eligible && c->correctness.passed && c->overBudget.empty())
            correct.push_back(c);
    if (scopes.size() < 2 || correct.empty())
        return;
    std::vector<std::unique_ptr<KernelProvider>> providers;
    for (const CandidateReport* c : correct) {
        providers.push_back(ProviderRegistry::instance().create(c->settings));
        providers.back()->prepare(samples.unique);
    }
    std::vector<optimizer::SignatureTimes> times(samples.unique.size());
    {
        c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
        std::lock_guard timing(measure::benchmarkMutex());
        for (size_t i = 0; i < samples.unique.size(); ++i) {
            optimizer::SignatureTimes& t = times[i];
            t.scopeCounts = samples.scopeCounts[i];
            t.originalUs = std::numeric_limits<double>::infinity();
            t.candidateUs.assign(providers.size(), std::numeric_limits<double>::infinity());
            t.candidateRounds.resize(providers.size());
            const std::vector<const torch::jit::Stack*> one{&samples.unique[i]};
            const auto timeOriginal = [&] {
                return optimizer::timeRound(one, options.device, [&](torch::jit::Stack& s) { op.callBoxed(s); }).us;
            };
            const auto timeCandidate = [&](size_t k) {
                return optimizer::timeRound(one, options.device,
                                            [&](torch::jit::Stack& s) {
                                                if (!providers[k]->call(op, s).wasServed())
                                                    op.callBoxed(s); // declined: the original serves, as at run time
                                            })
                    .us;
            };
            for (int round = -1; round < options.benchmarkRounds; ++round) { // the first round warms up
                const bool originalFirst = round % 2 == 0;                   // the order alternates
                const double o = originalFirst ? timeOriginal() : 0.0;
                std::vector<double> us(providers.size());
                for (size_t k = 0; k < providers.size(); ++k)
                    us[k] = timeCandidate(k);
                const double original = originalFirst ? o : timeOriginal();
                if (round < 0)
                    continue;
                for (size_t k = 0; k < providers.size(); ++k) {
                    t.candidateUs[k] = std::min(t.candidateUs[k], us[k]);
                    t.candidateRounds[k].push_back(us[k]);
                }
                t.originalUs = std::min(t.originalUs, original);
                t.originalRounds.push_back(original);
            }
        }
    }
    const auto [wideChoice, wideUs] = optimizer::chooseModelWide(times, providers.size());
    const auto choices = optimizer::choosePerScope(times, providers.size());
    double perModuleUs = 0;
    bool differs = false;
    for (const auto& c : choices) {
        perModuleUs += c.chosenUs;
        differs = differs || c.candidate != wideChoice;
    }
    if (!differs)
        return;
    char gain[160];
    std::snprintf(gain, sizeof gain, "per module %.1f us against %.1f us for one choice for the model", perModuleUs,
                  wideUs);
    if (options.granularity == OptimizeOptions::Granularity::Auto && !(perModuleUs <= 0.97 * wideUs)) {
        fr.perModule = std::string("kept one choice for the model: ") + gain + " (auto needs 3%)";
        return;
    }
    // The per-module entries replace the model-wide one.
    plan.entries.erase(std::remove_if(plan.entries.begin(), plan.entries.end(),
                                      [&](const PlanEntry& e) { return e.function == fr.function && e.scope.empty(); }),
                       plan.entries.end());
    fr.granularity = "module";
    fr.perModule = gain;
    // The candidates' verdicts follow the per-module choice: kept where some module uses it.
    for (CandidateReport* c : correct) {
        const bool used = std::any_of(choices.begin(), choices.end(), [&](const auto& choice) {
            return choice.candidate >= 0 && correct[size_t(choice.candidate)] == c;
        });
        c->kept = used;
        c->rejected = used ? "" : "not the fastest in any module";
    }
    for (const auto& c : choices) {
        std::string shapes;
        std::vector<const torch::jit::Stack*> inScope;
        for (size_t i = 0; i < samples.unique.size(); ++i)
            if (times[i].scopeCounts.count(c.scope)) {
                shapes += (shapes.empty() ? "" : ", ") + optimizer::signatureOf(samples.unique[i]);
                inScope.push_back(&samples.unique[i]);
            }
        const double speedup = c.candidate >= 0 ? c.speed.speedup : 1.0;
        const std::string where = module_path::displayName(c.scope);
        char line[256];
        std::snprintf(line, sizeof line, "%ld call(s) of %s: %.2fx the original's speed", c.calls, shapes.c_str(),
                      speedup);
        fr.perModule += "; " + where + ": " +
                        (c.candidate < 0 ? std::string("original") : correct[size_t(c.candidate)]->provider) + " (" +
                        line + ")";
        PlanEntry e;
        e.scope = c.scope;
        e.function = fr.function;
        if (c.candidate >= 0) {
            e.provider = correct[size_t(c.candidate)]->settings;
            e.note = std::string("make_plan, per module: ") + line;
            e.measured = measurementOf(inScope, c.speed);
        } else {
            // The original here, inside a module whose entry would otherwise serve these calls.
            const bool covered = std::any_of(choices.begin(), choices.end(), [&](const auto& other) {
                return other.candidate >= 0 && other.scope != c.scope && module_path::isWithin(c.scope, other.scope);
            });
            if (!covered)
                continue;
            e.provider = {{"type", referenceProviderType(*functionFromName(fr.function))}};
            e.note = std::string("make_plan, per module: no provider is measurably faster here (") + line +
                     "), inside a module with another provider";
        }
        plan.entries.push_back(std::move(e));
    }
}

// Why the plan's outputs fail, in one line: where they diverge first, or the first failing output.
std::string divergenceText(const VerifyReport& report)
{
    if (report.divergence)
        return "the model's output diverges at " + module_path::displayName(report.divergence->module) + " (" +
               report.divergence->output.problem + ")";
    for (const TensorAgreement& a : report.outputs)
        if (!a.passed)
            return "output " + a.path + " fails (" + a.problem + ")";
    return "the outputs fail";
}

// Step 6: verify the plan end to end; while it fails, drop the entries in effect where it diverges first (every
// entry when no module is named), and mark their candidates rejected.
void verifyMadePlan(ModelSession& session, OptimizeResult& result, const OptimizeOptions& options)
{
    while (result.plan.hasEnabledEntry()) {
        result.verification = verifyPlan(session, result.plan);
        if (result.verification->passed)
            return;
        std::vector<int> culprits;
        if (result.verification->divergence)
            culprits = result.verification->divergence->entries;
        if (culprits.empty())
            for (size_t i = 0; i < result.plan.entries.size(); ++i)
                culprits.push_back(int(i));
        const std::string why = divergenceText(*result.verification);
        std::sort(culprits.rbegin(), culprits.rend());
        for (int index : culprits) {
            const PlanEntry& e = result.plan.entries[size_t(index)];
            const std::string line = e.function + " -> " + e.providerType() + ": " + why;
            result.droppedByVerify.push_back(line);
            log(options, "  verify dropped " + line);
            for (CandidateReport& c : result.candidates)
                if (c.kept && c.function == e.function && c.settings == e.provider) {
                    c.kept = false;
                    c.rejected = "ruins the model's output: " + why;
                }
            result.plan.entries.erase(result.plan.entries.begin() + index);
        }
    }
}

// Why a candidate adding `growthBytes` at its calls could take the forward's peak beyond the budget, after the
// candidates kept before it added `keptGrowthBytes`; "" when it cannot.
std::string peakBudgetBreach(std::int64_t growthBytes, std::int64_t keptGrowthBytes, std::int64_t modelPeakBytes,
                             double budgetPercent)
{
    if (growthBytes <= 0)
        return "";
    const double worst = double(growthBytes + std::max<std::int64_t>(keptGrowthBytes, 0));
    const double percent = modelPeakBytes > 0 ? worst / double(modelPeakBytes) * 100.0 : INFINITY;
    if (percent <= budgetPercent)
        return "";
    char text[160];
    std::snprintf(text, sizeof text, "could raise the forward's peak (%s) by %s%.1f%%, beyond the budget of +%g%%",
                  bytesText(double(modelPeakBytes)).c_str(), std::isinf(percent) ? "" : "+", percent, budgetPercent);
    return "peak memory: needs " + bytesText(double(growthBytes)) + " more per call than the original, which " + text;
}

// With a peak budget: what each correct candidate's call adds beyond the original's on the observed samples,
// judged against what is left of the budget.
void measurePeakGrowth(const std::vector<const torch::jit::Stack*>& samples, const c10::OperatorHandle& op,
                       const std::vector<std::pair<size_t, std::unique_ptr<KernelProvider>>>& correct,
                       std::int64_t keptGrowthBytes, std::int64_t modelPeakBytes, const OptimizeOptions& options,
                       std::vector<CandidateReport>& candidates)
{
    c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
    const std::int64_t original =
        optimizer::callPeakBytes(samples, options.device, [&](torch::jit::Stack& s) { op.callBoxed(s); });
    for (const auto& [index, provider] : correct) {
        CandidateReport& c = candidates[index];
        c.peakGrowthBytes =
            optimizer::callPeakBytes(samples, options.device,
                                     [&op, p = provider.get()](torch::jit::Stack& s) { p->call(op, s); }) -
            original;
        c.overBudget =
            peakBudgetBreach(*c.peakGrowthBytes, keptGrowthBytes, modelPeakBytes, *options.maxPeakIncreasePercent);
        if (!c.overBudget.empty())
            log(options, "  " + c.function + ": " + c.provider + " rejected: " + c.overBudget);
    }
}

// The plan made, measured: while its forward's peak is beyond the budget, the entry whose candidate adds the most
// at its calls is dropped (the last of equals).
void holdPeakBudget(ModelSession& session, OptimizeResult& result, const OptimizeOptions& options)
{
    const double budget = *options.maxPeakIncreasePercent;
    for (;;) {
        result.peak = measurePeakChange(session, result.plan, options.device);
        if (result.peak->percent() <= budget || !result.plan.hasEnabledEntry())
            return;
        const auto candidateOf = [&](const PlanEntry& e) {
            return std::find_if(result.candidates.begin(), result.candidates.end(), [&](const CandidateReport& c) {
                return c.kept && c.function == e.function && c.settings == e.provider;
            });
        };
        const auto growthOf = [&](const PlanEntry& e) {
            const auto c = candidateOf(e);
            return c == result.candidates.end() ? std::int64_t(0) : c->peakGrowthBytes.value_or(0);
        };
        size_t worst = 0;
        for (size_t i = 1; i < result.plan.entries.size(); ++i)
            if (growthOf(result.plan.entries[i]) >= growthOf(result.plan.entries[worst]))
                worst = i;
        char budgetText[48];
        std::snprintf(budgetText, sizeof budgetText, "beyond the budget of +%g%%", budget);
        const std::string why = "peak memory: with the plan the forward's peak goes " +
                                describePeakChange(*result.peak) + ", " + budgetText;
        const PlanEntry& e = result.plan.entries[worst];
        result.droppedByBudget.push_back(e.function + " -> " + e.providerType() + ": " + why);
        log(options, "  peak budget dropped " + result.droppedByBudget.back());
        if (const auto c = candidateOf(e); c != result.candidates.end()) {
            c->kept = false;
            c->rejected = why;
        }
        result.plan.entries.erase(result.plan.entries.begin() + std::ptrdiff_t(worst));
    }
}
} // namespace

double defaultGenerationTimeoutSeconds()
{
    if (const char* env = std::getenv("KFORGE_GENERATION_TIMEOUT")) {
        char* end = nullptr;
        const double seconds = std::strtod(env, &end);
        if (end != env && seconds > 0)
            return seconds;
    }
    return 60.0;
}

void selectBest(std::vector<CandidateReport*>& candidates, double originalLatencyUs)
{
    // The figure the user sees beside each candidate ranks them: a candidate shown faster is never called slower.
    const auto ranksAbove = [](const CandidateReport& a, const CandidateReport& b) {
        return a.speed.speedup != b.speed.speedup ? a.speed.speedup > b.speed.speedup : a.latencyUs < b.latencyUs;
    };
    CandidateReport* best = nullptr;
    for (CandidateReport* c : candidates) {
        c->originalLatencyUs = originalLatencyUs;
        if (!c->sameAs.empty() || !c->eligible || !c->correctness.passed || !c->overBudget.empty())
            continue;
        if (!best || ranksAbove(*c, *best))
            best = c;
    }
    for (CandidateReport* c : candidates) {
        if (!c->sameAs.empty())
            c->rejected = "the same provider and settings as " + c->sameAs + " (measured once, above)";
        else if (!c->eligible)
            c->rejected = "not eligible: " + c->correctness.reason;
        else if (!c->correctness.passed)
            c->rejected = "incorrect: " + c->correctness.reason;
        else if (!c->overBudget.empty())
            c->rejected = c->overBudget;
        else if (c != best) {
            char speeds[96];
            std::snprintf(speeds, sizeof speeds, ": %.2fx the original's speed, against its %.2fx", c->speed.speedup,
                          best->speed.speedup);
            c->rejected = "slower than " + best->provider + speeds;
        } else if (c->speed.verdict != SpeedVerdict::Faster)
            c->rejected = "against the original, " + describe(c->speed);
        else
            c->kept = true;
    }
}

OptimizeResult makePlan(ModelSession& session, const OptimizeOptions& options)
{
    // An AOTInductor package's generated code calls no provider: a plan for it would be empty, said nowhere.
    if (const std::string why = session.planRefusal(); !why.empty())
        throw Error("optimize", "nothing to optimize: " + why);
    // Its hundreds of forwards leave the model as they found it (buffers, attributes, random generators).
    SavedForwardState state(sessionImpl(session), SavedForwardState::Randomness::Fresh);
    for (const std::string& name : options.providers)
        if (!ProviderRegistry::instance().find(name))
            throw Error("optimize --providers", "no provider type '" + name + "' (kforge providers lists them)");
    OptimizeResult result;
    // 1. Profile the model as it is, ranking functions by their share of the time.
    ProfileOptions profileOptions;
    profileOptions.device = options.device;
    profileOptions.warmupIterations = options.warmupIterations;
    profileOptions.iterations = options.iterations;
    profileOptions.progress = options.progress;
    profileOptions.recordMemory = options.maxPeakIncreasePercent.has_value();
    log(options, "profiling " + session.displayName() + " on " + options.device);
    const ProfileRun run = profile(session, profileOptions);
    if (run.cancelled) {
        result.cancelled = true;
        return result;
    }
    const auto ranked = statistics(run.records, GroupBy::Function);
    const std::int64_t modelPeakBytes = summarizeMemory(run).peakBytes; // 0 without a budget
    std::int64_t keptGrowthBytes = 0;                                   // what the candidates kept add, at most

    // 2. Observe the samples of one forward.
    optimizer::SampleCapture capture;
    session.forwardDiscardingOutputs();
    capture.stop(); // the benchmarks below are not samples

    // 3a. Generation runs meanwhile: every function's tasks are submitted now, collected at its turn.
    std::map<std::string, std::vector<PendingGeneration>> generation;
    if (!options.generators.empty())
        for (const StatRow& row : ranked) {
            const auto function = functionFromName(row.key);
            if (!function || row.share * 100.0 < options.minSharePercent)
                continue;
            const optimizer::ObservedSamples& observed = capture.samples(*function);
            if (!observed.unique.empty())
                generation[row.key] = submitGeneration(*function, observed, options);
        }

    const auto providers = ProviderRegistry::instance().list();
    at::NoGradGuard noGrad;
    for (size_t tried = 0; tried < ranked.size(); ++tried) {
        const StatRow& row = ranked[tried];
        if (!keepGoing(options.progress, int(tried), int(ranked.size()))) {
            result.cancelled = true;
            break;
        }
        const auto function = functionFromName(row.key);
        if (!function)
            continue; // ops outside any replaceable function
        FunctionReport fr;
        fr.function = row.key;
        fr.sharePercent = row.share * 100.0;
        const optimizer::ObservedSamples& samples = capture.samples(*function);
        const auto bench = optimizer::benchmarkSamples(samples);
        fr.uniqueSamples = int(samples.unique.size());
        fr.benchmarkSamples = int(bench.size());
        if (fr.sharePercent < options.minSharePercent) {
            fr.skipped = "below the minimum time share";
            result.functions.push_back(fr);
            continue;
        }
        if (samples.unique.empty()) {
            fr.skipped = "no samples observed";
            result.functions.push_back(fr);
            continue;
        }
        const OpOverload& normalForm = functionInfo(*function).normalForm;
        const auto op =
            c10::Dispatcher::singleton().findSchema({std::string(normalForm.name), std::string(normalForm.overload)});
        if (!op) {
            fr.skipped = "the op is missing from this LibTorch";
            result.functions.push_back(fr);
            continue;
        }
        // 3. Every eligible provider: prepare -> correctness; those correct are timed together against the original
        // below (3c).
        const size_t first = result.candidates.size();
        double original = std::numeric_limits<double>::infinity();
        std::vector<std::pair<size_t, std::unique_ptr<KernelProvider>>> correct; // candidate index, its provider
        const auto evaluate = [&](CandidateReport& c) {
            try {
                auto provider = ProviderRegistry::instance().create(c.settings);
                c.provider = provider->displayName();
                c.eligible = provider->prepare(samples.unique);
                if (!c.eligible) {
                    c.correctness.reason = "prepare() rejected an observed sample";
                } else {
                    c.correctness = measure::checkProvider(*provider, *op, samples.unique);
                    if (c.correctness.passed)
                        correct.emplace_back(result.candidates.size(), std::move(provider)); // c is pushed next
                }
            } catch (const std::exception& e) {
                c.correctness.passed = false;
                c.correctness.reason = e.what();
            }
            log(options, "  " + fr.function + ": " + (c.provider.empty() ? c.settings.dump() : c.provider) +
                             (c.generator.empty() ? "" : " (generated by " + c.generator + ")") +
                             (c.correctness.passed ? "" : " rejected: " + c.correctness.reason));
        };
        std::vector<std::string> referencesLeftOut; // named when nothing else could be tried
        for (const ProviderTypeInfo& info : providers) {
            if (info.function != *function || !runsOn(info, options.device))
                continue;
            const bool reference = info.typeName.rfind("Aten", 0) == 0;
            if (options.providers.empty() && reference && !options.includeReferenceProviders)
                referencesLeftOut.push_back(info.typeName);
            if (!options.providers.empty() ? !wanted(options.providers, info.typeName)
                                           : !options.includeReferenceProviders && reference)
                continue;
            for (const nlohmann::json& settings : settingsVariants(info)) {
                CandidateReport c;
                c.function = fr.function;
                c.settings = settings;
                evaluate(c);
                result.candidates.push_back(std::move(c));
            }
        }
        // 3b. What the generators made for this function, judged like the providers.
        for (PendingGeneration& pending : generation[fr.function]) {
            CandidateReport c;
            c.function = fr.function;
            c.generator = pending.generator;
            std::string failure;
            c.settings = collectGeneration(pending, options.generationTimeoutSeconds, c.generation, failure);
            // Settings spelled out at their defaults are the provider as it is: its name (the settings that differ
            // from the defaults) tells the same configuration.
            std::string name;
            if (failure.empty())
                try {
                    name = ProviderRegistry::instance().create(c.settings)->displayName();
                } catch (const std::exception&) {
                    // evaluate() reports it
                }
            const auto same = std::find_if(
                result.candidates.begin() + std::ptrdiff_t(first), result.candidates.end(),
                [&](const CandidateReport& o) { return !name.empty() && o.generator.empty() && o.provider == name; });
            if (failure.empty() && same != result.candidates.end()) {
                c.provider = same->provider; // what it made is a candidate already tried: one measurement of it
                c.sameAs = same->provider;
            } else if (failure.empty()) {
                evaluate(c);
            } else {
                c.provider = pending.generator;
                c.correctness.reason = failure;
                c.generation = c.generation.empty() ? failure : c.generation;
                log(options, "  " + fr.function + ": " + pending.generator + " " + failure);
            }
            result.candidates.push_back(std::move(c));
        }
        // 3c. The correct candidates and the original in the same rounds: every ratio pairs with the same original
        // rounds, so the speedups shown rank the candidates fairly.
        if (!correct.empty()) {
            std::vector<optimizer::SampleCall> calls;
            for (auto& [index, provider] : correct)
                calls.push_back([&op, p = provider.get()](torch::jit::Stack& s) { p->call(*op, s); });
            c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
            std::lock_guard timing(measure::benchmarkMutex());
            const std::vector<optimizer::PairedRounds> rounds = optimizer::benchmarkCandidatesTogether(
                bench, options.benchmarkRounds, options.device, calls, [&](torch::jit::Stack& s) { op->callBoxed(s); });
            for (size_t i = 0; i < correct.size(); ++i) {
                CandidateReport& c = result.candidates[correct[i].first];
                c.latencyUs = rounds[i].bestCandidateUs();
                c.speed = rounds[i].compare(options.maxDetectableChange, &c.stalls);
                original = std::min(original, rounds[i].bestOriginalUs());
            }
            if (options.maxPeakIncreasePercent) { // once per signature: the benchmark's repetitions add nothing
                std::vector<const torch::jit::Stack*> unique;
                for (const torch::jit::Stack& sample : samples.unique)
                    unique.push_back(&sample);
                measurePeakGrowth(unique, *op, correct, keptGrowthBytes, modelPeakBytes, options, result.candidates);
            }
        }
        fr.tried = result.candidates.size() > first;
        if (!fr.tried) {
            fr.skipped = "no provider for this function on " + options.device;
            if (!referencesLeftOut.empty()) // the tree's menu offers it: say why it was not tried
                fr.skipped += " but the reference " + referencesLeftOut.front() +
                              ", which runs the original op and is tried only when asked for (--include-reference)";
            result.functions.push_back(fr);
            continue;
        }
        // 4. The selection rule against the original's fastest round on the same samples.
        if (!std::isfinite(original)) {
            c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
            std::lock_guard timing(measure::benchmarkMutex());
            original = optimizer::timeRound(bench, options.device, [&](torch::jit::Stack& s) { op->callBoxed(s); }).us;
        }
        std::vector<CandidateReport*> mine;
        for (size_t i = first; i < result.candidates.size(); ++i)
            mine.push_back(&result.candidates[i]);
        selectBest(mine, original);
        for (CandidateReport* c : mine)
            if (c->kept) {
                keptGrowthBytes += std::max<std::int64_t>(c->peakGrowthBytes.value_or(0), 0);
                PlanEntry e;
                e.scope = "";
                e.function = fr.function;
                e.provider = c->settings;
                char speed[64];
                std::snprintf(speed, sizeof speed, "%.2fx faster than the original", c->speed.speedup);
                e.note = "make_plan: " + std::string(speed) + " on " + std::to_string(fr.benchmarkSamples) +
                         " observed samples" +
                         (c->generator.empty() ? "" : "; generated by " + c->generator + ": " + c->generation);
                e.measured = measurementOf(samples.unique, c->speed);
                result.plan.entries.push_back(std::move(e));
            }
        if (options.granularity != OptimizeOptions::Granularity::Model)
            planPerModule(fr, mine, samples, *op, options, result.plan);
        result.functions.push_back(fr);
        if (options.onFunction)
            options.onFunction(
                fr, std::vector<CandidateReport>(result.candidates.begin() + long(first), result.candidates.end()));
    }
    if (options.verifyOutputs && !result.cancelled) {
        log(options, "verifying the plan on the model's outputs");
        verifyMadePlan(session, result, options);
    }
    if (options.maxPeakIncreasePercent && !result.cancelled && result.plan.hasEnabledEntry()) {
        log(options, "measuring the plan's peak memory");
        holdPeakBudget(session, result, options);
    }
    stampProvenance(result.plan, options.device, options.writtenBy);
    stampModel(result.plan, session);
    return result;
}

} // namespace kforge
