// SPDX-License-Identifier: Apache-2.0
// Events and stepping: docs/design/runtime-semantics.md R13, R14.
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/runtime.h>
#include <kforge/stepping.h>

#include "runtime/event_sink.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <future>
#include <new>
#include <thread>

using namespace kforge;
using namespace kforge::test;

namespace {

// Counts heap allocations of this process (for the allocation-free recording check).
std::atomic<long> gAllocations{0};

} // namespace

void* operator new(std::size_t size)
{
    ++gAllocations;
    if (void* p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

// R13: one forward of builtin:tiny-gpt with SDPA replaced in blocks.0: the events come in order with content.
TEST(Events, R13_OrderAndContentForOneForward)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    auto stream = EventStream::attach(4096);
    {
        KernelProviderRuntime runtime(
            *session, planOf({entry("blocks.0", "scaled_dot_product_attention", "TorchSDPAKernelProvider")}));
        runtime.activate();
        session->forward();
        runtime.deactivate();
    }
    std::vector<Event> log;
    stream->drain(log);
    ASSERT_FALSE(log.empty());
    for (size_t i = 1; i < log.size(); ++i) {
        EXPECT_GT(log[i].sequence, log[i - 1].sequence);
        EXPECT_GE(log[i].timeNs, log[i - 1].timeNs);
    }
    std::vector<std::string> shape; // the hooked-scope skeleton of the forward
    std::map<std::string, int> originals;
    for (const Event& e : log) {
        if (e.kind == EventKind::OriginalCall)
            ++originals[e.function];
        else
            shape.push_back(std::string(eventKindName(e.kind)) + " " + e.modulePath + " " + e.function + " " +
                            (e.provider.empty() ? "" : e.provider.substr(0, e.provider.find('('))) + " " +
                            std::to_string(e.depth));
    }
    const std::vector<std::string> expected{
        "activate    0",
        "module_enter blocks.0   0",
        "push blocks.0 scaled_dot_product_attention TorchSDPAKernelProvider 1",
        "provider_call blocks.0 scaled_dot_product_attention TorchSDPAKernelProvider 0",
        "pop blocks.0 scaled_dot_product_attention TorchSDPAKernelProvider 0",
        "module_exit blocks.0   0",
        "deactivate    0",
    };
    EXPECT_EQ(shape, expected);
    EXPECT_EQ(originals, (std::map<std::string, int>{{"embedding", 1},
                                                     {"gelu", 2},
                                                     {"layer_norm", 5},
                                                     {"linear", 9},
                                                     {"scaled_dot_product_attention", 1},
                                                     {"softmax", 1}}));
    EXPECT_EQ(stream->dropped(), 0u);
}

// R13: a full buffer never blocks the forward; it drops and counts.
// R13: a stream attached for every module records each module's entry and exit without a plan, in nesting order,
// so a call is attributed to the module it ran in (the desktop's module tree); a default stream records none.
TEST(Events, R13_EveryModuleStreamRecordsEachEntryAndExitWithoutAPlan)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    std::vector<Event> log;
    {
        auto hooked = EventStream::attach(4096);
        session->forward();
        hooked->drain(log);
    }
    EXPECT_TRUE(std::none_of(log.begin(), log.end(), [](const Event& e) { return e.kind == EventKind::ModuleEnter; }));
    log.clear();
    {
        auto every = EventStream::attach(4096, EventStream::Modules::Every);
        session->forward();
        every->drain(log);
    }
    std::vector<std::string> open;            // the modules entered, innermost last
    std::map<std::string, std::string> where; // function -> the innermost module of its first call
    int entries = 0;
    for (const Event& e : log) {
        if (e.kind == EventKind::ModuleEnter) {
            open.push_back(e.modulePath);
            ++entries;
        } else if (e.kind == EventKind::ModuleExit) {
            ASSERT_FALSE(open.empty());
            EXPECT_EQ(open.back(), e.modulePath);
            open.pop_back();
        } else if (e.kind == EventKind::OriginalCall && !open.empty()) {
            where.emplace(e.function, open.back());
        }
    }
    EXPECT_TRUE(open.empty());
    EXPECT_GT(entries, 10);
    EXPECT_EQ(where["gelu"], "blocks.0.mlp");
    EXPECT_EQ(where["embedding"], "embed");
}

TEST(Events, R13_SmallBufferCountsDrops)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    auto stream = EventStream::attach(4);
    session->forward();
    std::vector<Event> log;
    stream->drain(log);
    EXPECT_EQ(log.size(), 4u);
    EXPECT_EQ(stream->dropped(), 20u - 4u); // 20 original calls in one forward
}

// R13: only one observer at a time; a second attach is a clear error.
TEST(Events, R13_OneObserverAtATime)
{
    auto stream = EventStream::attach(16);
    EXPECT_THROW(EventStream::attach(16), Error);
}

// R13: the observer detaches while other threads record: a producer that already took the stream is waited
// for, so the stream is never freed under it (a use after free otherwise, which the asan and tsan builds of
// scripts/check-sanitizers catch).
TEST(Events, R13_DetachWhileOtherThreadsRecord)
{
    std::atomic<bool> stop{false};
    const auto produce = [&] {
        while (!stop.load(std::memory_order_relaxed))
            runtime::events::emit(EventKind::OriginalCall, "blocks.0", "gelu", nullptr, 0);
    };
    std::thread a(produce), b(produce);
    std::size_t received = 0, garbled = 0;
    for (int i = 0; i < 2000; ++i) {
        auto stream = EventStream::attach(64);
        std::vector<Event> log;
        while (log.empty())
            stream->drain(log);
        for (const Event& e : log)
            garbled += !(e.kind == EventKind::OriginalCall && e.modulePath == "blocks.0" && e.function == "gelu");
        received += log.size();
    }
    stop = true;
    a.join();
    b.join();
    EXPECT_GE(received, 2000u);
    EXPECT_EQ(garbled, 0u);
}

// R13: recording an event allocates nothing: the same provider calls allocate as much with an observer
// attached as without one.
TEST(Events, R13_RecordingAllocatesNothing)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    const auto root = moduleObject(*session, "");
    callEnterOp(root);
    const at::Tensor x = at::zeros({4});
    const auto allocationsOf = [&] {
        for (int i = 0; i < 10; ++i)
            at::gelu(x); // warm caches
        const long before = gAllocations.load();
        for (int i = 0; i < 100; ++i)
            at::gelu(x);
        return gAllocations.load() - before;
    };
    const long withoutObserver = allocationsOf();
    long withObserver = 0;
    {
        auto stream = EventStream::attach(1024);
        withObserver = allocationsOf();
        std::vector<Event> log;
        stream->drain(log);
        EXPECT_GE(log.size(), 100u);
    }
    EXPECT_EQ(withObserver, withoutObserver);
    callExitOp(root);
}

// R13: declined calls while events are recorded allocate nothing either: their detail ("declined by PROVIDER:
// reason") is made once per provider and reason, not per call.
TEST(Events, R13_RecordingDeclinedCallsAllocatesNothing)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "CpuGeluProvider")}));
    runtime.activate();
    const auto root = moduleObject(*session, "");
    callEnterOp(root);
    const at::Tensor x = at::zeros({4}, at::kDouble); // the CPU kernels decline float64
    const auto allocationsOf = [&] {
        for (int i = 0; i < 10; ++i)
            at::gelu(x);
        const long before = gAllocations.load();
        for (int i = 0; i < 100; ++i)
            at::gelu(x);
        return gAllocations.load() - before;
    };
    const long withoutObserver = allocationsOf();
    long withObserver = 0;
    {
        auto stream = EventStream::attach(4096);
        withObserver = allocationsOf();
        std::vector<Event> log;
        stream->drain(log);
        const auto declined = std::count_if(log.begin(), log.end(), [](const Event& e) {
            return e.kind == EventKind::OriginalCall && e.detail.rfind("declined by CpuGeluProvider", 0) == 0;
        });
        EXPECT_EQ(declined, 110);
    }
    EXPECT_EQ(withObserver, withoutObserver);
    callExitOp(root);
    EXPECT_EQ(runtime.declines().at(0).calls, 220u);
}

// R13, R7: deactivate() on another thread unwinds a patch this thread holds (a pre-hook run outside any forward,
// R11): the Unwind event names the thread whose stacks changed, not the one that called deactivate().
TEST(Events, R13_R7_RemoteUnwindEventsNameTheThreadWhoseStacksChanged)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    callEnterOp(moduleObject(*session, ""));
    const auto left = runtime.leftovers();
    ASSERT_EQ(left.size(), 1u);
    auto stream = EventStream::attach(1024);
    std::uint64_t deactivating = 0;
    std::thread([&] {
        runtime.deactivate();
        deactivating = 1; // set below from the events: the Deactivate event's thread
    }).join();
    std::vector<Event> log;
    stream->drain(log);
    int unwinds = 0;
    for (const Event& e : log) {
        if (e.kind == EventKind::Deactivate)
            deactivating = e.thread;
        if (e.kind == EventKind::Unwind) {
            ++unwinds;
            EXPECT_EQ(e.thread, left[0].thread);
        }
    }
    EXPECT_EQ(unwinds, 1);
    EXPECT_NE(deactivating, left[0].thread) << "deactivate() ran on another thread";
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}

class Stepping : public ::testing::Test {
protected:
    void SetUp() override { registerTestProviders(); }
    void TearDown() override { Stepper::instance().clearBreakpoints(); }
};

// R14: a module breakpoint pauses the forward thread; while paused the stacks show that moment; Step goes to
// the next pause point (the gelu call inside the module), Continue finishes the forward.
TEST_F(Stepping, R14_BreakpointPausesStepAndContinue)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.0", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    Stepper& stepper = Stepper::instance();
    stepper.addModuleBreakpoint("blocks.0.mlp");
    auto forward = std::async(std::launch::async, [&] { return session->forward(); });

    const auto first = stepper.waitForPause(std::chrono::seconds(20));
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->kind, PausePoint::Kind::ModuleEnter);
    EXPECT_EQ(first->modulePath, "blocks.0.mlp");
    const auto snapshot = snapshotFunctionStacks();
    const auto paused =
        std::find_if(snapshot.begin(), snapshot.end(), [&](const auto& t) { return t.thread == first->thread; });
    ASSERT_NE(paused, snapshot.end());
    EXPECT_TRUE(paused->insideForward);
    ASSERT_EQ(paused->functions.size(), 1u);
    EXPECT_EQ(paused->functions[0].inEffect, "TestTagGeluProvider");
    EXPECT_EQ(paused->functions[0].entries.at(0).modulePath, "blocks.0");

    stepper.resume(Stepper::Resume::Step);
    // The next pause point inside blocks.0.mlp is its fc linear call, then gelu; step until gelu.
    std::optional<PausePoint> next;
    for (int i = 0; i < 5; ++i) {
        next = stepper.waitForPause(std::chrono::seconds(20)); // resume() ended the last pause: this is the next

        ASSERT_TRUE(next.has_value());
        if (next->function == "gelu")
            break;
        stepper.resume(Stepper::Resume::Step);
    }
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->kind, PausePoint::Kind::FunctionCall);
    EXPECT_EQ(next->function, "gelu");
    EXPECT_EQ(next->modulePath, "blocks.0");
    stepper.removeModuleBreakpoint("blocks.0.mlp");
    stepper.resume(Stepper::Resume::Continue);
    EXPECT_EQ(forward.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_NO_THROW(forward.get());
}

// R14: resume() ends the pause at once (paused() is empty until the forward pauses again), and a Step taken at the
// last pause point of a forward ends with that forward: the next forward runs through, no breakpoint being set.
TEST_F(Stepping, R14_AStepEndsWithItsForwardAndResumeEndsThePause)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    Stepper& stepper = Stepper::instance();
    stepper.addModuleBreakpoint("blocks.1.mlp");
    auto continued = std::async(std::launch::async, [&] { session->forward(); });
    ASSERT_TRUE(stepper.waitForPause(std::chrono::seconds(20)).has_value());
    stepper.removeModuleBreakpoint("blocks.1.mlp");
    stepper.resume(Stepper::Resume::Continue); // nothing can pause again
    EXPECT_FALSE(stepper.paused().has_value()) << "paused() still names the pause that was resumed";
    ASSERT_EQ(continued.wait_for(std::chrono::seconds(30)), std::future_status::ready);

    // Both forwards on one thread, as in the GUI's worker: a Step pending there would pause the second one.
    stepper.addModuleBreakpoint("blocks.1.mlp");
    std::promise<void> firstDone;
    auto steppedDone = firstDone.get_future();
    auto worker = std::async(std::launch::async, [&] {
        session->forward();
        firstDone.set_value();
        session->forward();
    });
    ASSERT_TRUE(stepper.waitForPause(std::chrono::seconds(20)).has_value());
    stepper.removeModuleBreakpoint("blocks.1.mlp");
    stepper.resume(Stepper::Resume::Step);
    // Step to the first forward's end: through every pause point left in it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (steppedDone.wait_for(std::chrono::seconds(0)) != std::future_status::ready &&
           std::chrono::steady_clock::now() < deadline)
        if (stepper.waitForPause(std::chrono::milliseconds(100)))
            stepper.resume(Stepper::Resume::Step);
    ASSERT_EQ(steppedDone.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    const bool finished = worker.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    const auto pausedAt = stepper.paused();
    if (!finished)
        stepper.clearBreakpoints(); // let it go, so that the failure is reported and not a hang
    EXPECT_TRUE(finished) << "the next forward paused at '" << pausedAt.value_or(PausePoint{}).modulePath
                          << "' with no breakpoint set";
    EXPECT_NO_THROW(worker.get());
}

// R14, R10: Abort makes the paused forward throw; the call guard unwinds what its scopes pushed.
TEST_F(Stepping, R14_AbortUnwindsThroughTheCallGuard)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.0", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    Stepper& stepper = Stepper::instance();
    stepper.addModuleBreakpoint("blocks.0.mlp");
    auto forward = std::async(std::launch::async, [&] { session->forward(); });
    ASSERT_TRUE(stepper.waitForPause(std::chrono::seconds(20)).has_value());
    stepper.resume(Stepper::Resume::Abort);
    try {
        forward.get();
        FAIL() << "abort did not stop the forward";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("aborted"), std::string::npos) << e.what();
    }
    const auto reports = runtime.leftoverReports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].modulePath, "blocks.0");
    EXPECT_TRUE(reports[0].unwound);
    EXPECT_TRUE(runtime.leftovers().empty());
}
