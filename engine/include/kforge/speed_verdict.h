// SPDX-License-Identifier: Apache-2.0
#pragma once
// Is the candidate faster than the reference, slower, or is the difference within the noise? One method for every
// speed judgement kforge makes (bench, the desktop's Benchmark, optimize, re-validation; docs/verify.md, "The speed
// verdict"): the two sides run in interleaved rounds, each round gives one ratio reference / candidate, and the
// verdict comes from a distribution-free 95% interval of the median of those ratios (the sign test's order
// statistics), so its false-positive rate is at most 5% whatever the shape of the noise, as long as rounds are
// independent of each other.
#include <string>
#include <vector>

namespace kforge {

enum class SpeedVerdict { Faster, Slower, NoDetectableChange };

// "faster", "slower", "no detectable change": the words the CLI, JSON and the desktop app use.
const char* speedVerdictName(SpeedVerdict verdict);

struct SpeedComparison {
    int rounds = 0;           // paired rounds with two positive times
    double speedup = 0;       // median of the per-round ratios reference / candidate (> 1: the candidate is faster)
    double low = 0, high = 0; // its 95% interval (at least 95% coverage; [min, max] with fewer than 6 rounds)
    // The smallest change, as a fraction (0.02: 2%), that a run with this spread would detect four times in five
    // (80% power at the 5% level): a real change smaller than this usually reads "no detectable change".
    double minDetectableChange = 0;
    SpeedVerdict verdict = SpeedVerdict::NoDetectableChange;
    bool enoughRounds() const; // at least minRoundsForVerdict(): a 95% interval exists
};

// With fewer paired rounds no order statistic gives 95% coverage, and the verdict is always "no detectable change".
int minRoundsForVerdict();

// Times paired by round (same index = same round; the sides should alternate which runs first). Faster when the
// interval lies above 1, slower when it lies below, else no detectable change.
SpeedComparison compareSpeed(const std::vector<double>& referenceTimes, const std::vector<double>& candidateTimes);

// "faster: 1.23x (95% interval 1.20x to 1.26x; detects changes of 2.1% or more, 20 rounds)".
std::string describe(const SpeedComparison& comparison);

} // namespace kforge
