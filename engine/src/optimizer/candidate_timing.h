// SPDX-License-Identifier: Apache-2.0
#pragma once
// Timing a candidate provider against the original op on observed samples: make_plan's benchmark, and the short
// one that re-validates a plan where it lands.
#include <kforge/speed_verdict.h>

#include <ATen/core/stack.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kforge::optimizer {

using SampleCall = std::function<void(torch::jit::Stack&)>;

// Runs `call` once on every sample: one round, in µs.
double timeRound(const std::vector<const torch::jit::Stack*>& samples, const std::string& device,
                 const SampleCall& call);

struct PairedRounds {
    std::vector<double> candidateUs, originalUs; // per timed round, paired
    double bestCandidateUs() const;
    double bestOriginalUs() const;
    // The verdict on the rounds' original / candidate ratios (speed_verdict.h): > 1 the candidate is faster.
    SpeedComparison compare() const;
};

// Candidate and original in interleaved rounds, which of them runs first alternating, so load on the machine hits both
// alike. Two untimed rounds warm caches and allocators. Stops after `rounds` timed rounds, or sooner once `deadlineNs`
// (runtime::nowNs) has passed with at least one timed round (0: no deadline).
PairedRounds benchmarkAgainstOriginal(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                      const std::string& device, const SampleCall& candidate,
                                      const SampleCall& original, std::int64_t deadlineNs = 0);

} // namespace kforge::optimizer
