// SPDX-License-Identifier: Apache-2.0
#pragma once
// Is the candidate faster than the reference, slower, or is the difference within the noise? One method for every
// speed judgement kforge makes (bench, the desktop's Benchmark, optimize, re-validation; docs/verify.md, "The speed
// verdict"): the two sides run in interleaved rounds, each round gives one ratio reference / candidate, and the
// verdict comes from a distribution-free 95% interval of the median of those ratios (the sign test's order
// statistics), so its false-positive rate is at most 5% whatever the shape of the noise, as long as rounds are
// independent of each other. A run whose spread could only detect a change larger than a bound (25% by default) is
// "too noisy to judge", unless its interval lies farther from 1.0x than its own half-width (27.9x to 3,200x is still
// faster; an interval of 1.01x to 36x says nothing).
#include <string>
#include <vector>

namespace kforge {

enum class SpeedVerdict { Faster, Slower, NoDetectableChange, TooNoisy };

// "faster", "slower", "no detectable change", "too noisy to judge": the words the CLI, JSON and the desktop app use.
const char* speedVerdictName(SpeedVerdict verdict);
// Faster or slower: a change worth colouring, keeping or failing on.
bool isChange(SpeedVerdict verdict);

// The largest smallest-detectable-change that still allows a verdict (--max-detectable): a run that needs a 1,193%
// change to say anything says "too noisy to judge" instead.
constexpr double kDefaultMaxDetectableChange = 0.25;

struct SpeedComparison {
    int rounds = 0;           // paired rounds with two positive times
    double speedup = 0;       // median of the per-round ratios reference / candidate (> 1: the candidate is faster)
    double low = 0, high = 0; // its 95% interval (at least 95% coverage; [min, max] with fewer than 6 rounds)
    // The smallest change, as a fraction (0.02: 2%), that a run with this spread would detect four times in five
    // (80% power at the 5% level): a real change smaller than this usually reads "no detectable change".
    double minDetectableChange = 0;
    SpeedVerdict verdict = SpeedVerdict::NoDetectableChange;
    // Why the verdict is TooNoisy, and what to do about it: "detects only changes of 1,193.6% or more, above the
    // 25% bound" or what the stall detector found (stalls.h). Empty otherwise.
    std::string noise;
    bool enoughRounds() const; // at least minRoundsForVerdict(): a 95% interval exists
};

// With fewer paired rounds no order statistic gives 95% coverage, and the verdict is always "no detectable change".
int minRoundsForVerdict();

// Times paired by round (same index = same round; the sides should alternate which runs first). Faster when the
// interval lies above 1, slower when it lies below, else no detectable change; too noisy to judge when the smallest
// detectable change exceeds maxDetectableChange (a fraction; <= 0: no bound) and the interval does not clear 1.0x by
// that change.
SpeedComparison compareSpeed(const std::vector<double>& referenceTimes, const std::vector<double>& candidateTimes,
                             double maxDetectableChange = kDefaultMaxDetectableChange);

// Makes `comparison` too noisy to judge for `reason` (stalls that remained after exclusion), whatever its interval.
void markTooNoisy(SpeedComparison& comparison, const std::string& reason);

// "faster: 1.23x (95% interval 1.20x to 1.26x; detects changes of 2.1% or more, 20 rounds)";
// "too noisy to judge: 9.37x (95% interval 1.01x to 36.12x, 10 rounds): detects only changes of 1,193.6% or more,
// above the 25% bound; ...".
std::string describe(const SpeedComparison& comparison);

} // namespace kforge
