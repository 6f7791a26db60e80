// SPDX-License-Identifier: Apache-2.0
#include <kforge/speed_verdict.h>

#include "optimizer/candidate_timing.h"
#include "optimizer/settings_tuner.h"
#include "runtime/clock.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kforge::optimizer {
namespace {

// A whole round (all its repetitions), as the stall detector judges it.
void appendRound(RoundTimes& rounds, const RoundTime& time, int repetitions)
{
    rounds.wallMs.push_back(time.us * repetitions / 1000.0);
    if (time.cost) {
        rounds.threadCpuMs.push_back(time.cost->threadCpuMs);
        rounds.preemptions.push_back(time.cost->preemptions);
    }
}

double fastest(const std::vector<double>& us)
{
    return us.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(us.begin(), us.end());
}

} // namespace

RoundTime timeRound(const std::vector<const torch::jit::Stack*>& samples, const std::string& device,
                    const SampleCall& call, int repetitions)
{
    repetitions = std::max(1, repetitions);
    std::vector<torch::jit::Stack> inputs; // a call consumes its stack: one copy per call, made before timing
    inputs.reserve(samples.size() * size_t(repetitions));
    for (int r = 0; r < repetitions; ++r)
        for (const auto* s : samples)
            inputs.push_back(*s);
    synchronizeDevice(device);
    const RoundCost costStart = RoundCost::now();
    const std::int64_t start = runtime::nowNs();
    for (auto& stack : inputs)
        call(stack);
    synchronizeDevice(device);
    RoundTime time;
    time.us = double(runtime::nowNs() - start) / 1000.0 / repetitions;
    if (device == "cpu")
        time.cost = RoundCost::now().since(costStart);
    return time;
}

double PairedRounds::bestCandidateUs() const { return fastest(candidateUs); }
double PairedRounds::bestOriginalUs() const { return fastest(originalUs); }

SpeedComparison PairedRounds::compare(double maxDetectableChange, StallReport* stalls) const
{
    // Stalls are found on the whole rounds; the ratios are of the times per repetition, as each side repeats the
    // samples its own number of times.
    StallReport found;
    const std::vector<bool> stalled = findStalledRounds(originalRounds, candidateRounds, found);
    SpeedComparison speed = compareUnstalled(originalUs, candidateUs, stalled, found, maxDetectableChange);
    if (stalls)
        *stalls = found;
    return speed;
}

std::vector<PairedRounds> benchmarkCandidatesTogether(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                                      const std::string& device,
                                                      const std::vector<SampleCall>& candidates,
                                                      const SampleCall& original, std::int64_t deadlineNs)
{
    // Side 0 is the original, side i + 1 candidate i.
    std::vector<const SampleCall*> sides{&original};
    for (const SampleCall& c : candidates)
        sides.push_back(&c);
    std::vector<PairedRounds> out(candidates.size());
    std::vector<RoundTime> times(sides.size());
    std::vector<double> us(sides.size());
    // Each side repeats the samples until its own round lasts kMinRoundUs: sized by the slowest side, a 50 ms
    // candidate left a 6 µs original one call per round, which measured the timer and whatever the 50 ms left behind.
    std::vector<int> repetitions(sides.size(), 1);
    // Rounds a side stalled in are left out of the verdict: more rounds are timed, up to kMaxRoundsFactor times as
    // many, until every candidate has `rounds` in which neither side stalled.
    const auto tooFewCleanRounds = [&] {
        for (const PairedRounds& p : out) {
            StallReport stalls;
            const std::vector<bool> stalled = findStalledRounds(p.originalRounds, p.candidateRounds, stalls);
            if (std::count(stalled.begin(), stalled.end(), false) < rounds)
                return true;
        }
        return false;
    };
    for (int round = -2; round < rounds || (round < kMaxRoundsFactor * rounds && tooFewCleanRounds()); ++round) {
        const size_t first = size_t(round + 2) % sides.size(); // who goes first rotates
        for (size_t k = 0; k < sides.size(); ++k) {
            const size_t side = (first + k) % sides.size();
            times[side] = timeRound(samples, device, *sides[side], repetitions[side]);
            us[side] = times[side].us;
        }
        if (round == -2)
            for (size_t side = 0; side < sides.size(); ++side)
                repetitions[side] =
                    std::clamp(int(std::ceil(kMinRoundUs / std::max(1e-3, us[side]))), 1, kMaxRepetitions);
        if (round < 0)
            continue;
        for (size_t i = 0; i < candidates.size(); ++i) {
            out[i].candidateUs.push_back(us[i + 1]);
            out[i].originalUs.push_back(us[0]);
            appendRound(out[i].candidateRounds, times[i + 1], repetitions[i + 1]);
            appendRound(out[i].originalRounds, times[0], repetitions[0]);
        }
        if (deadlineNs > 0 && runtime::nowNs() > deadlineNs)
            break;
    }
    return out;
}

PairedRounds benchmarkAgainstOriginal(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                      const std::string& device, const SampleCall& candidate,
                                      const SampleCall& original, std::int64_t deadlineNs)
{
    return benchmarkCandidatesTogether(samples, rounds, device, {candidate}, original, deadlineNs).front();
}

} // namespace kforge::optimizer
