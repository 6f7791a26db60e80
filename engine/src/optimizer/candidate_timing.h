// SPDX-License-Identifier: Apache-2.0
#pragma once
// Timing a candidate provider against the original op on observed samples: make_plan's benchmark, and the short
// one that re-validates a plan where it lands.
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
    double speedup() const; // original / candidate, fastest rounds (scheduling stalls only ever add time)
    // 95% bootstrap interval of the per-round ratio's median (measure's speedupInterval over the pairs).
    std::pair<double, double> speedupInterval() const;
};

// Candidate and original in alternating rounds, so load on the machine hits both alike. Two untimed rounds warm
// caches and allocators. Stops after `rounds` timed rounds, or sooner once `deadlineNs` (runtime::nowNs) has
// passed with at least one timed round (0: no deadline).
PairedRounds benchmarkAgainstOriginal(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                      const std::string& device, const SampleCall& candidate,
                                      const SampleCall& original, std::int64_t deadlineNs = 0);

} // namespace kforge::optimizer
