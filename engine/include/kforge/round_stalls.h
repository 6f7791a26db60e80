// SPDX-License-Identifier: Apache-2.0
#pragma once
// Stalls in the rounds of a paired measurement that keeps no records (kforge bench, optimize's and re-validation's
// candidate timing): rounds that waited on the machine rather than computed are found from what each round cost the
// measuring thread and the process (CPU time, involuntary context switches), left out of the speed verdict, and named
// (kforge/stalls.h's StallReport).
#include <kforge/speed_verdict.h>
#include <kforge/stalls.h>

#include <vector>

namespace kforge {

// The rounds of one side, in round order. Empty vectors beside wallMs: unknown (CUDA, whose forwards wait on the
// device, measures wall time only).
struct RoundTimes {
    std::vector<double> wallMs;
    std::vector<double> threadCpuMs; // the measuring thread's CPU time in the round
    std::vector<double> preemptions; // involuntary context switches of the process's threads in the round
};

// What one measured round cost besides its wall time: taken before and after it on the measuring thread.
struct RoundCost {
    double threadCpuMs = 0;
    double preemptions = 0;
    static RoundCost now();
    RoundCost since(const RoundCost& start) const;
};

// Which rounds stalled, on either side. A side's round is stalled when
// - it took kMinStallUs and a tenth of the side's median longer than that median, and the time beyond it was spent
//   off the CPU by the measuring thread (its wall time less its CPU time, above the side's usual); or
// - the thread spent most of the round, and kMinStallUs, off the CPU, no longer than the process's preemptions in it
//   explain (a few scheduler slices each): a side that waits in every round (its parallel op's threads descheduled
//   each time) has no outlier to find, and a round that sleeps or waits on a device by itself is no stall.
// Without CPU times: a round half again as long as the side's median.
std::vector<bool> findStalledRounds(const RoundTimes& reference, const RoundTimes& candidate, StallReport& report);

// The speed verdict (speed_verdict.h) on paired times over the rounds not `stalled`; too noisy to judge where the
// stalls remain (StallReport::remains). The times may be per unit of work (per repetition of a round) where the
// sides' rounds are of different sizes; stalls are found on whole rounds.
SpeedComparison compareUnstalled(const std::vector<double>& referenceTimes, const std::vector<double>& candidateTimes,
                                 const std::vector<bool>& stalled, const StallReport& stalls,
                                 double maxDetectableChange = kDefaultMaxDetectableChange);

// findStalledRounds, then compareUnstalled on the rounds' wall times. `stalls` says what was found.
SpeedComparison compareRounds(const RoundTimes& reference, const RoundTimes& candidate, StallReport& stalls,
                              double maxDetectableChange = kDefaultMaxDetectableChange);

} // namespace kforge
