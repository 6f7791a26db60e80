// SPDX-License-Identifier: Apache-2.0
// A 100,000-entry plan (docs/design/plan-format.md, Validation): saved, read back and validated against
// builtin:tiny-gpt with every problem found and memory bounded. Timing is bench/bench_plan_validation.cpp's job
// (tests never pass or fail on time).
#include <kforge/model_session.h>
#include <kforge/plan.h>

#include "huge_plan.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace kforge;

namespace {

constexpr size_t kEntries = 100000;

// The process's peak resident set (VmHWM) in MiB; it only grows, so a difference bounds what ran between.
double peakRssMiB()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stod(line.substr(6)) / 1024.0; // "VmHWM:   123456 kB"
    ADD_FAILURE() << "no VmHWM in /proc/self/status";
    return 0;
}

} // namespace

TEST(HugePlan, HundredThousandEntriesRoundTripAndValidateWithinBoundedMemory)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    test::TempDir dir;
    const std::string path = dir.path("huge.kfplan.json").string();
    const double before = peakRssMiB();
    {
        savePlan(test::hugePlan(*session, kEntries), path);
        std::printf("100,000-entry plan file: %.1f MB\n", double(std::filesystem::file_size(path)) / 1e6);
        const Plan plan = readPlan(path);
        ASSERT_EQ(plan.entries.size(), kEntries);
        EXPECT_EQ(plan.entries[kEntries - 1].note, "entry " + std::to_string(kEntries - 1));
        const auto problems = validatePlan(plan, *session, "cpu");
        // Exactly the planted ones: every 100th entry names a missing module; nothing else is wrong.
        ASSERT_EQ(problems.size(), kEntries / test::kHugePlanUnknownScopeEvery);
        for (const PlanProblem& p : problems) {
            ASSERT_EQ(p.kind, "unknown-scope") << p.message;
            ASSERT_EQ(p.jsonPath, "/entries/" + std::to_string(p.entry) + "/scope");
        }
        EXPECT_EQ(problems.back().entry, int(kEntries) - 1);
    }
    const double growth = peakRssMiB() - before;
    RecordProperty("peak_rss_growth_mib", std::to_string(int(growth)));
    std::printf("100,000-entry plan: save + read + validate raised the peak RSS by %.0f MiB\n", growth);
    // The file is ~20 MB; a JSON DOM of it, the Plan and the problems take a few times that. 500 MiB would mean
    // something grew per entry far beyond need (quadratic copies, unbounded caches).
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer holds freed blocks back (its quarantine, 256 MiB) and pads every block: both count in the
    // peak RSS of the asan build (scripts/check-sanitizers), so its bound is that much higher.
    EXPECT_LT(growth, 500.0 + 256.0 + 100.0);
#else
    EXPECT_LT(growth, 500.0);
#endif
}
