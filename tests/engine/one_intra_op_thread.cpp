// SPDX-License-Identifier: Apache-2.0
// The suites that assert optimize's and re-validation's verdicts run with one intra-op thread, as the stall line
// advises (kforge/stalls.h): with LibTorch's two on a 2-core CI machine running another test beside them, ATen's gelu
// on [256, 4096] waited for a descheduled pool thread in most rounds, and the verdict was rightly too noisy to judge.
#include <ATen/Parallel.h>

#include <gtest/gtest.h>

namespace {

class OneIntraOpThread : public ::testing::Environment {
public:
    void SetUp() override { at::set_num_threads(1); }
};

const ::testing::Environment* const kOneIntraOpThread = ::testing::AddGlobalTestEnvironment(new OneIntraOpThread);

} // namespace
