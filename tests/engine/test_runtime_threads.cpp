// Threads: runtime-semantics.md R12.
#include <kforge/runtime.h>

#include "runtime/thread_state.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <thread>

using namespace kforge;
using namespace kforge::test;

// R12: 8 threads x 200 forwards; half run forwards whose "act" scope has the tagging provider, half call gelu
// outside any scope. Zero calls reach the wrong implementation.
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
                } else if (at::gelu(x).sum().item<double>() != 0.0) {
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
