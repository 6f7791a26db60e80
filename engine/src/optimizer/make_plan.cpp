// SPDX-License-Identifier: Apache-2.0
#include <kforge/generator_sdk.h>
#include <kforge/model_session.h>
#include <kforge/optimizer.h>
#include <kforge/profiler.h>

#include "optimizer/benchmark_lock.h"
#include "optimizer/correctness.h"
#include "optimizer/sample_capture.h"
#include "runtime/clock.h"
#include "runtime/mode_key.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/cuda.h>

#ifdef KFORGE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <map>
#include <mutex>

namespace kforge {
namespace {

void log(const OptimizeOptions& o, const std::string& line)
{
    if (o.log)
        o.log(line);
}

void synchronizeDevice(const std::string& device)
{
#ifdef KFORGE_WITH_CUDA
    if (device == "cuda")
        cudaDeviceSynchronize();
#endif
}

// Runs `call` once on every benchmark sample: one round, in µs.
double timeRound(const std::vector<const torch::jit::Stack*>& samples, const std::string& device,
                 const std::function<void(torch::jit::Stack&)>& call)
{
    std::vector<torch::jit::Stack> inputs;
    inputs.reserve(samples.size());
    for (const auto* s : samples)
        inputs.push_back(*s);
    synchronizeDevice(device);
    const std::int64_t start = runtime::nowNs();
    for (auto& stack : inputs)
        call(stack);
    synchronizeDevice(device);
    return double(runtime::nowNs() - start) / 1000.0;
}

// Candidate and original in alternating rounds, so load on the machine hits both alike; the fastest round
// of each counts (scheduling stalls only ever add time). Two untimed rounds warm caches and allocators.
std::pair<double, double> benchmarkAgainstOriginal(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                                   const std::string& device,
                                                   const std::function<void(torch::jit::Stack&)>& candidate,
                                                   const std::function<void(torch::jit::Stack&)>& original)
{
    double bestCandidate = std::numeric_limits<double>::infinity();
    double bestOriginal = std::numeric_limits<double>::infinity();
    for (int round = -2; round < rounds; ++round) {
        const double c = timeRound(samples, device, candidate);
        const double o = timeRound(samples, device, original);
        if (round >= 0) {
            bestCandidate = std::min(bestCandidate, c);
            bestOriginal = std::min(bestOriginal, o);
        }
    }
    return {bestCandidate, bestOriginal};
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
    CandidateReport* best = nullptr;
    for (CandidateReport* c : candidates) {
        c->originalLatencyUs = originalLatencyUs;
        c->speedup = c->latencyUs > 0 ? originalLatencyUs / c->latencyUs : 0.0;
        if (!c->eligible || !c->correctness.passed)
            continue;
        if (!best || c->latencyUs < best->latencyUs)
            best = c;
    }
    for (CandidateReport* c : candidates) {
        if (!c->eligible)
            c->rejected = "not eligible: " + c->correctness.reason;
        else if (!c->correctness.passed)
            c->rejected = "incorrect: " + c->correctness.reason;
        else if (c != best)
            c->rejected = "slower than " + best->provider;
        else if (!(c->latencyUs < originalLatencyUs))
            c->rejected = "not faster than the original";
        else
            c->kept = true;
    }
}

OptimizeResult makePlan(ModelSession& session, const OptimizeOptions& options)
{
    OptimizeResult result;
    // 1. Profile the model as it is, ranking functions by their share of the time.
    ProfileOptions profileOptions;
    profileOptions.device = options.device;
    profileOptions.warmupIterations = options.warmupIterations;
    profileOptions.iterations = options.iterations;
    const auto keepGoing = [&] { return !options.keepGoing || options.keepGoing(); };
    profileOptions.progress = [&](int, int) { return keepGoing(); };
    log(options, "profiling " + session.displayName() + " on " + options.device);
    const ProfileRun run = profile(session, profileOptions);
    if (run.cancelled) {
        result.cancelled = true;
        return result;
    }
    const auto ranked = statistics(run.records, GroupBy::Function);

    // 2. Observe the samples of one forward.
    optimizer::SampleCapture capture;
    session.forward();

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
    for (const StatRow& row : ranked) {
        if (!keepGoing()) {
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
        // 3. Every eligible provider: prepare -> correctness -> benchmark against the original.
        const size_t first = result.candidates.size();
        double original = std::numeric_limits<double>::infinity();
        const auto evaluate = [&](CandidateReport& c) {
            try {
                auto provider = ProviderRegistry::instance().create(c.settings);
                c.provider = provider->displayName();
                c.eligible = provider->prepare(samples.unique);
                if (!c.eligible) {
                    c.correctness.reason = "prepare() rejected an observed sample";
                } else {
                    c.correctness = optimizer::checkProvider(*provider, *op, samples.unique);
                    if (c.correctness.passed) {
                        c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
                        std::lock_guard timing(optimizer::benchmarkMutex());
                        const auto [candidate, baseline] = benchmarkAgainstOriginal(
                            bench, options.benchmarkRounds, options.device,
                            [&](torch::jit::Stack& s) { provider->call(*op, s); },
                            [&](torch::jit::Stack& s) { op->callBoxed(s); });
                        c.latencyUs = candidate;
                        original = std::min(original, baseline);
                    }
                }
            } catch (const std::exception& e) {
                c.correctness.passed = false;
                c.correctness.reason = e.what();
            }
            log(options, "  " + fr.function + ": " + (c.provider.empty() ? c.settings.dump() : c.provider) +
                             (c.generator.empty() ? "" : " (generated by " + c.generator + ")") +
                             (c.correctness.passed ? "" : " rejected: " + c.correctness.reason));
        };
        for (const ProviderTypeInfo& info : providers) {
            if (info.function != *function || !runsOn(info, options.device))
                continue;
            if (!options.includeReferenceProviders && info.typeName.rfind("Aten", 0) == 0)
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
            if (failure.empty()) {
                evaluate(c);
            } else {
                c.provider = pending.generator;
                c.correctness.reason = failure;
                c.generation = c.generation.empty() ? failure : c.generation;
                log(options, "  " + fr.function + ": " + pending.generator + " " + failure);
            }
            result.candidates.push_back(std::move(c));
        }
        fr.tried = result.candidates.size() > first;
        if (!fr.tried) {
            fr.skipped = "no provider for this function on " + options.device;
            result.functions.push_back(fr);
            continue;
        }
        // 4. The selection rule against the original's fastest round on the same samples.
        if (!std::isfinite(original)) {
            c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
            std::lock_guard timing(optimizer::benchmarkMutex());
            original = timeRound(bench, options.device, [&](torch::jit::Stack& s) { op->callBoxed(s); });
        }
        std::vector<CandidateReport*> mine;
        for (size_t i = first; i < result.candidates.size(); ++i)
            mine.push_back(&result.candidates[i]);
        selectBest(mine, original);
        for (CandidateReport* c : mine)
            if (c->kept) {
                PlanEntry e;
                e.scope = "";
                e.function = fr.function;
                e.provider = c->settings;
                e.note = "make_plan: " + std::to_string(c->speedup) + "x faster than the original on " +
                         std::to_string(fr.benchmarkSamples) + " observed samples" +
                         (c->generator.empty() ? "" : "; generated by " + c->generator + ": " + c->generation);
                result.plan.entries.push_back(std::move(e));
            }
        result.functions.push_back(fr);
        if (options.onFunction)
            options.onFunction(
                fr, std::vector<CandidateReport>(result.candidates.begin() + long(first), result.candidates.end()));
    }
    return result;
}

} // namespace kforge
