// SPDX-License-Identifier: Apache-2.0
// CUDA graph capture: docs/design/runtime-semantics.md R15. The capture
// tests need a CUDA device and skip with the reason without one; staleness is plain logic and runs anywhere.
#include <kforge/error.h>
#include <kforge/runtime.h>

#include "build_path.h"
#include "test_helpers.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

using namespace kforge;
using namespace kforge::test;

#define REQUIRE_CUDA()                                                                                                 \
    if (!torch::cuda::is_available())                                                                                  \
    GTEST_SKIP() << "needs a CUDA device; none is visible on this machine"

namespace {

PlanEntry sdpa(const std::string& scope, const std::string& backend)
{
    PlanEntry e = entry(scope, "scaled_dot_product_attention", "TorchSDPAKernelProvider");
    e.provider["backend"] = backend;
    return e;
}

} // namespace

// R15: a capture whose recorded providers differ from the current plan is stale; an equal plan is not.
TEST(Capture, R15_PlanChangesMarkCapturesStale)
{
    CaptureRecord record;
    record.ok = true;
    record.providers = {{"blocks.0", "scaled_dot_product_attention", "TorchSDPAKernelProvider(backend=MATH)"}};
    EXPECT_FALSE(captureIsStale(record, planOf({sdpa("blocks.0", "MATH")})));
    EXPECT_TRUE(captureIsStale(record, planOf({sdpa("blocks.0", "FLASH_ATTENTION")})));
    EXPECT_TRUE(captureIsStale(record, planOf({sdpa("blocks.1", "MATH")})));
    EXPECT_TRUE(captureIsStale(record, planOf({})));
    Plan disabled = planOf({sdpa("blocks.0", "MATH"), entry("", "gelu", "AtenGeluProvider")});
    disabled.entries[1].enabled = false;
    EXPECT_FALSE(captureIsStale(record, disabled));
}

// R15: without a CUDA device, capture is refused with a clear error, and the session stays usable.
TEST(Capture, R15_CaptureWithoutCudaIsAClearError)
{
    if (torch::cuda::is_available())
        GTEST_SKIP() << "a CUDA device is present: the refusal path does not apply";
    auto session = ModelSession::open("builtin:tiny-gpt");
    try {
        session->capture();
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(session->forward());
}

// R15, R12: a model that forks tasks is refused before anything is captured, on any machine: its tasks run on other
// threads, whose CUDA work the capturing stream never sees, so the graph would lack their kernels and providers.
TEST(Capture, R15_R12_AModelThatForksTasksIsRefused)
{
    auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/forked_gelu.pt");
    session->setInputSpecs({"float32[8]"});
    try {
        session->capture();
        FAIL() << "captured a forking model";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("forks tasks (torch.jit.fork)"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(session->captures().empty());
    EXPECT_NO_THROW(session->forward());
}

// R15 (T4): capture with a provider active, then deactivate: replays keep running the captured provider, eager
// forwards are back to the original, and the record names the provider per scope. The tagging provider adds
// 1000 per element, so the replay's output tells which implementation the graph holds.
TEST(Capture, R15_ReplayKeepsCapturedProvidersEagerIsRestored)
{
    REQUIRE_CUDA();
    registerTestProviders();
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x)"), dir.path("gelu.pt"));
    auto session = ModelSession::open(dir.path("gelu.pt").string());
    session->setInputSpecs({"float32[8]"});
    session->setDevice("cuda");
    const auto eagerBaseline = session->forward();
    KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    const CaptureRecord record = session->capture();
    ASSERT_TRUE(record.ok) << record.error;
    EXPECT_TRUE(record.leftovers.empty());
    ASSERT_EQ(record.providers.size(), 1u);
    EXPECT_EQ(record.providers[0].scope, "act");
    EXPECT_EQ(record.providers[0].function, "gelu");
    EXPECT_EQ(record.providers[0].provider, "TestTagGeluProvider");
    EXPECT_FALSE(captureIsStale(record, runtime.plan()));
    runtime.deactivate();
    const auto replayed = session->replay(record.id);
    const auto eager = session->forward();
    EXPECT_NEAR(replayed[0].sum, eagerBaseline[0].sum + 8 * kTagA, 1e-2) << "the replay lost the captured provider";
    EXPECT_NEAR(eager[0].sum, eagerBaseline[0].sum, 1e-4) << "eager forwards still run the deactivated provider";
    EXPECT_EQ(session->captures().at(0).replays, 1);
}

// R15 (T3), R10/R11: a capture that fails half way (a host sync inside a scope) reports its leftovers
// against the capture; afterwards eager forwards use the originals.
TEST(Capture, R15_FailedCaptureReportsItsLeftovers)
{
    REQUIRE_CUDA();
    registerTestProviders();
    TempDir dir;
    // .item() synchronises with the host: illegal while capturing.
    saveModule(twoLevelModel("torch.gelu(x) * float(x.sum().item())"), dir.path("sync.pt"));
    auto session = ModelSession::open(dir.path("sync.pt").string());
    session->setInputSpecs({"float32[8]"});
    session->setDevice("cuda");
    KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "AtenGeluProvider")}));
    runtime.activate();
    const CaptureRecord record = session->capture(1);
    EXPECT_FALSE(record.ok);
    EXPECT_FALSE(record.error.empty());
    ASSERT_FALSE(record.leftovers.empty());
    EXPECT_EQ(record.leftovers[0].modulePath, "act");
    EXPECT_EQ(record.leftovers[0].capture, record.id);
    EXPECT_THROW(session->replay(record.id), Error);
    runtime.deactivate();
    EXPECT_TRUE(runtime.leftovers().empty());
    EXPECT_NO_THROW(session->forward());
}
