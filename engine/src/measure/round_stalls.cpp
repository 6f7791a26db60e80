// SPDX-License-Identifier: Apache-2.0
#include <kforge/round_stalls.h>

#include "common/median.h"

#include <algorithm>
#include <ctime>
#include <string>

#include <sys/resource.h>

namespace kforge {
namespace {

// The longest a preempted thread waits for a core again (a few scheduler slices): off-CPU time beyond what the
// process's preemptions explain is the round's own waiting (a sleep, a device), not a stall.
constexpr double kLongestSliceMs = 12.0;

} // namespace

RoundCost RoundCost::now()
{
    RoundCost cost;
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    cost.threadCpuMs = double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    cost.preemptions = double(usage.ru_nivcsw);
    return cost;
}

RoundCost RoundCost::since(const RoundCost& start) const
{
    return {threadCpuMs - start.threadCpuMs, preemptions - start.preemptions};
}

std::vector<bool> findStalledRounds(const RoundTimes& reference, const RoundTimes& candidate, StallReport& report)
{
    const size_t rounds = std::min(reference.wallMs.size(), candidate.wallMs.size());
    std::vector<bool> stalled(rounds, false);
    report.iterations = int(rounds);
    report.examined = rounds >= size_t(kMinIterationsForStalls);
    if (!report.examined)
        return stalled;
    for (const RoundTimes* side : {&reference, &candidate}) {
        const std::vector<double> wallMs(side->wallMs.begin(), side->wallMs.begin() + std::ptrdiff_t(rounds));
        const bool withCpu = side->threadCpuMs.size() >= rounds;
        const bool withPreemptions = side->preemptions.size() >= rounds;
        std::vector<double> offCpuMs;
        for (size_t i = 0; withCpu && i < rounds; ++i)
            offCpuMs.push_back(std::max(0.0, wallMs[i] - side->threadCpuMs[i]));
        const double usualMs = medianOf(wallMs), usualOffMs = medianOf(offCpuMs);
        const double minExcessMs = std::max(kMinStallUs / 1000.0, (withCpu ? 0.1 : 0.5) * usualMs);
        for (size_t i = 0; i < rounds; ++i) {
            const double excessMs = wallMs[i] - usualMs;
            const bool outlier = excessMs >= minExcessMs && (!withCpu || offCpuMs[i] - usualOffMs >= minExcessMs);
            const bool waited = withCpu && withPreemptions && offCpuMs[i] >= kMinStallUs / 1000.0 &&
                                offCpuMs[i] >= 0.5 * wallMs[i] && offCpuMs[i] <= side->preemptions[i] * kLongestSliceMs;
            if (!outlier && !waited)
                continue;
            stalled[i] = true;
            report.addStall(1000.0 * (outlier ? excessMs : offCpuMs[i]));
        }
    }
    report.stalledIterations = int(std::count(stalled.begin(), stalled.end(), true));
    return stalled;
}

SpeedComparison compareUnstalled(const std::vector<double>& referenceTimes, const std::vector<double>& candidateTimes,
                                 const std::vector<bool>& stalled, const StallReport& stalls,
                                 double maxDetectableChange)
{
    std::vector<double> kept[2];
    for (size_t i = 0; i < std::min(referenceTimes.size(), candidateTimes.size()); ++i)
        if (i >= stalled.size() || !stalled[i]) {
            kept[0].push_back(referenceTimes[i]);
            kept[1].push_back(candidateTimes[i]);
        }
    SpeedComparison speed = compareSpeed(kept[0], kept[1], maxDetectableChange);
    if (stalls.remains())
        markTooNoisy(speed, "stalls in " + std::to_string(stalls.stalledIterations) + " of " +
                                std::to_string(stalls.iterations) + " rounds");
    return speed;
}

SpeedComparison compareRounds(const RoundTimes& reference, const RoundTimes& candidate, StallReport& stalls,
                              double maxDetectableChange)
{
    const std::vector<bool> stalled = findStalledRounds(reference, candidate, stalls);
    return compareUnstalled(reference.wallMs, candidate.wallMs, stalled, stalls, maxDetectableChange);
}

} // namespace kforge
