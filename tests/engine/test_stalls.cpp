// SPDX-License-Identifier: Apache-2.0
// Stalls (kforge/stalls.h) and the "too noisy to judge" gate (kforge/speed_verdict.h) on synthetic runs and rounds:
// calls that waited a scheduler slice, rounds spent off the CPU, and verdicts the noise forbids. Nothing here times
// anything: the samples are made so by construction.
#include <kforge/profiling.h>
#include <kforge/round_stalls.h>
#include <kforge/speed_verdict.h>
#include <kforge/stalls.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace kforge;

namespace {

// A run of tiny-gpt's shape as a busy 2-core machine records it: per iteration two blocks of layer_norm, four
// linears and a gelu, with the calls listed in `stalls` (iteration, call index) taking `stallUs` longer.
struct SyntheticRun {
    int iterations = 10;
    double scale = 1.0; // every call's usual time times this (a provider faster or slower by construction)
    std::vector<std::pair<int, int>> stalls;
    double stallUs = 12'000;
    unsigned seed = 1;

    ProfileRun make() const
    {
        struct Call {
            const char* module;
            const char* function;
            const char* op;
            double us;
        };
        const std::vector<Call> calls{
            {"blocks.0", "layer_norm", "aten::layer_norm", 12.7}, {"blocks.0.attn", "linear", "aten::linear", 37.5},
            {"blocks.0.attn", "linear", "aten::linear", 37.5},    {"blocks.0.mlp", "linear", "aten::linear", 60.0},
            {"blocks.0.mlp", "gelu", "aten::gelu", 20.0},         {"blocks.0.mlp", "linear", "aten::linear", 60.0},
            {"blocks.1", "layer_norm", "aten::layer_norm", 12.7}, {"blocks.1.mlp", "linear", "aten::linear", 60.0}};
        std::mt19937 random(seed);
        std::normal_distribution<double> noise(0.0, 0.02);
        ProfileRun run;
        run.device = "cpu";
        run.iterations = iterations;
        run.intraOpThreads = 2;
        run.cores = 2;
        run.loadAverage = 1.4;
        std::int64_t clockNs = 0;
        for (int it = 0; it < iterations; ++it) {
            for (size_t k = 0; k < calls.size(); ++k) {
                KernelRecord r;
                r.name = calls[k].op;
                r.modulePath = calls[k].module;
                r.function = calls[k].function;
                r.iteration = it;
                r.startNs = clockNs;
                double us = calls[k].us * scale * std::exp(noise(random));
                for (const auto& [si, sk] : stalls)
                    if (si == it && sk == int(k))
                        us += stallUs;
                r.durationNs = std::int64_t(us * 1000.0);
                clockNs += r.durationNs + 2'000; // 2 µs between ops
                run.records.push_back(r);
            }
            clockNs += 50'000;
        }
        run.wallNs = clockNs;
        return run;
    }
};

double totalQuietUs() { return 12.7 * 2 + 37.5 * 2 + 60.0 * 3 + 20.0; }

} // namespace

TEST(Stalls, ACallFarAboveTheSameCallsMedianIsAStallAndCountsItsUsualTime)
{
    SyntheticRun synthetic;
    synthetic.stalls = {{1, 1}, {4, 3}, {4, 6}, {8, 2}};
    const ProfileRun run = synthetic.make();
    const StallFreeRun free = removeStalls(run);
    EXPECT_TRUE(free.stalls.examined);
    EXPECT_EQ(free.stalls.stalledCalls, 4);
    EXPECT_EQ(free.stalls.stalledIterations, 3);
    EXPECT_FALSE(free.stalls.remains());
    EXPECT_NEAR(free.stalls.excessUs, 4 * 12'000, 4 * 200.0);
    // The stalled calls count their usual time; the others keep theirs.
    EXPECT_NEAR(free.durationUs[size_t(1 * 8 + 1)], 37.5, 2.0);
    EXPECT_EQ(free.durationUs[size_t(1 * 8 + 2)], double(run.records[size_t(1 * 8 + 2)].durationNs) / 1000.0);
    // The forward's cost is the quiet one, not the 1.2 ms the mean of the wall time says.
    const double quietSpanUs = totalQuietUs() + 7 * 2.0;
    EXPECT_NEAR(free.medianIterationUs(), quietSpanUs, 0.05 * quietSpanUs);
    EXPECT_GT(double(run.wallNs) / 1000.0 / run.iterations, 10 * quietSpanUs);

    const std::string line = describe(free.stalls);
    EXPECT_NE(line.find("stalls: 3 of 10 iterations waited"), std::string::npos) << line;
    EXPECT_NE(line.find("(4 op calls, 48 ms in all): 2 intra-op threads and other work (load 1.4) share 2 cores; "),
              std::string::npos)
        << line;
    EXPECT_NE(line.find("the estimate excludes them"), std::string::npos) << line;
    EXPECT_NE(line.find("--threads 1"), std::string::npos) << line;
}

TEST(Stalls, UsualVariationIsNoStallAndFewIterationsAreNotExamined)
{
    SyntheticRun quiet;
    const StallFreeRun free = removeStalls(quiet.make());
    EXPECT_FALSE(free.stalls.any());
    EXPECT_EQ(describe(free.stalls), "");
    // A call three times its median but only 100 µs longer is a slow call, not a scheduler slice.
    SyntheticRun small;
    small.stalls = {{2, 0}};
    small.stallUs = 100;
    EXPECT_FALSE(removeStalls(small.make()).stalls.any());

    SyntheticRun two;
    two.iterations = 2;
    two.stalls = {{1, 1}};
    const StallFreeRun short_ = removeStalls(two.make());
    EXPECT_FALSE(short_.stalls.examined);
    EXPECT_FALSE(short_.stalls.any());
}

// A CUDA kernel runs on the device: a descheduled host thread does not lengthen it, and a long one is its own cost.
TEST(Stalls, DeviceKernelsAreNeverStalls)
{
    SyntheticRun synthetic;
    synthetic.stalls = {{1, 1}, {4, 3}};
    ProfileRun run = synthetic.make();
    for (KernelRecord& r : run.records)
        r.kind = "kernel";
    const StallFreeRun free = removeStalls(run);
    EXPECT_FALSE(free.stalls.any());
    for (size_t i = 0; i < run.records.size(); ++i)
        EXPECT_EQ(free.durationUs[i], double(run.records[i].durationNs) / 1000.0);
}

// The desktop compare: a pass-through plan read "faster 9.37x" because the baseline's iterations stalled.
// With the stalls taken out the comparison says no change; where most iterations stalled it says too noisy.
TEST(Stalls, ComparePassThroughPlanIsNeverFasterBecauseTheBaselineStalled)
{
    SyntheticRun baseline, plan;
    baseline.seed = 11;
    plan.seed = 12;
    baseline.stalls = {{0, 1}, {2, 4}, {3, 0}, {6, 3}};
    const Comparison c = compare(baseline.make(), plan.make());
    EXPECT_EQ(c.baselineStalls.stalledIterations, 4);
    EXPECT_FALSE(c.planStalls.any());
    EXPECT_NEAR(c.speed.speedup, 1.0, 0.05) << describe(c.speed);
    // Judged, not waved through: with the stalls in, the spread would forbid any verdict.
    EXPECT_EQ(c.speed.verdict, SpeedVerdict::NoDetectableChange) << describe(c.speed);
    EXPECT_LT(c.speed.minDetectableChange, 0.05) << describe(c.speed);
    for (const ComparisonRow& row : c.byFunction)
        EXPECT_FALSE(isChange(row.speed.verdict)) << row.key << ": " << describe(row.speed);

    SyntheticRun stalledMost = baseline;
    stalledMost.stalls = {{0, 1}, {1, 1}, {2, 4}, {3, 0}, {5, 2}, {6, 3}, {8, 1}};
    const Comparison noisy = compare(stalledMost.make(), plan.make());
    EXPECT_TRUE(noisy.baselineStalls.remains());
    EXPECT_EQ(noisy.speed.verdict, SpeedVerdict::TooNoisy) << describe(noisy.speed);
    EXPECT_NE(noisy.speed.noise.find("stalls remained in baseline"), std::string::npos) << noisy.speed.noise;
    for (const ComparisonRow& row : noisy.byFunction)
        EXPECT_EQ(row.speed.verdict, SpeedVerdict::TooNoisy) << row.key;
}

// A provider slowed 25% by construction is still called slower with stalls on both sides.
TEST(Stalls, ARealSlowdownIsStillSeenThroughStalls)
{
    SyntheticRun baseline, plan;
    baseline.seed = 21;
    plan.seed = 22;
    plan.scale = 1.25;
    baseline.stalls = {{1, 3}, {7, 5}};
    plan.stalls = {{4, 1}};
    const Comparison c = compare(baseline.make(), plan.make());
    EXPECT_EQ(c.speed.verdict, SpeedVerdict::Slower) << describe(c.speed);
    EXPECT_NEAR(c.speed.speedup, 0.8, 0.03);
}

TEST(SpeedVerdict, AnIntervalTooWideForTheBoundIsTooNoisyToJudge)
{
    // Ratios spread from 1.01x to 36x: the interval lies above 1, but only a change of hundreds of percent could be
    // detected: the "faster — 9.37x (1.01x to 36.12x; detects changes of 1,193.6% or more)".
    std::vector<double> reference, candidate;
    for (int i = 0; i < 10; ++i) {
        reference.push_back(1.01 * std::pow(36.0 / 1.01, i / 9.0));
        candidate.push_back(1.0);
    }
    const SpeedComparison c = compareSpeed(reference, candidate);
    EXPECT_GT(c.low, 1.0);
    EXPECT_EQ(c.verdict, SpeedVerdict::TooNoisy);
    EXPECT_FALSE(isChange(c.verdict));
    EXPECT_NE(c.noise.find("above the 25% bound"), std::string::npos) << c.noise;
    EXPECT_EQ(describe(c).rfind("too noisy to judge: ", 0), 0u) << describe(c);
    EXPECT_STREQ(speedVerdictName(c.verdict), "too noisy to judge");
    // The bound is a setting: no bound gives the interval's verdict back, a looser one too.
    EXPECT_EQ(compareSpeed(reference, candidate, 0.0).verdict, SpeedVerdict::Faster);
    EXPECT_EQ(compareSpeed(reference, candidate, 1e6).verdict, SpeedVerdict::Faster);
    // A quiet run keeps its verdict under the default bound.
    const std::vector<double> quiet{2.0, 2.02, 1.98, 2.01, 2.0, 1.99, 2.03, 2.0, 1.97, 2.0};
    EXPECT_EQ(compareSpeed(quiet, std::vector<double>(10, 1.0)).verdict, SpeedVerdict::Faster);
}

TEST(Stalls, RoundsThatWaitedOffTheCpuAreLeftOutOfTheVerdict)
{
    // 20 rounds of a 2 ms forward; the reference's rounds 3 and 11 waited 6 ms off the CPU. A stall-free ratio of 1.
    RoundTimes reference, candidate;
    for (int i = 0; i < 20; ++i) {
        const double jitter = 0.01 * ((i * 7) % 5 - 2);
        reference.wallMs.push_back(2.0 + jitter + (i == 3 || i == 11 ? 6.0 : 0.0));
        reference.threadCpuMs.push_back(1.95 + jitter);
        candidate.wallMs.push_back(2.0 - jitter);
        candidate.threadCpuMs.push_back(1.95 - jitter);
    }
    StallReport stalls;
    const std::vector<bool> stalled = findStalledRounds(reference, candidate, stalls);
    EXPECT_TRUE(stalled[3]);
    EXPECT_TRUE(stalled[11]);
    EXPECT_EQ(stalls.stalledIterations, 2);
    EXPECT_NEAR(stalls.excessUs, 12'000, 100);
    EXPECT_NE(describe(stalls).find("stalls: 2 of 20 rounds waited"), std::string::npos) << describe(stalls);

    StallReport again;
    const SpeedComparison speed = compareRounds(reference, candidate, again);
    EXPECT_EQ(speed.rounds, 18);
    EXPECT_NEAR(speed.speedup, 1.0, 0.02);

    // A round as long but computing all the while (its CPU time grew with it) is the model's cost, not a stall.
    RoundTimes busy = reference;
    busy.threadCpuMs[3] += 6.0;
    busy.threadCpuMs[11] += 6.0;
    StallReport none;
    EXPECT_EQ(findStalledRounds(busy, candidate, none), std::vector<bool>(20, false));
}

TEST(Stalls, ASideThatWaitsInEveryRoundIsTooNoisyToJudge)
{
    // The original op's parallel region waits for a descheduled intra-op thread in every round: no round stands out,
    // but the measuring thread spends most of each one off the CPU. The desktop's Optimize kept such a candidate at
    // 2,323x.
    RoundTimes original, candidate;
    for (int i = 0; i < 9; ++i) {
        original.wallMs.push_back(11.0 + 0.5 * (i % 3));
        original.threadCpuMs.push_back(0.01);
        original.preemptions.push_back(2);
        candidate.wallMs.push_back(0.005);
        candidate.threadCpuMs.push_back(0.005);
        candidate.preemptions.push_back(0);
    }
    StallReport stalls;
    const SpeedComparison speed = compareRounds(original, candidate, stalls);
    EXPECT_EQ(stalls.stalledIterations, 9);
    EXPECT_TRUE(stalls.remains());
    EXPECT_EQ(speed.verdict, SpeedVerdict::TooNoisy) << describe(speed);
    EXPECT_NE(describe(stalls).find("too many to measure around"), std::string::npos) << describe(stalls);

    // The same rounds with no thread of the process preempted: the side sleeps or waits on a device by itself (a
    // provider that does so is slower, not stalled), and the verdict stands.
    RoundTimes sleeping = original;
    sleeping.preemptions.assign(9, 0);
    StallReport none;
    const SpeedComparison slower = compareRounds(sleeping, candidate, none);
    EXPECT_FALSE(none.any());
    EXPECT_EQ(compareRounds(candidate, sleeping, none).verdict, SpeedVerdict::Slower);
    EXPECT_EQ(slower.verdict, SpeedVerdict::Faster);
}
