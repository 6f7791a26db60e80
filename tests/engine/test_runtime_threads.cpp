// SPDX-License-Identifier: Apache-2.0
// Threads: docs/design/runtime-semantics.md R12.
#include "build_path.h"
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>
#include <kforge/stepping.h>

#include "model/session_impl.h"
#include "runtime/fault_injection.h"
#include "runtime/mode_key.h"
#include "runtime/thread_state.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string_view>
#include <thread>

using namespace kforge;
using namespace kforge::test;

namespace {

// One forward of `session` on a thread of its own; `error` receives what it threw.
std::thread forwardOnThread(ModelSession& session, std::string& error)
{
    return std::thread([&session, &error] {
        try {
            session.forward();
        } catch (const std::exception& e) {
            error = e.what();
        }
    });
}

} // namespace

// R12: 8 threads x 200 forwards; half run forwards whose "act" scope has the tagging provider, half call gelu
// outside any scope with the interposition key included (as inside any forward), so that their calls do reach
// the interposer and would see another thread's table if tables were shared. Zero calls reach the wrong
// implementation.
TEST(Threads, R12_ConcurrentForwardsSeeOnlyTheirScopes)
{
    registerTestProviders();
    TempDir dir;
    // Root returns (act(x), gelu(x)): the first inside the scope, the second outside it.
    saveModule(twoLevelModel("torch.gelu(x)", "(self.act.forward(x), torch.gelu(x))"), dir.path("m.pt"));
    auto session = ModelSession::open(dir.path("m.pt").string());
    session->setInputSpecs({"float32[8]"});
    at::NoGradGuard noGrad;
    const at::Tensor x = at::zeros({8}); // gelu(0) = 0: outputs are exactly the tag
    KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
    runtime.activate();

    std::atomic<int> wrong{0}, done{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                if (t % 2 == 0) {
                    const auto out = session->forward();
                    // out[0] = gelu(x)+1000 per element from the provider; out[1] = gelu(x) by the original
                    const double expectedTagged = out[0].sum - out[1].sum;
                    if (std::abs(expectedTagged - 8 * kTagA) > 1e-3)
                        ++wrong;
                } else {
                    c10::impl::IncludeDispatchKeyGuard include(runtime::kModeKey);
                    if (at::gelu(x).sum().item<double>() != 0.0)
                        ++wrong;
                }
                ++done;
            }
        });
    }
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(done.load(), 1600);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_TRUE(runtime.leftovers().empty());
}

// R12: the snapshot API lists every live thread, with what each has in effect.
TEST(Threads, R12_SnapshotShowsEachThreadsStacks)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.0", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    std::mutex m;
    std::condition_variable cv;
    bool entered = false, release = false;
    std::uint64_t workerId = 0;
    std::thread worker([&] {
        callEnterOp(moduleObject(*session, "blocks.0"));
        std::unique_lock lock(m);
        workerId = runtime::ThreadState::current().id();
        entered = true;
        cv.notify_all();
        cv.wait(lock, [&] { return release; });
        callExitOp(moduleObject(*session, "blocks.0"));
    });
    {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return entered; });
    }
    const auto snapshot = snapshotFunctionStacks();
    const auto it = std::find_if(snapshot.begin(), snapshot.end(), [&](const auto& t) { return t.thread == workerId; });
    ASSERT_NE(it, snapshot.end());
    ASSERT_EQ(it->functions.size(), 1u);
    EXPECT_EQ(it->functions[0].function, "gelu");
    EXPECT_EQ(it->functions[0].inEffect, "TestTagGeluProvider");
    EXPECT_EQ(it->functions[0].entries.at(0).saved, "original");
    EXPECT_EQ(it->functions[0].entries.at(0).modulePath, "blocks.0");
    // this thread sees nothing in effect
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_all();
    worker.join();
}

// R12 lifetime: a runtime deactivated and destroyed from another thread while a forward is inside one of its
// providers. The provider stays alive until the forward has left it (before, the remote unwind released it
// mid-call), the forward completes, and its next gelu call runs the original: the runtime is gone.
TEST(Threads, R12_DeactivateAndDestroyWhileAForwardIsInsideAProvider)
{
    registerTestProviders();
    BlockingProbe& probe = blockingProbe();
    probe.armed = true;
    auto session = ModelSession::open("builtin:tiny-gpt"); // two gelu calls per forward
    auto runtime =
        std::make_unique<KernelProviderRuntime>(*session, planOf({entry("", "gelu", "TestBlockingGeluProvider")}));
    runtime->activate();
    std::string error;
    std::thread forward = forwardOnThread(*session, error);
    probe.waitEntered();
    runtime->deactivate();
    runtime.reset();
    EXPECT_EQ(probe.live.load(), 1) << "the provider the forward is inside was destroyed";
    probe.release();
    forward.join();
    EXPECT_TRUE(error.empty()) << error;
    EXPECT_FALSE(probe.destroyedDuringCall.load());
    EXPECT_EQ(probe.calls.load(), 1) << "after deactivate() the forward's next gelu call runs the original";
    EXPECT_EQ(probe.live.load(), 0) << "the provider outlived the forward that used it";
    EXPECT_NO_THROW(session->forward());
}

// R12: a forward paused at a breakpoint inside a scope while another thread deactivates the runtime: nothing
// of the forward's stacks is edited from outside, the forward resumes and completes on the originals, and no
// leftover stays behind.
TEST(Threads, R12_DeactivateWhileAForwardIsPausedAtABreakpoint)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.0", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    Stepper& stepper = Stepper::instance();
    stepper.addModuleBreakpoint("blocks.0.mlp"); // inside the scope: its entry is pushed
    tagCalls() = 0;
    std::string error;
    std::thread forward = forwardOnThread(*session, error);
    ASSERT_TRUE(stepper.waitForPause(std::chrono::seconds(30)).has_value());
    runtime.deactivate();
    stepper.clearBreakpoints(); // resumes
    forward.join();
    EXPECT_TRUE(error.empty()) << error;
    EXPECT_EQ(tagCalls().load(), 0) << "the deactivated runtime's provider served a call";
    EXPECT_TRUE(runtime.leftovers().empty());
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}

// R12: provider instances are called from many threads at once (provider_sdk.h states the rule). One instance of
// every built-in CPU provider and reference provider of gelu, silu, layer_norm, rms_norm and softmax serves 8
// threads at once, each with its own input; every output equals ATen's for that input (the TSan suite also
// checks that the calls share no unguarded state).
TEST(Threads, R12_OneProviderInstanceServesManyThreadsAtOnce)
{
    const auto args = [](const std::string& function, const at::Tensor& x) -> torch::jit::Stack {
        const int64_t n = x.size(-1);
        if (function == "gelu")
            return {x, std::string("none")};
        if (function == "layer_norm")
            return {x, std::vector<int64_t>{n}, at::ones({n}), at::zeros({n}), 1e-5, true};
        if (function == "rms_norm")
            return {x, std::vector<int64_t>{n}, at::ones({n}), c10::IValue()};
        if (function == "softmax")
            return {x, int64_t{-1}, c10::IValue()};
        return {x}; // silu
    };
    int checked = 0;
    for (const ProviderTypeInfo& info : ProviderRegistry::instance().list()) {
        const std::string function(functionName(info.function));
        const bool builtin = info.typeName.rfind("Cpu", 0) == 0 || info.typeName.rfind("Aten", 0) == 0;
        if (!builtin || (function != "gelu" && function != "silu" && function != "layer_norm" &&
                         function != "rms_norm" && function != "softmax"))
            continue;
        SCOPED_TRACE(info.typeName);
        const auto provider = ProviderRegistry::instance().create({{"type", info.typeName}});
        const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(("aten::" + function).c_str(),
                                                                       function == "softmax" ? "int" : "");
        std::atomic<int> wrong{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t)
            threads.emplace_back([&, t] {
                at::NoGradGuard noGrad;
                const at::Tensor x = at::randn({4 + t, 64}, at::TensorOptions().dtype(at::kFloat)) * (t + 1);
                torch::jit::Stack reference = args(function, x);
                op.callBoxed(reference);
                for (int i = 0; i < 200; ++i) {
                    torch::jit::Stack stack = args(function, x);
                    provider->call(op, stack);
                    if (!at::allclose(stack.back().toTensor(), reference.back().toTensor(), 1e-4, 1e-5))
                        ++wrong;
                }
            });
        for (auto& th : threads)
            th.join();
        EXPECT_EQ(wrong.load(), 0);
        ++checked;
    }
    EXPECT_GE(checked, 10) << "the CPU and reference providers of five functions";
}

namespace {

// tests/data/models/forked_gelu.pt: root forks its child's forward (torch.jit.fork), waits for it and adds a gelu
// of its own; the child's gelu runs as an async task on an inter-op thread. C++ TorchScript has no fork builtin,
// so the model comes from Python (make_forked_gelu.py).
std::unique_ptr<ModelSession> forkingSession()
{
    auto session = ModelSession::open((std::filesystem::path(KFORGE_TEST_DATA) / "models" / "forked_gelu.pt").string());
    session->setInputSpecs({"float32[8]"});
    return session;
}

} // namespace

// R12 async tasks: a task forked inside a scope runs with the scope's providers. The output less the originals'
// is the sum of the tags of whoever served the two gelus: 2 x kTagA per element when both were served.
TEST(Threads, R12_AForkedTaskRunsWithTheForkingScopesProviders)
{
    registerTestProviders();
    auto session = forkingSession();
    // Only models whose code forks have their forwards publish stacks for tasks.
    EXPECT_TRUE(sessionImpl(*session).forksTasks);
    EXPECT_FALSE(sessionImpl(*ModelSession::open("builtin:tiny-gpt")).forksTasks);
    const double originals = session->forward()[0].sum;
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    const long callsBefore = tagCalls().load();
    for (int i = 0; i < 20; ++i) {
        SCOPED_TRACE(i);
        auto applied = runtime.applied();
        const auto out = session->forward();
        EXPECT_NEAR(out[0].sum - originals, 8 * 2 * kTagA, 1e-2) << "the forked child's gelu ran the original";
    }
    EXPECT_EQ(tagCalls().load() - callsBefore, 40);
    EXPECT_TRUE(runtime.leftoverReports().empty());
    EXPECT_TRUE(runtime.leftovers().empty());
}

// R12, R7: a runtime activated, used and deactivated again and again, each forward on a thread of its own (so each
// forward's pushes start from sequence 1, as the GUI's and the bench's threads do): a deactivate() deferred to the
// inter-op thread that ran the last forward's task must not unwind the next forward's entries it copies. (It did,
// comparing one thread's sequence numbers with another's: the child's gelu ran the original.)
TEST(Threads, R12_R7_ReactivatedRuntimesKeepForkedTasksInTheirScopes)
{
    registerTestProviders();
    auto session = forkingSession();
    const double originals = session->forward()[0].sum;
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    for (int round = 0; round < 12; ++round) {
        runtime.activate();
        const auto out = std::async(std::launch::async, [&] { return session->forward(); }).get();
        runtime.deactivate();
        EXPECT_NEAR(out[0].sum - originals, 8 * 2 * kTagA, 1e-2) << "round " << round << ": a call left its scope";
    }
    EXPECT_TRUE(runtime.leftoverReports().empty());
}

// R12: when the forked task is still running at torch.jit.wait, the forward resumes on the thread that completes
// it; the root's module exit then runs there. That is a normal forward: the providers in effect before the wait
// serve the calls after it, and nothing is reported as a leftover. The child's scope has a 20 ms provider, so
// the wait always finds the task unfinished.
TEST(Threads, R12_AForwardResumingOnAnotherThreadAfterWaitKeepsItsScopes)
{
    registerTestProviders();
    auto session = forkingSession();
    const double originals = session->forward()[0].sum;
    KernelProviderRuntime runtime(
        *session, planOf({entry("", "gelu", "TestTagGeluProvider"), entry("act", "gelu", "TestSlowGeluProvider")}));
    // Whether the wait finds the task unfinished is up to the scheduler: a loaded machine can hold the forward's
    // thread past the child's 20 ms. Up to ten forwards, each checked in full, until one resumed elsewhere.
    int resumedElsewhere = 0;
    for (int attempt = 0; attempt < 10 && resumedElsewhere == 0; ++attempt) {
        SCOPED_TRACE(attempt);
        auto stream = EventStream::attach(4096);
        {
            auto applied = runtime.applied();
            const auto out = session->forward();
            EXPECT_NEAR(out[0].sum - originals, 8 * kTagA, 1e-2)
                << "child: slow provider (0); root's gelu after the wait: tag A";
        }
        EXPECT_TRUE(runtime.leftoverReports().empty()) << runtime.leftoverReports().front().error;
        EXPECT_TRUE(runtime.leftovers().empty());
        std::vector<Event> log;
        stream->drain(log);
        std::uint64_t rootEnter = 0, rootExit = 0, childCall = 0;
        int leftoverEvents = 0;
        for (const Event& e : log) {
            if (e.modulePath.empty() && e.kind == EventKind::ModuleEnter)
                rootEnter = e.thread;
            if (e.modulePath.empty() && e.kind == EventKind::ModuleExit)
                rootExit = e.thread;
            if (e.modulePath == "act" && e.kind == EventKind::ProviderCall)
                childCall = e.thread;
            leftoverEvents += e.kind == EventKind::Leftover;
        }
        EXPECT_NE(childCall, 0u) << "the forked child's call was observed";
        EXPECT_NE(childCall, rootEnter) << "the child ran as an async task";
        EXPECT_EQ(leftoverEvents, 0);
        resumedElsewhere += rootExit != rootEnter;
        // After the forward every thread's gelu is the original again, the task threads' included.
        for (const auto& thread : snapshotFunctionStacks())
            for (const auto& f : thread.functions)
                EXPECT_TRUE(f.entries.empty()) << "thread " << thread.thread << " still has " << f.function;
    }
    EXPECT_EQ(resumedElsewhere, 1) << "no forward resumed on another thread (the case under test)";
}

namespace {

std::unique_ptr<ModelSession> forkProbe(const std::string& file, OpenOptions options = {})
{
    auto session = ModelSession::open((std::filesystem::path(KFORGE_TEST_DATA) / "models" / file).string(), options);
    session->setInputSpecs({"float32[8]"});
    return session;
}

} // namespace

// R12, R1: a forked task's calls keep their scopes under both executors (fork_task_cse.pt: the task's helper calls
// the scoped `act` and gelu on the same input outside it; the optimized executor would merge the two), and the
// methods a task calls run under the session's executor, though LibTorch plans them on the inter-op thread, whose
// executor choice is its own: a direct session never builds an optimized plan for the task's helper. (An optimized
// session may inline the helper into the forward's plan instead of planning it on its own.)
TEST(Threads, R12_R1_ForkedTasksKeepTheirScopesAndTheSessionsExecutor)
{
    registerTestProviders();
    for (const GraphExecutor executor : {GraphExecutor::Direct, GraphExecutor::Optimized}) {
        SCOPED_TRACE(std::string(graphExecutorName(executor)));
        auto session = forkProbe("fork_task_cse.pt", {false, executor});
        const double originals = session->forward()[0].sum;
        KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
        {
            const auto applied = runtime.applied();
            for (int i = 0; i < 4; ++i) // the profiling executor optimises after its first forwards
                EXPECT_NEAR(session->forward()[0].sum - originals, 8 * kTagA, 1e-2)
                    << "forward " << i << ": only act's gelu is tagged";
        }
        torch::jit::GraphExecutor& task =
            torch::jit::toGraphFunction(sessionImpl(*session).module.get_method("_task").function()).get_executor();
        bool optimizedPlan = true;
        try {
            task.getDebugState(); // the profiling executor asserts an optimized plan
        } catch (const c10::Error&) {
            optimizedPlan = false;
        }
        if (executor == GraphExecutor::Direct)
            EXPECT_FALSE(optimizedPlan) << "the task planned its helper with the optimizing executor";
    }
}

// R10, R11, R12: a forward that fails after resuming on another thread (the wait found the task unfinished: `act`
// has a 20 ms provider) reports what the modules it entered there left behind. `failing` raises after its pre-hook
// pushed, on the thread the forward resumed on; its entry is a leftover of the forward like any other: a Leftover
// event, a report with the error, unwound, or with keepLeftovers still in effect and listed by leftovers() until
// deactivate() unwinds it.
TEST(Threads, R10_R11_R12_AForwardFailingAfterResumingElsewhereReportsItsLeftovers)
{
    registerTestProviders();
    for (const bool keep : {false, true}) {
        SCOPED_TRACE(keep ? "keepLeftovers" : "unwound");
        auto session = forkProbe("fork_wait_raise.pt", {keep});
        KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestSlowGeluProvider"),
                                                        entry("failing", "gelu", "TestTagGeluProvider")}));
        int resumedElsewhere = 0;
        for (int attempt = 0; attempt < 10 && resumedElsewhere == 0; ++attempt) {
            SCOPED_TRACE(attempt);
            runtime.clearLeftoverReports();
            auto stream = EventStream::attach(4096);
            runtime.activate();
            EXPECT_THROW(session->forward(), Error);
            std::vector<Event> log;
            stream->drain(log);
            stream.reset();
            std::uint64_t forwardThread = 0, failingThread = 0;
            int leftoverEvents = 0;
            for (const Event& e : log) {
                if (e.modulePath.empty() && e.kind == EventKind::ModuleEnter)
                    forwardThread = e.thread;
                if (e.modulePath == "failing" && e.kind == EventKind::ModuleEnter)
                    failingThread = e.thread;
                leftoverEvents += e.kind == EventKind::Leftover && e.modulePath == "failing" && e.function == "gelu";
            }
            if (failingThread == 0 || failingThread == forwardThread) {
                runtime.deactivate(); // resumed where it started: not the case under test
                continue;
            }
            ++resumedElsewhere;
            EXPECT_EQ(leftoverEvents, 1);
            const auto reports = runtime.leftoverReports();
            ASSERT_EQ(reports.size(), 1u);
            EXPECT_EQ(reports[0].modulePath, "failing");
            EXPECT_NE(reports[0].error.find("planted failure after the wait"), std::string::npos) << reports[0].error;
            EXPECT_EQ(reports[0].unwound, !keep);
            EXPECT_EQ(runtime.leftovers().size(), keep ? 1u : 0u);
            runtime.deactivate();
            EXPECT_TRUE(runtime.leftovers().empty());
            EXPECT_EQ(geluTagOnThisThread(), 0.0);
        }
        EXPECT_EQ(resumedElsewhere, 1) << "no forward resumed on another thread (the case under test)";
    }
}

// R12: TorchSDPAKernelProvider leaves the process-wide SDPA backend switches alone (torch.backends.cuda.enable_*_sdp,
// which Python's sdpa_kernel flips): other threads' calls read them. At the moment the provider's FLASH kernel starts
// on the forward's thread, another thread runs an original attention on 3-D tensors, which only MATH serves on the
// CPU: with the switches narrowed to FLASH it would fail with "No available kernel".
TEST(Threads, R12_AttentionProvidersLeaveOtherThreadsBackendsAlone)
{
    registerTestProviders();
    TempDir dir;
    saveModule(twoLevelModel("torch.scaled_dot_product_attention(x.view(1, 2, 4, 2), x.view(1, 2, 4, 2), "
                             "x.view(1, 2, 4, 2)).view(16)"),
               dir.path("attention.pt"));
    auto session = ModelSession::open(dir.path("attention.pt").string());
    session->setInputSpecs({"float32[16]"});
    PlanEntry flash = entry("act", "scaled_dot_product_attention", "TorchSDPAKernelProvider");
    flash.provider["backend"] = "FLASH_ATTENTION";
    KernelProviderRuntime runtime(*session, planOf({flash}));

    static std::atomic<int> flashCalls{0};
    static std::string otherThreadError; // written by the callback's helper thread, read after the forward
    flashCalls = 0;
    otherThreadError.clear();
    const auto handle = at::addThreadLocalCallback(
        at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
            if (std::string_view(fn.name()) != "aten::_scaled_dot_product_flash_attention_for_cpu")
                return nullptr;
            ++flashCalls;
            std::thread([] {
                try {
                    const at::Tensor t = at::ones({2, 4, 2});
                    at::scaled_dot_product_attention(t, t, t);
                } catch (const c10::Error& e) {
                    otherThreadError = e.what_without_backtrace();
                }
            }).join();
            return nullptr;
        }).scopes({at::RecordScope::FUNCTION}));
    {
        const auto applied = runtime.applied();
        session->forward();
    }
    at::removeCallback(handle);
    EXPECT_GT(flashCalls.load(), 0) << "the provider did not run the FLASH kernel";
    EXPECT_EQ(otherThreadError, "") << "another thread's original attention saw the provider's backend choice";
}

// R10, R16: a call guard that fails to open (the allocations of a forking forward's task scope) leaves the thread as
// it was, not counted as inside a forward (else deactivate() would defer its unwinds to it for ever); the forward's
// error says what failed, and the next forward runs with the plan.
TEST(Threads, R10_R16_AGuardThatFailsToOpenLeavesTheThreadOutsideAnyForward)
{
    registerTestProviders();
    auto session = forkingSession();
    const double originals = session->forward()[0].sum;
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    runtime::faults::gOpeningTaskScope = [] { throw std::bad_alloc(); };
    const std::string error = errorOf([&] { session->forward(); });
    runtime::faults::gOpeningTaskScope = nullptr;
    EXPECT_NE(error.find("cannot start the forward"), std::string::npos) << error;
    EXPECT_EQ(runtime::ThreadState::current().guardDepth.load(), 0);
    EXPECT_NEAR(session->forward()[0].sum - originals, 8 * 2 * kTagA, 1e-2);
    runtime.deactivate();
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}

// R12: a forward changes no module class: every method the session runs (plain copies, inlined forwards) exists
// once the model is open, so concurrent first forwards do not look up a class's methods while one of them adds
// some (forwardMany's threads crashed that way when the inlined forwards were made by the first forward).
TEST(Threads, R12_FirstForwardsAddNoMethodToAnyModuleClass)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const auto methodCounts = [&] {
        std::vector<size_t> counts;
        for (const auto& item : sessionImpl(*session).module.named_modules())
            counts.push_back(item.value.type()->methods().size());
        return counts;
    };
    const std::vector<size_t> atOpen = methodCounts();
    session->forwardMany(2, 4);
    session->setGraphExecutor(GraphExecutor::Optimized);
    session->forwardMany(1, 2);
    EXPECT_EQ(methodCounts(), atOpen);
}

// R2: a runtime activated by another thread while a forward runs applies from the next forward, whether the forward is
// watched or not: here it is (a breakpoint pauses it inside blocks.0.mlp, and an event stream is attached), and the
// runtime scoped to blocks.1, activated during the pause, served blocks.1's gelu in that same forward.
TEST(Threads, R2_ARuntimeActivatedMidForwardAppliesFromTheNextForward)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    auto stream = EventStream::attach();
    Stepper& stepper = Stepper::instance();
    stepper.addModuleBreakpoint("blocks.0.mlp");
    tagCalls() = 0;
    std::string error;
    std::thread forward = forwardOnThread(*session, error);
    ASSERT_TRUE(stepper.waitForPause(std::chrono::seconds(30)).has_value());
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.1", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    stepper.clearBreakpoints(); // resumes
    forward.join();
    EXPECT_TRUE(error.empty()) << error;
    EXPECT_EQ(tagCalls().load(), 0) << "the runtime served the forward that was running when it was activated";
    session->forward();
    EXPECT_EQ(tagCalls().load(), 1) << "blocks.1's gelu, from the next forward on";
    runtime.deactivate();
}
