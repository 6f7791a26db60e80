// SPDX-License-Identifier: Apache-2.0
#pragma once
// End-to-end forward latency without and with a plan, measured in one process without the profiler: the question
// users ask first (is this model faster with this plan?). `kforge bench` and the GUI's Benchmark action.
#include <kforge/plan.h>
#include <kforge/progress.h>
#include <kforge/runtime_types.h>
#include <kforge/speed_verdict.h>
#include <kforge/round_stalls.h>

#include <functional>
#include <string>
#include <vector>

namespace kforge {

class ModelSession;

struct BenchmarkOptions {
    int warmup = 3;      // rounds before measuring; each runs both sides
    int iterations = 20; // measured rounds
    int threads = 0;     // LibTorch intra-op threads during the benchmark; 0 keeps the current setting
    // The baseline side runs with this plan in effect (plan against plan; the same plan on both sides is an A/A run,
    // which calibrates the verdict); null: the model as it is. Must outlive the call.
    const Plan* baselinePlan = nullptr;
    // The baseline side runs this other session, on its own inputs: the same model saved another way (an
    // AOTInductor package against the exported program it was compiled from: what compilation bought). Null: the
    // session benchmarked. Must outlive the call.
    ModelSession* baselineSession = nullptr;
    // The verdict's bound on the smallest detectable change (speed_verdict.h, --max-detectable).
    double maxDetectableChange = kDefaultMaxDetectableChange;
};

struct LatencyStats {
    int forwards = 0;
    double minMs = 0.0, medianMs = 0.0, p95Ms = 0.0, maxMs = 0.0, meanMs = 0.0;
    double forwardsPerSecond = 0.0; // 1000 / meanMs
};

struct BenchmarkResult {
    std::vector<double> baselineMs, planMs; // one forward per side and measured round, in round order
    // Each side's rounds as the stall detector reads them (round_stalls.h): wall time, and on the CPU what each
    // forward cost the measuring thread and the process.
    RoundTimes baselineRounds, planRounds;
    LatencyStats baseline, plan; // of every measured round, stalled or not
    // Faster, slower, no detectable change or too noisy to judge: the ratios baseline / plan of the rounds neither
    // side stalled in (speed_verdict.h, stalls.h), with the median ratio as the speedup (> 1: the plan is faster),
    // its 95% interval and the smallest detectable change.
    SpeedComparison speed;
    StallReport stalls; // rounds that waited on the machine, left out of `speed`
    // The plan's outputs pass kforge verify's check (verify.h), on forwards of their own after the timed rounds (from
    // the same saved state, random draws replayed); not checked when stopped.
    bool outputsAgree = true;
    std::string outputsDifference; // the first output that fails or cannot be judged, with why
    // What the forwards without the plan differ in ("" when nothing): those outputs are judged against that spread,
    // as kforge verify judges them.
    std::string outputsNondeterminism;
    bool stopped = false;                // the progress callback stopped it: a partial result
    std::vector<std::string> notes;      // runtime notices while the plan was active
    std::vector<EntryDeclines> declines; // calls the plan's providers declined (the original served them)
};

// `progress` is called after each round with (rounds done, all rounds including warm-up).
// Rounds alternate which side runs first, so drift (clocks, caches, other load) hits both alike. Only the forward
// is timed; the plan is activated around its forwards. Throws kforge::Error when a forward fails (the plan's
// errors name function, provider and module).
BenchmarkResult benchmarkPlan(ModelSession& session, const Plan& plan, const BenchmarkOptions& options = {},
                              const ProgressCallback& progress = {});

LatencyStats latencyStats(const std::vector<double>& ms);

} // namespace kforge
