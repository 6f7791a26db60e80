// SPDX-License-Identifier: Apache-2.0
// The speed verdict (kforge/speed_verdict.h): faster, slower or no detectable change from paired rounds, with a
// false-positive rate of at most 5% and the smallest change the run could detect. Synthetic rounds with seeded noise:
// nothing here depends on the speed or load of the machine.
#include <kforge/speed_verdict.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

using namespace kforge;

namespace {

// Rounds of one side: true time `scale`, lognormal noise of `sigma`, and a 1.5x stall in one round in ten (a
// scheduler preemption), independently per round and side.
struct NoisyRounds {
    std::mt19937 random{20261205};
    double sigma = 0.05;

    std::vector<double> draw(int rounds, double scale)
    {
        std::normal_distribution<double> noise(0.0, sigma);
        std::bernoulli_distribution stall(0.1);
        std::vector<double> out;
        for (int i = 0; i < rounds; ++i)
            out.push_back(scale * std::exp(noise(random)) * (stall(random) ? 1.5 : 1.0));
        return out;
    }
};

} // namespace

TEST(SpeedVerdict, ExactlyTwiceAsFastIsFasterAndTheReverseIsSlower)
{
    const std::vector<double> reference{2, 4, 6, 8, 2, 4, 6, 8, 2}, candidate{1, 2, 3, 4, 1, 2, 3, 4, 1};
    const SpeedComparison faster = compareSpeed(reference, candidate);
    EXPECT_EQ(faster.verdict, SpeedVerdict::Faster);
    EXPECT_EQ(faster.rounds, 9);
    EXPECT_DOUBLE_EQ(faster.speedup, 2.0);
    EXPECT_DOUBLE_EQ(faster.low, 2.0);
    EXPECT_DOUBLE_EQ(faster.high, 2.0);
    EXPECT_DOUBLE_EQ(faster.minDetectableChange, 0.0); // no spread: any change would show
    EXPECT_EQ(describe(faster).rfind("faster: 2.00x (95% interval 2.00x to 2.00x", 0), 0u) << describe(faster);

    const SpeedComparison slower = compareSpeed(candidate, reference);
    EXPECT_EQ(slower.verdict, SpeedVerdict::Slower);
    EXPECT_DOUBLE_EQ(slower.speedup, 0.5);
    EXPECT_STREQ(speedVerdictName(slower.verdict), "slower");
}

// The interval is the sign test's: with 20 rounds it runs from the 6th to the 15th smallest ratio, so five rounds
// the other way still leave a verdict and six do not.
TEST(SpeedVerdict, IntervalIsTheSignTestsOrderStatistics)
{
    EXPECT_EQ(minRoundsForVerdict(), 6);
    std::vector<double> reference(20, 1.0), candidate;
    for (int i = 0; i < 20; ++i) // ratios 1.01 .. 1.20, shuffled by round
        candidate.push_back(1.0 / (1.0 + 0.01 * ((i * 7) % 20 + 1)));
    const SpeedComparison c = compareSpeed(reference, candidate);
    EXPECT_NEAR(c.low, 1.06, 1e-12);
    EXPECT_NEAR(c.high, 1.15, 1e-12);
    EXPECT_EQ(c.verdict, SpeedVerdict::Faster);

    std::vector<double> fiveAgainst = candidate, sixAgainst = candidate;
    for (int i = 0; i < 6; ++i) {
        if (i < 5)
            fiveAgainst[size_t(i)] = 1.1;
        sixAgainst[size_t(i)] = 1.1;
    }
    EXPECT_EQ(compareSpeed(reference, fiveAgainst).verdict, SpeedVerdict::Faster);
    EXPECT_EQ(compareSpeed(reference, sixAgainst).verdict, SpeedVerdict::NoDetectableChange);
}

TEST(SpeedVerdict, TooFewRoundsGiveNoVerdict)
{
    const SpeedComparison c = compareSpeed({2, 2, 2, 2, 2}, {1, 1, 1, 1, 1});
    EXPECT_FALSE(c.enoughRounds());
    EXPECT_EQ(c.verdict, SpeedVerdict::NoDetectableChange);
    EXPECT_DOUBLE_EQ(c.speedup, 2.0);
    EXPECT_NE(describe(c).find("too few for a verdict (6 needed)"), std::string::npos) << describe(c);
    // Rounds where a side has no time are not rounds.
    EXPECT_EQ(compareSpeed({2, 2, 0, 2, 2, 2}, {1, 1, 1, 1, 1, 1}).rounds, 5);
    EXPECT_EQ(describe(compareSpeed({}, {})), "no detectable change: nothing was timed");
}

// A/A: the same true time on both sides, 10000 times over, with lognormal noise and stalls. "faster" or "slower" at
// most 5% of the time, at the round counts kforge uses (optimize and re-validation 9, bench 20).
TEST(SpeedVerdict, AAFalsePositiveRateIsAtMostFivePercent)
{
    for (const int rounds : {9, 20}) {
        NoisyRounds noise;
        int wrong = 0;
        const int runs = 10000;
        for (int run = 0; run < runs; ++run)
            wrong += isChange(compareSpeed(noise.draw(rounds, 1.0), noise.draw(rounds, 1.0)).verdict);
        EXPECT_LE(wrong, runs * 5 / 100) << rounds << " rounds: " << wrong << " verdicts in " << runs << " A/A runs";
        EXPECT_GT(wrong, 0) << "a 95% interval is not a 100% one";
    }
}

// The smallest detectable change is what it says: a true change of that size is detected about four times in five.
TEST(SpeedVerdict, MinimumDetectableChangeHasAboutEightyPercentPower)
{
    NoisyRounds noise;
    std::vector<double> changes;
    for (int run = 0; run < 2000; ++run)
        changes.push_back(compareSpeed(noise.draw(20, 1.0), noise.draw(20, 1.0)).minDetectableChange);
    std::nth_element(changes.begin(), changes.begin() + 1000, changes.end());
    const double change = changes[1000];
    EXPECT_GT(change, 0.01);
    EXPECT_LT(change, 0.2);
    int detected = 0;
    for (int run = 0; run < 2000; ++run)
        detected += compareSpeed(noise.draw(20, 1.0 + change), noise.draw(20, 1.0)).verdict == SpeedVerdict::Faster;
    EXPECT_GE(detected, 2000 * 70 / 100) << "a " << change * 100 << "% change detected " << detected << " of 2000";
    EXPECT_LE(detected, 2000 * 90 / 100) << "the detectable change is understated";
    // A change four times as large is all but always seen, and a slowdown reads as one.
    int faster = 0, slower = 0;
    for (int run = 0; run < 1000; ++run) {
        faster += compareSpeed(noise.draw(20, 1.0 + 4 * change), noise.draw(20, 1.0)).verdict == SpeedVerdict::Faster;
        slower += compareSpeed(noise.draw(20, 1.0), noise.draw(20, 1.0 + 4 * change)).verdict == SpeedVerdict::Slower;
    }
    EXPECT_GE(faster, 980);
    EXPECT_GE(slower, 980);
}
