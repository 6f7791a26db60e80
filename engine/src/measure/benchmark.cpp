// SPDX-License-Identifier: Apache-2.0
#include <kforge/benchmark.h>

#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/runtime.h>

#include "model/output_digest.h"
#include "model/session_impl.h"
#include "measure/output_check.h"
#include "model/forward_state.h"
#include "measure/tensor_agreement.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>

namespace kforge {
namespace {

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    const double rank = p * double(values.size() - 1); // linear interpolation between closest ranks
    const size_t below = size_t(std::floor(rank));
    const size_t above = std::min(below + 1, values.size() - 1);
    return values[below] + (rank - double(below)) * (values[above] - values[below]);
}

double median(const std::vector<double>& values) { return percentile(values, 0.5); }

struct TimedForward {
    double ms = 0;
    std::optional<RoundCost> cost; // what it cost the thread and the process; none on CUDA (it waits on the device)
};

// One timed forward; on CUDA the device is synchronised before the clock stops, so queued kernels count.
TimedForward timedForward(ModelSession& session)
{
    const bool cuda = session.device().rfind("cuda", 0) == 0;
    if (cuda)
        torch::cuda::synchronize();
    const RoundCost costStart = RoundCost::now();
    const auto start = std::chrono::steady_clock::now();
    guardedForward(sessionImpl(session));
    if (cuda)
        torch::cuda::synchronize();
    TimedForward timed;
    timed.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!cuda)
        timed.cost = RoundCost::now().since(costStart);
    return timed;
}

// The plan's outputs judged as `verify` judges them (measure::checkOutputs), on forwards of their own after the
// timed rounds: each from the same saved state, random draws replayed, so `bench` and `verify` agree on what "the
// outputs agree" means. The first output that fails or cannot be judged, with why; empty when all pass.
std::string firstOutputDifference(ModelSession& baselineSession, KernelProviderRuntime* baselineRuntime,
                                  ModelSession& planSession, KernelProviderRuntime& runtime,
                                  const VerifyThresholds& thresholds, std::string& nondeterminism)
{
    using Randomness = SavedForwardState::Randomness;
    SavedForwardState planState(sessionImpl(planSession), Randomness::Replayed);
    std::optional<SavedForwardState> baselineState;
    if (&baselineSession != &planSession)
        baselineState.emplace(sessionImpl(baselineSession), Randomness::Replayed);
    const auto fromSavedState = [&] {
        planState.restore();
        if (baselineState)
            baselineState->restore();
    };
    measure::OutputCheck check = measure::checkOutputs(
        [&] {
            fromSavedState();
            std::optional<KernelProviderRuntime::Applied> applied;
            if (baselineRuntime)
                applied.emplace(baselineRuntime->applied());
            return guardedForward(sessionImpl(baselineSession));
        },
        [&] {
            fromSavedState();
            auto applied = runtime.applied();
            return guardedForward(sessionImpl(planSession));
        },
        thresholds);
    nondeterminism = std::move(check.judged.nondeterminism);
    for (const TensorAgreement& a : check.judged.outputs)
        if (!a.passed || !a.judged)
            return "output " + a.path + ": " + a.problem;
    return check.judged.outputs.empty() ? "the forward returns no output to compare" : "";
}

} // namespace

LatencyStats latencyStats(const std::vector<double>& ms)
{
    LatencyStats s;
    s.forwards = int(ms.size());
    if (ms.empty())
        return s;
    s.minMs = *std::min_element(ms.begin(), ms.end());
    s.maxMs = *std::max_element(ms.begin(), ms.end());
    s.medianMs = median(ms);
    s.p95Ms = percentile(ms, 0.95);
    s.meanMs = std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
    s.forwardsPerSecond = s.meanMs > 0.0 ? 1000.0 / s.meanMs : 0.0;
    return s;
}

BenchmarkResult benchmarkPlan(ModelSession& session, const Plan& plan, const BenchmarkOptions& options,
                              const ProgressCallback& progress)
{
    if (options.warmup < 0 || options.iterations < 1)
        throw Error("benchmark", "needs at least one measured round and no negative warm-up (got warm-up " +
                                     std::to_string(options.warmup) + ", iterations " +
                                     std::to_string(options.iterations) + ")");
    KernelProviderRuntime runtime(session, plan);
    ModelSession& baselineSession = options.baselineSession ? *options.baselineSession : session;
    std::optional<KernelProviderRuntime> baselineRuntime;
    if (options.baselinePlan)
        baselineRuntime.emplace(baselineSession, *options.baselinePlan);
    const int previousThreads = at::get_num_threads();
    if (options.threads > 0)
        at::set_num_threads(options.threads);
    struct RestoreThreads {
        int threads;
        ~RestoreThreads() { at::set_num_threads(threads); }
    } restoreThreads{previousThreads};
    BenchmarkResult result;
    const int total = options.warmup + options.iterations;
    for (int round = 0; round < total; ++round) {
        const bool measured = round >= options.warmup;
        TimedForward baselineTime, planTime;
        const auto runPlan = [&] {
            auto applied = runtime.applied();
            if (result.notes.empty())
                result.notes = runtimeNotices();
            planTime = timedForward(session);
        };
        const auto runBaseline = [&] {
            std::optional<KernelProviderRuntime::Applied> applied;
            if (baselineRuntime)
                applied.emplace(baselineRuntime->applied());
            baselineTime = timedForward(baselineSession);
        };
        if (round % 2 == 0) {
            runBaseline();
            runPlan();
        } else {
            runPlan();
            runBaseline();
        }
        if (measured) {
            result.baselineMs.push_back(baselineTime.ms);
            result.planMs.push_back(planTime.ms);
            if (baselineTime.cost && planTime.cost) {
                result.baselineRounds.threadCpuMs.push_back(baselineTime.cost->threadCpuMs);
                result.baselineRounds.preemptions.push_back(baselineTime.cost->preemptions);
                result.planRounds.threadCpuMs.push_back(planTime.cost->threadCpuMs);
                result.planRounds.preemptions.push_back(planTime.cost->preemptions);
            }
        }
        if (!keepGoing(progress, round + 1, total) && round + 1 < total) {
            result.stopped = true;
            break;
        }
    }
    if (!result.stopped) {
        result.outputsDifference =
            firstOutputDifference(baselineSession, baselineRuntime ? &*baselineRuntime : nullptr, session, runtime,
                                  plan.verifyThresholds.value_or(VerifyThresholds{}), result.outputsNondeterminism);
        result.outputsAgree = result.outputsDifference.empty();
    }
    result.declines = runtime.declines();
    result.baseline = latencyStats(result.baselineMs);
    result.plan = latencyStats(result.planMs);
    result.baselineRounds.wallMs = result.baselineMs;
    result.planRounds.wallMs = result.planMs;
    result.speed = compareRounds(result.baselineRounds, result.planRounds, result.stalls, options.maxDetectableChange);
    result.stalls.machine = currentMachineState(at::get_num_threads());
    return result;
}

} // namespace kforge
