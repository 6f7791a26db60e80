// SPDX-License-Identifier: Apache-2.0
#pragma once
// Timing candidate providers against the original op on observed samples: make_plan's benchmark (every candidate of a
// function in the same rounds), and the short one that re-validates a plan where it lands (one candidate).
#include <kforge/speed_verdict.h>
#include <kforge/round_stalls.h>

#include <ATen/core/stack.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge::optimizer {

using SampleCall = std::function<void(torch::jit::Stack&)>;

struct RoundTime {
    double us = 0;                 // wall time per repetition
    std::optional<RoundCost> cost; // of the whole round; none on CUDA, whose calls wait on the device
};

// Runs `call` on every sample, `repetitions` times over: one round, in µs per repetition (the argument stacks are
// copied before the clock starts).
RoundTime timeRound(const std::vector<const torch::jit::Stack*>& samples, const std::string& device,
                    const SampleCall& call, int repetitions = 1);

// How long a timed round of benchmarkCandidatesTogether lasts at least: a round of one call of a few µs measured the
// timer and the caches, not the kernel (the same provider read 3.8x and 9.6x against the original in two runs).
inline constexpr double kMinRoundUs = 500;
inline constexpr int kMaxRepetitions = 1000;
// Rounds in which a side stalled (round_stalls.h) are made up for with more rounds, up to this many times as many.
inline constexpr int kMaxRoundsFactor = 3;

struct PairedRounds {
    std::vector<double> candidateUs, originalUs; // per timed round, paired, per repetition
    RoundTimes candidateRounds, originalRounds;  // the whole rounds (all repetitions), as the stall detector reads them
    double bestCandidateUs() const;
    double bestOriginalUs() const;
    // The verdict on the original / candidate ratios of the rounds neither side stalled in (stalls.h): > 1 the
    // candidate is faster; too noisy to judge past maxDetectableChange, or when most rounds stalled.
    SpeedComparison compare(double maxDetectableChange = kDefaultMaxDetectableChange,
                            StallReport* stalls = nullptr) const;
};

// Every candidate of a function and the original in the same rounds, the order rotating from round to round, so load
// on the machine hits all alike and each candidate's rounds pair with the original's rounds of the same moments: their
// ratios rank the candidates fairly (timed one after another, each against the original of its own minutes, a
// candidate could win on a quiet minute: the original's own time moves, 12 µs to 35 µs in the minutes of one
// optimisation). Two untimed rounds warm caches and allocators: the first, one repetition, sizes the others, in which
// each side repeats the samples until its own round lasts kMinRoundUs (at most kMaxRepetitions times); times are per
// repetition. Stops after `rounds` timed rounds in which no side stalled (at most kMaxRoundsFactor * rounds in all), or
// sooner once `deadlineNs` (runtime::nowNs) has passed with at least one timed round (0: no deadline). One PairedRounds
// per candidate, in order; their originalUs are the same rounds.
std::vector<PairedRounds> benchmarkCandidatesTogether(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                                      const std::string& device,
                                                      const std::vector<SampleCall>& candidates,
                                                      const SampleCall& original, std::int64_t deadlineNs = 0);

// One candidate against the original, as benchmarkCandidatesTogether times it (the re-validation where a plan lands).
PairedRounds benchmarkAgainstOriginal(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                      const std::string& device, const SampleCall& candidate,
                                      const SampleCall& original, std::int64_t deadlineNs = 0);

} // namespace kforge::optimizer
