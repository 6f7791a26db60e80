// SPDX-License-Identifier: Apache-2.0
// Fault injection into forwards of builtin:tiny-gpt under a plan with nested scopes (quality gates, item 4):
// a provider that fails on its k-th call and a pre-hook push that fails on the k-th push, for EVERY k of one
// forward, and allocation failures inside a provider. After each failure: a clear kforge::Error naming
// function, provider and module (R16); no patch left (R10) and the function tables as before; the next
// forward gives the baseline output. With leftovers kept (R11) the patches stay listed until deactivate()
// unwinds them (R7). Pre-hook failures also undo their own pushes (R3).
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>

#include "runtime/fault_injection.h"
#include "runtime/thread_state.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <new>

using namespace kforge;
using namespace kforge::test;
using kforge::test::errorOf;

namespace {

enum class Fault { Runtime, BadAlloc, OutOfMemory, RealAllocation };

std::atomic<long> gCalls{0};  // provider calls since the last reset
std::atomic<long> gFailAt{0}; // the call that fails (0 = none)
std::atomic<Fault> gFault{Fault::Runtime};

[[noreturn]] void throwFault(long call)
{
    switch (gFault.load()) {
    case Fault::BadAlloc:
        throw std::bad_alloc();
    case Fault::OutOfMemory:
        TORCH_CHECK_WITH(OutOfMemoryError, false, "injected out of memory at call ", call);
    case Fault::RealAllocation:
        (void)at::empty({std::int64_t(1) << 50}, at::kFloat); // 4 PiB: the allocator refuses it
        throw std::logic_error("a 4 PiB allocation succeeded");
    case Fault::Runtime:
        break;
    }
    throw std::runtime_error("injected fault #" + std::to_string(call));
}

// Runs the original op, except on the gFailAt-th provider call of the process, where it fails.
class FaultyProvider final : public KernelProvider {
public:
    FaultyProvider(Function function, std::string type) : m_function(function), m_type(std::move(type)) {}
    Function function() const override { return m_function; }
    std::string typeName() const override { return m_type; }

protected:
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const long call = ++gCalls;
        if (call == gFailAt.load())
            throwFault(call);
        op.callBoxed(stack);
        return CallResult::served();
    }

private:
    Function m_function;
    std::string m_type;
};

void registerFaultyProviders()
{
    static std::once_flag once;
    std::call_once(once, [] {
        for (Function f : {Function::LayerNorm, Function::Linear, Function::Gelu, Function::Softmax,
                           Function::ScaledDotProductAttention}) {
            const std::string type = "Faulty_" + std::string(functionName(f));
            ProviderRegistry::instance().add(
                {type, f, {"cpu"}, "test", [f, type] { return std::make_unique<FaultyProvider>(f, type); }});
        }
    });
}

PlanEntry entry(const std::string& scope, Function f)
{
    PlanEntry e;
    e.scope = scope;
    e.function = std::string(functionName(f));
    e.provider = {{"type", "Faulty_" + e.function}};
    return e;
}

// Nested scopes replacing the same function (root and blocks.0: layer_norm; root and blocks.1: linear), so
// stacks reach depth 2, plus single scopes for attention, gelu and the root's softmax.
Plan nestedPlan()
{
    Plan plan;
    plan.entries = {entry("", Function::LayerNorm),
                    entry("blocks.0", Function::LayerNorm),
                    entry("blocks.0.attn", Function::ScaledDotProductAttention),
                    entry("blocks.1.mlp", Function::Gelu),
                    entry("", Function::Linear),
                    entry("blocks.1", Function::Linear),
                    entry("", Function::Softmax)};
    return plan;
}

// Every thread's stacks as text, without times: what the UI would show.
std::string stacksText()
{
    std::string out;
    for (const ThreadStacksSnapshot& t : snapshotFunctionStacks())
        for (const FunctionStackSnapshot& f : t.functions) {
            out += f.function + "=" + f.inEffect + "[";
            for (const StackEntrySnapshot& e : f.entries)
                out += e.saved + ">" + e.installed + "@" + e.modulePath + "#" + std::to_string(e.planEntry) + " ";
            out += "] ";
        }
    return out;
}

bool anyProviderInEffectOnThisThread()
{
    auto& thread = runtime::ThreadState::current();
    for (int i = 0; i < kFunctionCount; ++i)
        if (thread.inEffect(static_cast<Function>(i)))
            return true;
    return false;
}

void expectSameOutputs(const std::vector<TensorDigest>& actual, const std::vector<TensorDigest>& expected)
{
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
        EXPECT_EQ(actual[i].shape, expected[i].shape);
        EXPECT_EQ(actual[i].sum, expected[i].sum) << "output " << i;
        EXPECT_EQ(actual[i].maxAbs, expected[i].maxAbs) << "output " << i;
    }
}

// The message of the kforge::Error a forward throws ("" and a test failure when it does not throw one).
std::string forwardError(ModelSession& session)
{
    return errorOf([&] { session.forward(); });
}

} // namespace

class FaultInjection : public ::testing::Test {
protected:
    void SetUp() override
    {
        registerFaultyProviders();
        gFailAt = 0;
        gFault = Fault::Runtime;
        session = ModelSession::open("builtin:tiny-gpt");
        runtime = std::make_unique<KernelProviderRuntime>(*session, nestedPlan());
        runtime->activate();
        stacksBefore = stacksText();
        gCalls = 0;
        baseline = session->forward();
        callsPerForward = gCalls.load();
    }
    void TearDown() override
    {
        runtime::faults::gBeforePush = nullptr;
        gFailAt = 0;
    }

    // After a failed forward that was unwound (R10): nothing left, tables as before, baseline output next.
    void expectCleanAndUsable(const std::string& context)
    {
        SCOPED_TRACE(context);
        EXPECT_TRUE(runtime->leftovers().empty());
        EXPECT_EQ(stacksText(), stacksBefore);
        EXPECT_FALSE(anyProviderInEffectOnThisThread());
        gFailAt = 0;
        expectSameOutputs(session->forward(), baseline);
    }

    std::unique_ptr<ModelSession> session;
    std::unique_ptr<KernelProviderRuntime> runtime;
    std::string stacksBefore;
    std::vector<TensorDigest> baseline;
    long callsPerForward = 0;
};

// R10, R16: the k-th provider call throws, for every k of one forward.
TEST_F(FaultInjection, R10_R16_ProviderFailingOnEveryKthCallLeavesNoPatch)
{
    ASSERT_GE(callsPerForward, 10) << "the plan should serve most of tiny-gpt's calls";
    for (long k = 1; k <= callsPerForward; ++k) {
        gCalls = 0;
        gFailAt = k;
        const std::string message = forwardError(*session);
        EXPECT_TRUE(contains(message, "injected fault #" + std::to_string(k))) << message;
        EXPECT_TRUE(contains(message, "provider 'Faulty_")) << message;
        EXPECT_TRUE(contains(message, "module '")) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        expectCleanAndUsable("k = " + std::to_string(k));
    }
    EXPECT_EQ(runtime->leftoverReports().empty(), false); // each failure was reported (R10)
}

// R11, R7: with leftovers kept, the k-th failure leaves the patches in effect at that moment listed; deactivate()
// unwinds them and a new activation runs the baseline again.
TEST_F(FaultInjection, R11_R7_KeptLeftoversOfEveryKthFailureAreUnwoundByDeactivate)
{
    session->setKeepLeftovers(true);
    for (long k = 1; k <= callsPerForward; ++k) {
        SCOPED_TRACE("k = " + std::to_string(k));
        gCalls = 0;
        gFailAt = k;
        const std::string message = forwardError(*session);
        EXPECT_TRUE(contains(message, "injected fault #" + std::to_string(k))) << message;
        const auto left = runtime->leftovers();
        ASSERT_FALSE(left.empty()) << "the failing provider's own patch was in effect";
        for (const LeftoverPatch& p : left) {
            EXPECT_EQ(p.provider, "Faulty_" + p.function);
            EXPECT_TRUE(session->findModule(p.modulePath)) << p.modulePath;
        }
        EXPECT_TRUE(anyProviderInEffectOnThisThread());
        runtime->deactivate();
        EXPECT_TRUE(runtime->leftovers().empty());
        EXPECT_EQ(stacksText(), stacksBefore);
        EXPECT_FALSE(anyProviderInEffectOnThisThread());
        runtime->activate();
        gFailAt = 0;
        expectSameOutputs(session->forward(), baseline);
    }
}

// R16: allocation failures inside a provider (std::bad_alloc, c10::OutOfMemoryError thrown and a real refused
// allocation) are errors like any other: clear message, no leftover, the session usable.
// R16, no silent degradation: with the interposer's self-test failed, a plan would run the originals only; the
// runtime refuses it, naming the cause, and a baseline (an empty plan) still runs.
TEST_F(FaultInjection, R16_AFailedInterposerSelfTestRefusesAPlanInsteadOfRunningOriginals)
{
    const Plan gelu = test::planOf({test::entry("", "gelu", "AtenGeluProvider")});
    runtime::faults::gSelfTestFailed = true;
    const std::string message = test::errorOf([&] { KernelProviderRuntime refused(*session, gelu); });
    EXPECT_NE(message.find("self-test failed"), std::string::npos) << message;
    EXPECT_NO_THROW(KernelProviderRuntime(*session, Plan{}));
    runtime::faults::gSelfTestFailed = false;
    EXPECT_NO_THROW(KernelProviderRuntime(*session, gelu));
}

TEST_F(FaultInjection, R16_AllocationFailureInsideAProviderIsACleanError)
{
    const std::pair<Fault, std::string> faults[] = {{Fault::BadAlloc, "bad_alloc"},
                                                    {Fault::OutOfMemory, "injected out of memory"},
                                                    {Fault::RealAllocation, "can't allocate memory"}};
    for (const auto& [fault, expected] : faults) {
        for (long k : {1L, callsPerForward / 2, callsPerForward}) {
            gFault = fault;
            gCalls = 0;
            gFailAt = k;
            const std::string message = forwardError(*session);
            EXPECT_TRUE(contains(message, expected)) << message;
            EXPECT_TRUE(contains(message, "provider 'Faulty_")) << message;
            EXPECT_EQ(message.find('\n'), std::string::npos) << message;
            expectCleanAndUsable(expected + ", k = " + std::to_string(k));
        }
    }
}

namespace {
std::atomic<int> gPushes{0};
std::atomic<int> gFailPush{0};
std::atomic<int> gFailedPlanIndex{-1};

void countOrFailPush(Function, int planIndex)
{
    if (++gPushes == gFailPush.load()) {
        gFailedPlanIndex = planIndex;
        throw std::runtime_error("injected push failure #" + std::to_string(gFailPush.load()));
    }
}
} // namespace

// R3, R10: the pre-hook seam fails on the k-th push of a forward, for every k.
TEST_F(FaultInjection, R3_R10_PushFailingOnEveryKthPushLeavesNoPatch)
{
    runtime::faults::gBeforePush = countOrFailPush;
    gPushes = 0;
    gFailPush = 0;
    session->forward();
    const int pushes = gPushes.load();
    ASSERT_GE(pushes, 7) << "every entry's scope is entered at least once";
    for (int k = 1; k <= pushes; ++k) {
        gPushes = 0;
        gFailPush = k;
        const std::string message = forwardError(*session);
        EXPECT_TRUE(contains(message, "injected push failure #" + std::to_string(k))) << message;
        gFailPush = 0;
        expectCleanAndUsable("push k = " + std::to_string(k));
    }
}

// R3, R11, R7: with leftovers kept, the patches of the scopes around the failing pre-hook stay listed, but the
// failing pre-hook's own pushes are undone (transactional); deactivate() unwinds the rest.
TEST_F(FaultInjection, R3_R11_R7_KeptLeftoversOfEveryKthPushFailureAreUnwoundByDeactivate)
{
    session->setKeepLeftovers(true);
    runtime::faults::gBeforePush = countOrFailPush;
    gPushes = 0;
    gFailPush = 0;
    session->forward();
    const int pushes = gPushes.load();
    const Plan plan = nestedPlan();
    for (int k = 1; k <= pushes; ++k) {
        SCOPED_TRACE("push k = " + std::to_string(k));
        gPushes = 0;
        gFailPush = k;
        gFailedPlanIndex = -1;
        forwardError(*session);
        gFailPush = 0;
        ASSERT_GE(gFailedPlanIndex.load(), 0);
        const std::string failedScope = plan.entries[size_t(gFailedPlanIndex.load())].scope;
        for (const LeftoverPatch& p : runtime->leftovers())
            EXPECT_NE(p.modulePath, failedScope) << "the failing pre-hook's pushes must be undone (R3)";
        runtime->deactivate();
        EXPECT_TRUE(runtime->leftovers().empty());
        EXPECT_EQ(stacksText(), stacksBefore);
        EXPECT_FALSE(anyProviderInEffectOnThisThread());
        runtime->activate();
        expectSameOutputs(session->forward(), baseline);
    }
}
