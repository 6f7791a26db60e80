// SPDX-License-Identifier: Apache-2.0
// The provider correctness check (engine/optimizer): a report with errors per output, tolerances per dtype.
#include <kforge/provider_sdk.h>

#include "measure/correctness.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

using namespace kforge;
using namespace kforge::test;

namespace {

const c10::OperatorHandle& geluOp()
{
    static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::gelu", "");
    return op;
}

std::vector<torch::jit::Stack> geluSamples(at::ScalarType dtype)
{
    std::vector<torch::jit::Stack> samples;
    for (auto shape : {std::vector<int64_t>{4, 7}, std::vector<int64_t>{2, 3, 5}, std::vector<int64_t>{0, 3}})
        samples.push_back({at::randn(shape).to(dtype), std::string("none")});
    return samples;
}

std::unique_ptr<KernelProvider> provider(const std::string& type)
{
    registerTestProviders();
    return ProviderRegistry::instance().create({{"type", type}});
}

} // namespace

TEST(Correctness, ReferenceProviderPassesWithZeroError)
{
    auto p = provider("AtenGeluProvider");
    const auto report = measure::checkProvider(*p, geluOp(), geluSamples(at::kFloat));
    EXPECT_TRUE(report.passed) << report.reason;
    EXPECT_EQ(report.samples, 3);
    EXPECT_EQ(report.outputs.size(), 3u);
    EXPECT_EQ(report.maxAbsError, 0.0);
    EXPECT_EQ(report.outputs[0].dtype, "float32");
}

TEST(Correctness, WrongProviderFailsWithItsError)
{
    auto p = provider("TestTagGeluProvider"); // gelu + 1000
    const auto report = measure::checkProvider(*p, geluOp(), geluSamples(at::kFloat));
    EXPECT_FALSE(report.passed);
    EXPECT_NEAR(report.maxAbsError, 1000.0, 1e-3);
    EXPECT_NE(report.reason.find("exceeds the tolerance"), std::string::npos) << report.reason;
}

TEST(Correctness, ThrowingProviderFailsWithTheReason)
{
    auto p = provider("TestThrowingGeluProvider");
    const auto report = measure::checkProvider(*p, geluOp(), geluSamples(at::kFloat));
    EXPECT_FALSE(report.passed);
    EXPECT_NE(report.reason.find("planted failure"), std::string::npos) << report.reason;
}

TEST(Correctness, ToleranceDependsOnDtypeAndCanBeOverridden)
{
    EXPECT_LT(defaultTolerance("float32").absolute, defaultTolerance("bfloat16").absolute);
    EXPECT_LT(defaultTolerance("float16").relative, defaultTolerance("bfloat16").relative);
    EXPECT_EQ(defaultTolerance("int64").absolute, 0.0);
    auto p = provider("TestTagGeluProvider");
    const auto loose = measure::checkProvider(*p, geluOp(), geluSamples(at::kFloat), Tolerance{2000.0, 0.0});
    EXPECT_TRUE(loose.passed) << loose.reason;
}

TEST(Correctness, NonFiniteMismatchIsReported)
{
    auto p = provider("AtenGeluProvider");
    std::vector<torch::jit::Stack> samples{
        {at::full({3}, std::numeric_limits<float>::quiet_NaN()), std::string("none")}};
    const auto same = measure::checkProvider(*p, geluOp(), samples);
    EXPECT_TRUE(same.passed) << same.reason; // NaN in both is a match
    auto wrong = provider("TestTagGeluProvider");
    samples = {{at::full({3}, std::numeric_limits<float>::infinity()), std::string("none")}};
    const auto report = measure::checkProvider(*wrong, geluOp(), samples);
    EXPECT_TRUE(report.passed) << report.reason; // inf + 1000 is inf: the non-finite patterns agree
    ASSERT_EQ(report.outputs.size(), 1u);
    EXPECT_FALSE(report.outputs[0].nonFiniteMismatch);
}
