// SPDX-License-Identifier: Apache-2.0
// make_plan (issue 5, item 7): keep a provider only when it is correct and strictly faster.
#include <kforge/model_session.h>
#include <kforge/optimizer.h>

#include "test_helpers.h"

#include <gtest/gtest.h>

using namespace kforge;
using namespace kforge::test;

namespace {

CandidateReport candidate(const std::string& name, double latencyUs, bool correct, bool eligible = true)
{
    CandidateReport c;
    c.provider = name;
    c.latencyUs = latencyUs;
    c.eligible = eligible;
    c.correctness.passed = correct;
    c.correctness.reason = correct ? "" : "max abs error too large";
    return c;
}

} // namespace

TEST(Optimizer, SelectBestKeepsOnlyTheFastestCorrectStrictlyFasterCandidate)
{
    auto fast = candidate("fast", 5.0, true);
    auto faster = candidate("faster-but-wrong", 1.0, false);
    auto slow = candidate("slow", 8.0, true);
    auto ineligible = candidate("ineligible", 0.5, false, false);
    std::vector<CandidateReport*> all{&fast, &faster, &slow, &ineligible};
    selectBest(all, 10.0);
    EXPECT_TRUE(fast.kept);
    EXPECT_DOUBLE_EQ(fast.speedup, 2.0);
    EXPECT_FALSE(faster.kept);
    EXPECT_NE(faster.rejected.find("incorrect"), std::string::npos);
    EXPECT_NE(slow.rejected.find("slower than fast"), std::string::npos);
    EXPECT_NE(ineligible.rejected.find("not eligible"), std::string::npos);

    auto tie = candidate("tie", 10.0, true);
    std::vector<CandidateReport*> one{&tie};
    selectBest(one, 10.0);
    EXPECT_FALSE(tie.kept); // strictly faster only
    EXPECT_NE(tie.rejected.find("not faster"), std::string::npos);
}

TEST(Optimizer, MakePlanRejectsSlowAndWrongProviders)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    OptimizeOptions options;
    options.warmupIterations = 1;
    options.iterations = 2;
    options.benchmarkRounds = 3;
    const OptimizeResult result = makePlan(*session, options);

    const auto find = [&](const std::string& prefix) {
        return std::find_if(result.candidates.begin(), result.candidates.end(),
                            [&](const CandidateReport& c) { return c.provider.rfind(prefix, 0) == 0; });
    };
    const auto wrong = find("TestTagGeluProvider");
    ASSERT_NE(wrong, result.candidates.end());
    EXPECT_FALSE(wrong->kept);
    EXPECT_NE(wrong->rejected.find("incorrect"), std::string::npos) << wrong->rejected;
    const auto slow = find("TestSlowGeluProvider");
    ASSERT_NE(slow, result.candidates.end());
    EXPECT_TRUE(slow->correctness.passed);
    EXPECT_FALSE(slow->kept);
    EXPECT_GT(slow->latencyUs, slow->originalLatencyUs);
    const auto throwing = find("TestThrowingGeluProvider");
    ASSERT_NE(throwing, result.candidates.end());
    EXPECT_FALSE(throwing->kept);

    for (const PlanEntry& e : result.plan.entries) {
        EXPECT_EQ(e.scope, "");
        const std::string type = e.providerType();
        EXPECT_TRUE(type.rfind("Test", 0) != 0) << type << " must not be kept";
        // every kept entry was measured faster and correct
        const auto kept = std::find_if(result.candidates.begin(), result.candidates.end(),
                                       [&](const CandidateReport& c) { return c.kept && c.settings == e.provider; });
        ASSERT_NE(kept, result.candidates.end());
        EXPECT_GT(kept->speedup, 1.0);
    }
    // Functions are reported with their share and samples, in profiled-time order.
    ASSERT_FALSE(result.functions.empty());
    for (size_t i = 1; i < result.functions.size(); ++i)
        EXPECT_GE(result.functions[i - 1].sharePercent, result.functions[i].sharePercent);
    const auto gelu = std::find_if(result.functions.begin(), result.functions.end(),
                                   [](const FunctionReport& f) { return f.function == "gelu"; });
    ASSERT_NE(gelu, result.functions.end());
    EXPECT_EQ(gelu->uniqueSamples, 1); // both blocks call gelu on [1,16,256]
    EXPECT_EQ(gelu->benchmarkSamples, 1);
}
