// SPDX-License-Identifier: Apache-2.0
// Call guard and leftovers: docs/design/runtime-semantics.md R10, R11, R16.
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/leftover_groups.h>
#include <kforge/runtime.h>

#include "runtime/fault_injection.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

using namespace kforge;
using namespace kforge::test;

namespace {

// Root -> act; act's forward calls gelu and then throws (a data-dependent view of a 2-element tensor into
// 3 elements), i.e. between its pre-hook and its post-hook.
std::unique_ptr<ModelSession> throwingSession(TempDir& dir, bool keepLeftovers)
{
    saveModule(twoLevelModel("torch.gelu(x).view([3])"), dir.path("throws.pt"));
    auto session = ModelSession::open(dir.path("throws.pt").string(), {keepLeftovers});
    session->setInputSpecs({"float32[2]"});
    return session;
}

} // namespace

class Leftovers : public ::testing::Test {
protected:
    void SetUp() override { registerTestProviders(); }
    TempDir dir;
};

// R10: a forward that throws mid-way: the guard unwinds, and a leftover event names module and error.
TEST_F(Leftovers, R10_GuardUnwindsAndReportsTheModuleAndError)
{
    auto session = throwingSession(dir, false);
    KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    auto events = EventStream::attach(1024);
    EXPECT_THROW(session->forward(), Error);
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    EXPECT_TRUE(runtime.leftovers().empty());
    const auto reports = runtime.leftoverReports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].function, "gelu");
    EXPECT_EQ(reports[0].provider, "TestTagGeluProvider");
    EXPECT_EQ(reports[0].modulePath, "act");
    EXPECT_TRUE(reports[0].unwound);
    EXPECT_NE(reports[0].error.find("shape"), std::string::npos) << reports[0].error;
    std::vector<Event> log;
    events->drain(log);
    const auto leftover =
        std::find_if(log.begin(), log.end(), [](const Event& e) { return e.kind == EventKind::Leftover; });
    ASSERT_NE(leftover, log.end());
    EXPECT_EQ(leftover->modulePath, "act");
    EXPECT_EQ(leftover->function, "gelu");
    EXPECT_FALSE(leftover->detail.empty());
}

// R5, R10: two runtimes patch the same function (outer: root scope, inner: the throwing child) and the forward
// throws inside both scopes. The guard must unwind in push order across the runtimes: restoring runtime by
// runtime left the outer provider in effect with no stack entry, where no deactivate() could reach it.
TEST_F(Leftovers, R5_R10_TwoRuntimesUnwindLastInFirstOutAfterAnError)
{
    for (const bool outerFirst : {true, false}) { // creation order decides the runtime ids
        SCOPED_TRACE(outerFirst ? "outer runtime created first" : "inner runtime created first");
        auto session = throwingSession(dir, false);
        const Plan outerPlan = planOf({entry("", "gelu", "TestTagGeluProvider")});
        const Plan innerPlan = planOf({entry("act", "gelu", "TestTagBGeluProvider")});
        auto first = std::make_unique<KernelProviderRuntime>(*session, outerFirst ? outerPlan : innerPlan);
        auto second = std::make_unique<KernelProviderRuntime>(*session, outerFirst ? innerPlan : outerPlan);
        KernelProviderRuntime& outer = outerFirst ? *first : *second;
        KernelProviderRuntime& inner = outerFirst ? *second : *first;
        outer.activate();
        inner.activate();
        EXPECT_THROW(session->forward(), Error);
        EXPECT_EQ(geluTagOnThisThread(), 0.0) << "a provider stayed in effect with no stack entry";
        EXPECT_TRUE(outer.leftovers().empty());
        EXPECT_TRUE(inner.leftovers().empty());
        ASSERT_EQ(outer.leftoverReports().size(), 1u);
        ASSERT_EQ(inner.leftoverReports().size(), 1u);
        EXPECT_EQ(outer.leftoverReports()[0].modulePath, "");
        EXPECT_EQ(inner.leftoverReports()[0].modulePath, "act");
        outer.deactivate();
        inner.deactivate();
        EXPECT_EQ(geluTagOnThisThread(), 0.0);
    }
}

// R5, R11, R7: the same with leftovers kept: both patches stay listed, the inner one in effect; deactivating the
// outer runtime first (its entry is below the inner one's) must not resurrect it when the inner one goes.
TEST_F(Leftovers, R5_R11_KeptLeftoversOfTwoRuntimesDeactivateInAnyOrder)
{
    auto session = throwingSession(dir, true);
    KernelProviderRuntime outer(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    KernelProviderRuntime inner(*session, planOf({entry("act", "gelu", "TestTagBGeluProvider")}));
    outer.activate();
    inner.activate();
    EXPECT_THROW(session->forward(), Error);
    EXPECT_EQ(outer.leftovers().size(), 1u);
    EXPECT_EQ(inner.leftovers().size(), 1u);
    EXPECT_EQ(geluTagOnThisThread(), kTagB);
    outer.deactivate();
    EXPECT_EQ(geluTagOnThisThread(), kTagB) << "the inner runtime's leftover is still in effect";
    inner.deactivate();
    EXPECT_EQ(geluTagOnThisThread(), 0.0) << "the outer provider came back after both runtimes were deactivated";
}

// R11, R7: with leftovers kept, leftovers() lists the patch (still in effect); deactivate() clears it.
TEST_F(Leftovers, R11_KeptLeftoverIsListedAndDeactivateClearsIt)
{
    auto session = throwingSession(dir, true);
    KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    EXPECT_THROW(session->forward(), Error);
    const auto left = runtime.leftovers();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0].function, "gelu");
    EXPECT_EQ(left[0].provider, "TestTagGeluProvider");
    EXPECT_EQ(left[0].modulePath, "act");
    EXPECT_NE(left[0].thread, 0u);
    EXPECT_GT(left[0].timeNs, 0);
    EXPECT_EQ(geluTagOnThisThread(), kTagA); // the patch is still in effect: that is what a leftover is
    const auto snapshot = snapshotFunctionStacks();
    const bool shown = std::any_of(snapshot.begin(), snapshot.end(), [](const ThreadStacksSnapshot& t) {
        return std::any_of(t.functions.begin(), t.functions.end(), [](const FunctionStackSnapshot& f) {
            return f.function == "gelu" && f.inEffect == "TestTagGeluProvider" && f.entries.size() == 1 &&
                   f.entries[0].modulePath == "act";
        });
    });
    EXPECT_TRUE(shown);
    runtime.deactivate();
    EXPECT_TRUE(runtime.leftovers().empty());
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}

// R11, R12: a kept leftover lives in its thread's table. Forwards on worker threads (forwardMany with 2 threads, as
// `kforge run --concurrency 2 --keep-leftovers`) that fail keep their patches on those threads; once the workers have
// ended, the reports say so instead of calling the patches still in effect, and no thread lists them.
TEST_F(Leftovers, R11_R12_KeptLeftoversOfEndedWorkerThreadsAreNotInEffect)
{
    auto session = throwingSession(dir, true);
    KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    EXPECT_THROW(session->forwardMany(1, 2), Error);
    const auto reports = runtime.leftoverReports();
    ASSERT_FALSE(reports.empty());
    for (const LeftoverPatch& p : reports) {
        EXPECT_FALSE(p.unwound);
        EXPECT_TRUE(p.threadEnded) << "thread " << p.thread;
    }
    EXPECT_TRUE(runtime.leftovers().empty());
    EXPECT_EQ(geluTagOnThisThread(), 0.0) << "the workers' patches are not this thread's";

    EXPECT_THROW(session->forward(), Error); // on this thread, which lives on: in effect
    const auto mine = runtime.leftoverReports().back();
    EXPECT_FALSE(mine.threadEnded);
    EXPECT_EQ(runtime.leftovers().size(), 1u);
    runtime.deactivate();
}

// R11: a pre-hook run outside any engine call guard (user code calling the enter op) stays listed.
TEST_F(Leftovers, R11_EnterOpOutsideAGuardIsALeftover)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.0.mlp", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    callEnterOp(moduleObject(*session, "blocks.0.mlp"));
    const auto left = runtime.leftovers();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0].modulePath, "blocks.0.mlp");
    runtime.deactivate();
    EXPECT_TRUE(runtime.leftovers().empty());
}

// R10, R16: after a failed forward the session stays usable and the next forward is clean.
TEST_F(Leftovers, R10_R16_SessionUsableAfterFailure)
{
    auto session = throwingSession(dir, false);
    KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    EXPECT_THROW(session->forward(), Error);
    session->setInputSpecs({"float32[3]"}); // now view([3]) fits
    const long before = tagCalls();
    EXPECT_NO_THROW(session->forward());
    EXPECT_EQ(tagCalls() - before, 1);
    EXPECT_EQ(runtime.leftoverReports().size(), 1u); // only the failed forward's
}

// R10 at scale: a forward that fails inside a scope holding many entries for one function unwinds them in steps that
// grow with log N per entry: each is looked up in its stack by bisection, where a scan from the bottom for every
// entry made 40k entries take 4.65 s and 160k 61.6 s. Counted, not timed: the stack entries the unwind looked at.
TEST_F(Leftovers, R10_AFailedForwardLooksUpEachEntryItUnwindsByBisectionNotAScan)
{
    constexpr int kEntries = 4096;
    auto session = ModelSession::open("builtin:tiny-gpt");
    std::vector<PlanEntry> entries(kEntries, entry("blocks.0.mlp", "gelu", "TestThrowingGeluProvider"));
    KernelProviderRuntime runtime(*session, planOf(entries));
    runtime.activate();
    runtime::faults::tlsStackSearchSteps = 0;
    EXPECT_THROW(session->forward(), Error);
    const std::uint64_t steps = runtime::faults::tlsStackSearchSteps;
    EXPECT_EQ(runtime.leftoverReports().size(), size_t(kEntries));
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    EXPECT_GT(steps, 0u);
    // log2(4096) = 12 per lookup, three per entry; a scan from the bottom is ~N^2 = 16.8 M
    EXPECT_LE(steps, std::uint64_t(kEntries) * 64) << steps << " steps";
    runtime.deactivate();
    EXPECT_NO_THROW(session->forward());
}

// R10: the reports of a scope's many entries, alike but for their push time, summarise as one group (the CLI prints a
// line per group), and entries of another scope or function stay apart.
TEST_F(Leftovers, R10_ManyLeftoversOfOneScopeGroupIntoOneLine)
{
    constexpr int kEntries = 64;
    auto session = ModelSession::open("builtin:tiny-gpt");
    std::vector<PlanEntry> entries(kEntries, entry("blocks.0.mlp", "gelu", "TestThrowingGeluProvider"));
    entries.push_back(entry("", "softmax", "AtenSoftmaxProvider"));
    KernelProviderRuntime runtime(*session, planOf(entries));
    runtime.activate();
    EXPECT_THROW(session->forward(), Error);
    const auto reports = runtime.leftoverReports();
    ASSERT_EQ(reports.size(), size_t(kEntries) + 1);
    const auto groups = groupLeftovers(reports);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].count, size_t(kEntries)); // latest push first: the failing scope's entries
    EXPECT_EQ(groups[0].patch.modulePath, "blocks.0.mlp");
    EXPECT_EQ(groups[0].patch.function, "gelu");
    EXPECT_TRUE(groups[0].patch.unwound);
    EXPECT_NE(groups[0].patch.error.find("planted failure"), std::string::npos) << groups[0].patch.error;
    EXPECT_EQ(groups[1].count, 1u);
    EXPECT_EQ(groups[1].patch.modulePath, "");
    EXPECT_EQ(groups[1].patch.function, "softmax");
}
