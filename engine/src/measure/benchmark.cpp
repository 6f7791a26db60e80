// SPDX-License-Identifier: Apache-2.0
#include <kforge/benchmark.h>

#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/runtime.h>

#include "model/output_digest.h"
#include "model/session_impl.h"
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
TimedForward timedForward(ModelSession& session, c10::IValue* output)
{
    const bool cuda = session.device().rfind("cuda", 0) == 0;
    if (cuda)
        torch::cuda::synchronize();
    const RoundCost costStart = RoundCost::now();
    const auto start = std::chrono::steady_clock::now();
    c10::IValue out = guardedForward(sessionImpl(session));
    if (cuda)
        torch::cuda::synchronize();
    TimedForward timed;
    timed.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!cuda)
        timed.cost = RoundCost::now().since(costStart);
    if (output)
        *output = std::move(out);
    return timed;
}

// The outputs of the first two measured rounds, to judge the plan's as `verify` does (measure::judgeOutputs): against
// the baseline's own spread where two baseline forwards differ, `again` being the baseline forward just before the
// plan's. One measured round gives one baseline forward: the plan's outputs are then judged against it alone.
struct KeptOutputs {
    c10::IValue baseline[2], plan[2];
    bool baselineFirst[2] = {true, true};
    int rounds = 0;

    // The first output that fails kforge verify's default thresholds (verify.h), with why; empty when all pass:
    // `bench` and `verify` agree on what "the outputs agree" means. `nondeterminism` says what the baseline's two
    // forwards differ in.
    std::string firstDifference(const VerifyThresholds& thresholds, std::string& nondeterminism) const
    {
        const int r = rounds == 2 && !baselineFirst[0] ? 1 : 0; // the round whose plan forward follows its baseline's
        const c10::IValue& again = baseline[r];
        const c10::IValue& first = rounds == 2 ? baseline[1 - r] : baseline[r];
        measure::OutputsJudged judged = measure::judgeOutputs(first, again, plan[r], thresholds);
        nondeterminism = std::move(judged.nondeterminism);
        for (const TensorAgreement& a : judged.outputs)
            if (!a.passed)
                return "output " + a.path + ": " + a.problem;
        return {};
    }
};

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
    KeptOutputs outputs;
    const int total = options.warmup + options.iterations;
    for (int round = 0; round < total; ++round) {
        const bool measured = round >= options.warmup;
        const int kept = round - options.warmup; // the first two measured rounds' outputs are kept
        const bool keepOutputs = kept == 0 || kept == 1;
        c10::IValue baselineOut, planOut;
        TimedForward baselineTime, planTime;
        const auto runPlan = [&] {
            auto applied = runtime.applied();
            if (result.notes.empty())
                result.notes = runtimeNotices();
            planTime = timedForward(session, keepOutputs ? &planOut : nullptr);
        };
        const auto runBaseline = [&] {
            std::optional<KernelProviderRuntime::Applied> applied;
            if (baselineRuntime)
                applied.emplace(baselineRuntime->applied());
            baselineTime = timedForward(baselineSession, keepOutputs ? &baselineOut : nullptr);
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
        if (keepOutputs) {
            outputs.baseline[kept] = std::move(baselineOut);
            outputs.plan[kept] = std::move(planOut);
            outputs.baselineFirst[kept] = round % 2 == 0;
            outputs.rounds = kept + 1;
        }
        if (!keepGoing(progress, round + 1, total) && round + 1 < total) {
            result.stopped = true;
            break;
        }
    }
    if (outputs.rounds > 0) { // judged once, on what the measured rounds kept (none when stopped in the warm-up)
        result.outputsDifference =
            outputs.firstDifference(plan.verifyThresholds.value_or(VerifyThresholds{}), result.outputsNondeterminism);
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
