// SPDX-License-Identifier: Apache-2.0
#include <kforge/speed_verdict.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kforge {
namespace {

constexpr double kTailProbability = 0.025; // each side of a two-sided 95% interval
// (z of 97.5% + z of 80%) / z of 97.5%: how much further than the interval's half-width a true shift must lie to be
// detected with 80% power.
constexpr double kPowerFactor = (1.959964 + 0.841621) / 1.959964;

// P(X <= j) for X ~ Binomial(n, 1/2), summed in log space so that large n does not underflow.
double binomialHalfCdf(int n, int j)
{
    double sum = 0.0;
    for (int i = 0; i <= j; ++i)
        sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
    return sum;
}

// The 1-based rank k of the sorted per-round ratios such that [x(k), x(n-k+1)] covers the median with at least 95%
// probability: the largest k with P(Binomial(n, 1/2) <= k-1) <= 2.5%. 0 when no k qualifies (too few rounds).
int intervalRank(int n)
{
    int k = 0;
    while (k + 1 <= n / 2 && binomialHalfCdf(n, k) <= kTailProbability)
        ++k;
    return k;
}

double medianOfSorted(const std::vector<double>& sorted)
{
    const size_t n = sorted.size();
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

} // namespace

const char* speedVerdictName(SpeedVerdict verdict)
{
    switch (verdict) {
    case SpeedVerdict::Faster:
        return "faster";
    case SpeedVerdict::Slower:
        return "slower";
    case SpeedVerdict::TooNoisy:
        return "too noisy to judge";
    case SpeedVerdict::NoDetectableChange:
        break;
    }
    return "no detectable change";
}

bool isChange(SpeedVerdict verdict) { return verdict == SpeedVerdict::Faster || verdict == SpeedVerdict::Slower; }

int minRoundsForVerdict()
{
    int n = 1;
    while (intervalRank(n) == 0)
        ++n;
    return n;
}

bool SpeedComparison::enoughRounds() const { return rounds >= minRoundsForVerdict(); }

SpeedComparison compareSpeed(const std::vector<double>& referenceTimes, const std::vector<double>& candidateTimes,
                             double maxDetectableChange)
{
    SpeedComparison c;
    std::vector<double> logRatios; // the interval is taken in log space, where a 2x and a 0.5x are equally far from 1
    for (size_t i = 0; i < std::min(referenceTimes.size(), candidateTimes.size()); ++i)
        if (referenceTimes[i] > 0 && candidateTimes[i] > 0)
            logRatios.push_back(std::log(referenceTimes[i] / candidateTimes[i]));
    c.rounds = int(logRatios.size());
    if (logRatios.empty())
        return c;
    std::sort(logRatios.begin(), logRatios.end());
    c.speedup = std::exp(medianOfSorted(logRatios));
    const int k = intervalRank(c.rounds);
    if (k == 0) { // too few rounds: the range, with no claim of coverage and no verdict
        c.low = std::exp(logRatios.front());
        c.high = std::exp(logRatios.back());
        return c;
    }
    const double lowLog = logRatios[size_t(k - 1)], highLog = logRatios[size_t(c.rounds - k)];
    c.low = std::exp(lowLog);
    c.high = std::exp(highLog);
    c.minDetectableChange = std::expm1(kPowerFactor * 0.5 * (highLog - lowLog));
    // A noisy run still sees a change much larger than its spread: an interval farther from 1.0x than its own
    // half-width keeps its verdict (27.9x to 3,200x is faster; 1.01x to 36.1x says nothing).
    const double halfWidth = 0.5 * (highLog - lowLog);
    const bool clearOfNoise = lowLog > halfWidth || highLog < -halfWidth;
    if (maxDetectableChange > 0 && c.minDetectableChange > maxDetectableChange && !clearOfNoise) {
        char reason[160];
        std::snprintf(reason, sizeof reason, "detects only changes of %.1f%% or more, above the %.0f%% bound",
                      100.0 * c.minDetectableChange, 100.0 * maxDetectableChange);
        markTooNoisy(c, reason);
    } else if (lowLog > 0) {
        c.verdict = SpeedVerdict::Faster;
    } else if (highLog < 0) {
        c.verdict = SpeedVerdict::Slower;
    }
    return c;
}

void markTooNoisy(SpeedComparison& comparison, const std::string& reason)
{
    comparison.verdict = SpeedVerdict::TooNoisy;
    comparison.noise = comparison.noise.empty() ? reason : comparison.noise + "; " + reason;
}

std::string describe(const SpeedComparison& c)
{
    char text[200];
    const std::string advice = "; more rounds (--iterations), --threads 1 or a quieter machine measure it";
    if (c.verdict == SpeedVerdict::TooNoisy) {
        if (c.enoughRounds())
            std::snprintf(text, sizeof text,
                          "too noisy to judge: %.2fx (95%% interval %.2fx to %.2fx, %d rounds): ", c.speedup, c.low,
                          c.high, c.rounds);
        else
            std::snprintf(text, sizeof text, "too noisy to judge (%d round(s) left to compare): ", c.rounds);
        return text + c.noise + advice;
    }
    if (c.rounds == 0)
        return "no detectable change: nothing was timed";
    if (!c.enoughRounds()) {
        std::snprintf(text, sizeof text,
                      "no detectable change: %.2fx over %d round(s), too few for a verdict (%d needed)", c.speedup,
                      c.rounds, minRoundsForVerdict());
        return text;
    }
    std::snprintf(text, sizeof text,
                  "%s: %.2fx (95%% interval %.2fx to %.2fx; detects changes of %.1f%% or more, %d rounds)",
                  speedVerdictName(c.verdict), c.speedup, c.low, c.high, 100.0 * c.minDetectableChange, c.rounds);
    return text;
}

} // namespace kforge
