// SPDX-License-Identifier: Apache-2.0
// Studies (kforge/study.h): the baseline / plan / compare orchestration, the pairing of saved runs and the labels,
// which the CLI and the desktop app both call.
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/study.h>

#include "test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace kforge;
using namespace kforge::test;

namespace {

StudyOptions cpuStudy(StudyKind kind, Plan plan = {})
{
    StudyOptions options;
    options.kind = kind;
    options.device = "cpu";
    options.warmupIterations = 1;
    options.iterations = 2;
    options.plan = std::move(plan);
    return options;
}

SavedRun saved(const std::string& label, bool usedPlan, const std::string& model)
{
    SavedRun run;
    run.label = label;
    run.run.usedPlan = usedPlan;
    run.run.model = model;
    return run;
}

} // namespace

TEST(Study, CompareMakesBothRunsInRoundsAndComparesThem)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    StudyOptions options = cpuStudy(StudyKind::Compare, planOf({entry("blocks.1", "gelu", "AtenGeluProvider")}));
    std::vector<StudyStage> stages;
    options.onStage = [&](StudyStage stage) { stages.push_back(stage); };
    int calls = 0;
    options.progress = [&](int done, int total) {
        // Both sides: 1 warm-up + 2 measured each, and one warm-up forward before the second round's.
        EXPECT_EQ(total, 8);
        EXPECT_EQ(done, calls + 1);
        ++calls;
        return true;
    };
    const StudyResult study = runStudy(*session, options);
    EXPECT_EQ(stages, std::vector<StudyStage>{StudyStage::Rounds});
    EXPECT_EQ(calls, 8);
    ASSERT_TRUE(study.baseline && study.plan);
    EXPECT_FALSE(study.baseline->usedPlan);
    EXPECT_TRUE(study.plan->usedPlan);
    EXPECT_EQ(study.baseline->iterations, 2);
    EXPECT_EQ(study.plan->iterations, 2);
    EXPECT_EQ(study.baseline->warmupIterations, 1);
    ASSERT_TRUE(study.comparison.has_value());
    EXPECT_FALSE(study.cancelled());
    const auto runs = study.runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].label, "baseline");
    EXPECT_EQ(runs[0].run, study.baseline.get());
    EXPECT_EQ(runs[1].label, "plan");
}

// Baseline and plan take turns going first (ABBA), so that neither always meets the machine colder or warmer; each
// run's iterations are numbered on and its times placed one after the other, as in one profile.
TEST(Study, CompareAlternatesWhichSideGoesFirstAndMergesTheRounds)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    StudyOptions options = cpuStudy(StudyKind::Compare, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    options.iterations = 4;
    std::string sides; // one letter per forward: B without the plan, P with it (the tag provider served gelu)
    long tagged = tagCalls();
    options.progress = [&](int, int) {
        sides += tagCalls() > tagged ? 'P' : 'B';
        tagged = tagCalls();
        return true;
    };
    const StudyResult study = runStudy(*session, options);
    // Rounds of one warm-up and one measured forward per side: BP, PB, BP, PB.
    EXPECT_EQ(sides, "BBPPPPBBBBPPPPBB");
    for (const auto& run : {study.baseline, study.plan}) {
        ASSERT_TRUE(run);
        EXPECT_EQ(run->iterations, 4);
        std::vector<bool> seen(4, false);
        for (const KernelRecord& r : run->records) {
            ASSERT_GE(r.iteration, 0);
            ASSERT_LT(r.iteration, 4);
            seen[size_t(r.iteration)] = true;
        }
        EXPECT_EQ(seen, std::vector<bool>(4, true));
        // Later rounds come later on the run's timeline.
        std::int64_t endOfFirst = 0, startOfLast = INT64_MAX;
        for (const KernelRecord& r : run->records) {
            if (r.iteration == 0)
                endOfFirst = std::max(endOfFirst, r.startNs + r.durationNs);
            if (r.iteration == 3)
                startOfLast = std::min(startOfLast, r.startNs);
        }
        EXPECT_LT(endOfFirst, startOfLast);
    }
    ASSERT_TRUE(study.comparison);
    EXPECT_EQ(study.comparison->speed.rounds, 4);
}

// Cancelled in the second round: both sides stop, each keeps what it measured, and they still compare.
TEST(Study, CompareCancelledInALaterRoundKeepsBothSides)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    StudyOptions options = cpuStudy(StudyKind::Compare, planOf({entry("", "gelu", "AtenGeluProvider")}));
    options.iterations = 4;
    options.progress = [](int done, int) { return done < 5; }; // round 1: B(w,m) P(w,m); round 2 stops in P's warm-up
    const StudyResult study = runStudy(*session, options);
    ASSERT_TRUE(study.baseline && study.plan);
    EXPECT_TRUE(study.cancelled());
    EXPECT_TRUE(study.baseline->cancelled && study.plan->cancelled);
    EXPECT_EQ(study.baseline->iterations, 1);
    EXPECT_EQ(study.plan->iterations, 1);
    EXPECT_TRUE(study.comparison.has_value());
}

// Cancelled during the baseline's warm-up: nothing measured (iterations 0), no plan run, no comparison.
TEST(Study, CancelledInTheWarmUpMeasuredNothingAndMakesNoPlanRun)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    StudyOptions options = cpuStudy(StudyKind::Compare, planOf({entry("", "gelu", "AtenGeluProvider")}));
    options.progress = [](int, int) { return false; };
    const StudyResult study = runStudy(*session, options);
    ASSERT_TRUE(study.baseline);
    EXPECT_TRUE(measuredNothing(*study.baseline));
    EXPECT_EQ(study.baseline->iterations, 0);
    EXPECT_FALSE(study.plan);
    EXPECT_FALSE(study.comparison.has_value());
    EXPECT_TRUE(study.cancelled());
    EXPECT_EQ(study.runs().size(), 1u);
}

// The runtime gets the whole plan and skips disabled entries: a decline names the plan's own row.
TEST(Study, DeclinesNameThePlansRowsAndAPlanNeedsAnEnabledEntry)
{
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x)"), dir.path("m.pt"));
    auto session = ModelSession::open(dir.path("m.pt").string());
    session->setInputSpecs({"float64[4,16]"}); // CpuGeluProvider takes float32 and bfloat16 only
    Plan plan = planOf({entry("act", "gelu", "AtenGeluProvider"), entry("act", "gelu", "CpuGeluProvider")});
    plan.entries[0].enabled = false;
    const StudyResult study = runStudy(*session, cpuStudy(StudyKind::Plan, plan));
    ASSERT_TRUE(study.plan);
    EXPECT_FALSE(study.baseline);
    ASSERT_EQ(study.plan->declines.size(), 1u);
    EXPECT_EQ(study.plan->declines[0].entry, 1);

    plan.entries[1].enabled = false;
    const std::string none = errorOf([&] { runStudy(*session, cpuStudy(StudyKind::Compare, plan)); });
    EXPECT_NE(none.find("no enabled entry"), std::string::npos) << none;
    StudyOptions graph = cpuStudy(StudyKind::Baseline);
    graph.graphReplay = true;
    const std::string offCuda = errorOf([&] { runStudy(*session, graph); });
    EXPECT_NE(offCuda.find("cuda"), std::string::npos) << offCuda;
}

// A file whose baseline and plan runs have different module trees (two models, or two versions of one) is paired, and
// the pair says what differs: the comparison's per-module rows cover only the modules both have.
TEST(Study, SavedRunsOfDifferentModuleTreesSaySo)
{
    const auto withModules = [](const std::string& label, bool usedPlan, const std::string& model,
                                std::vector<std::string> paths) {
        SavedRun run = saved(label, usedPlan, model);
        for (const std::string& path : paths) {
            ModuleInfo m;
            m.path = path;
            run.run.modules.push_back(m);
        }
        return run;
    };
    std::vector<SavedRun> runs{withModules("baseline", false, "a.pt", {"", "fc", "act"}),
                               withModules("plan", true, "b.pt", {"", "fc", "head"})};
    PairedRuns pair = pairSavedRuns(runs);
    EXPECT_NE(pair.treeMismatch.find("module 'head' is only in the plan run"), std::string::npos) << pair.treeMismatch;
    EXPECT_NE(pair.treeMismatch.find("baseline: a.pt, 3 modules"), std::string::npos) << pair.treeMismatch;
    runs[1] = withModules("plan", true, "a.pt", {"", "act", "fc"});
    EXPECT_TRUE(pairSavedRuns(runs).treeMismatch.empty()) << "the same tree in another order";
}

TEST(Study, SavedRunsPairByLabelThenByPlanThenInFileOrder)
{
    // Labels decide, whatever the order.
    std::vector<SavedRun> runs{saved("plan", true, "a"), saved("baseline", false, "b")};
    PairedRuns pair = pairSavedRuns(runs);
    EXPECT_EQ(pair.baseline, &runs[1]);
    EXPECT_EQ(pair.plan, &runs[0]);
    // Unlabelled: the run with a plan is the plan.
    runs = {saved("", true, "a"), saved("", false, "b")};
    pair = pairSavedRuns(runs);
    EXPECT_EQ(pair.baseline, &runs[1]);
    EXPECT_EQ(pair.plan, &runs[0]);
    // Two baselines: file order.
    runs = {saved("", false, "a"), saved("baseline", false, "b")};
    pair = pairSavedRuns(runs);
    EXPECT_EQ(pair.baseline, &runs[0]);
    EXPECT_EQ(pair.plan, &runs[1]);
    // One run: one side.
    runs = {saved("", true, "a")};
    pair = pairSavedRuns(runs);
    EXPECT_EQ(pair.baseline, nullptr);
    EXPECT_EQ(pair.plan, &runs[0]);

    const ProfileRun baseline;
    const auto labels = studyRuns(&baseline, nullptr);
    ASSERT_EQ(labels.size(), 1u);
    EXPECT_EQ(labels[0].label, "baseline");
}
