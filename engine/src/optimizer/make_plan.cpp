// SPDX-License-Identifier: Apache-2.0
#include <kforge/model_session.h>
#include <kforge/optimizer.h>
#include <kforge/profiler.h>

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
#include <cmath>
#include <limits>

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

} // namespace

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
        for (const ProviderTypeInfo& info : providers) {
            if (info.function != *function || !runsOn(info, options.device))
                continue;
            if (!options.includeReferenceProviders && info.typeName.rfind("Aten", 0) == 0)
                continue;
            for (const nlohmann::json& settings : settingsVariants(info)) {
                CandidateReport c;
                c.function = fr.function;
                c.settings = settings;
                try {
                    auto provider = ProviderRegistry::instance().create(settings);
                    c.provider = provider->displayName();
                    c.eligible = provider->prepare(samples.unique);
                    if (!c.eligible) {
                        c.correctness.reason = "prepare() rejected an observed sample";
                    } else {
                        c.correctness = optimizer::checkProvider(*provider, *op, samples.unique);
                        if (c.correctness.passed) {
                            c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
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
                log(options, "  " + fr.function + ": " + (c.provider.empty() ? settings.dump() : c.provider) +
                                 (c.correctness.passed ? "" : " rejected: " + c.correctness.reason));
                result.candidates.push_back(std::move(c));
            }
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
                         std::to_string(fr.benchmarkSamples) + " observed samples";
                result.plan.entries.push_back(std::move(e));
            }
        result.functions.push_back(fr);
    }
    return result;
}

} // namespace kforge
