// SPDX-License-Identifier: Apache-2.0
// The runtime contract, docs/design/runtime-semantics.md R1-R9, R16; AITune's runtime tests ported.
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/runtime.h>

#include "model/session_impl.h"
#include "runtime/fault_injection.h"
#include "runtime/fusers.h"
#include "runtime/interposer.h"
#include "runtime/mode_key.h"
#include "runtime/thread_state.h"
#include "test_helpers.h"
#include "runtime/hook_ops.h"
#include "model/graph_instrumentation.h"

#include <ATen/ATen.h>
#include <algorithm>
#include <string_view>
#include <future>
#include <thread>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <ATen/record_function.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

using namespace kforge;
using namespace kforge::test;

namespace {

class Runtime : public ::testing::Test {
protected:
    void SetUp() override
    {
        registerTestProviders();
        session = ModelSession::open("builtin:tiny-gpt");
        tagCalls() = 0;
    }
    // gelu calls served by the tagging provider during one forward.
    long taggedGeluCallsInForward()
    {
        const long before = tagCalls();
        session->forward();
        return tagCalls() - before;
    }
    std::unique_ptr<ModelSession> session;
};

int countEvents(const std::vector<Event>& events, EventKind kind)
{
    return int(std::count_if(events.begin(), events.end(), [&](const Event& e) { return e.kind == kind; }));
}

} // namespace

// R1: inside the scope the provider runs, outside it the original; nothing left on the thread afterwards.
TEST_F(Runtime, R1_ProviderRunsOnlyInsideItsScope)
{
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.1", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    EXPECT_EQ(taggedGeluCallsInForward(), 1); // blocks.1.mlp's gelu, not blocks.0's
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    runtime.deactivate();
    EXPECT_EQ(taggedGeluCallsInForward(), 0);
}

// R1: with the key included and nothing in effect, aten::linear (a composite: addmm/matmul inside) reaches the
// interposer exactly once, runs the original, and its result and autograd match the uninterposed op; the ops of
// its decomposition never reach the interposer again (one OriginalCall event, for linear only).
TEST_F(Runtime, R1_CompositeOpKeepsAutogradWhenNoProviderInEffect)
{
    runtime::ensureInterposer();
    const at::Tensor w = at::randn({3, 4}).requires_grad_();
    const at::Tensor x = at::randn({2, 4});
    const at::Tensor plain = at::linear(x, w);
    const at::Tensor plainGrad = torch::autograd::grad({plain.sum()}, {w})[0];
    auto& thread = runtime::ThreadState::current();
    const bool prev = std::exchange(thread.observe, true);
    auto events = EventStream::attach(1024);
    at::Tensor interposed, interposedGrad;
    {
        c10::impl::IncludeDispatchKeyGuard include(runtime::kModeKey);
        interposed = at::linear(x, w);
        ASSERT_TRUE(interposed.requires_grad());
        interposedGrad = torch::autograd::grad({interposed.sum()}, {w})[0];
    }
    thread.observe = prev;
    std::vector<Event> log;
    events->drain(log);
    std::vector<std::string> originals;
    for (const Event& e : log)
        if (e.kind == EventKind::OriginalCall)
            originals.push_back(e.function);
    EXPECT_EQ(originals, std::vector<std::string>{"linear"}) << "the interposer was not reached exactly once";
    EXPECT_TRUE(at::equal(plain, interposed));
    EXPECT_TRUE(at::allclose(plainGrad, interposedGrad));
}

// R1 for C++ callers (at::relu, ATen's composite ops): they reach the interposer's typed entry. With nothing in
// effect for the function it passes through unboxed (result and autograd as the plain op's, no event even while
// observed elsewhere); with a provider in effect the call is boxed for it, in place and tuple-returning overloads
// included, and the results are the original's.
TEST_F(Runtime, R1_CxxCallersPassThroughUnboxedOrReachTheProviderInEffect)
{
    const at::Tensor x = at::randn({2, 3, 8, 8});
    const at::Tensor w = at::randn({8}).requires_grad_();
    const at::Tensor plainRelu = at::relu(x * w);
    const at::Tensor plainGrad = torch::autograd::grad({plainRelu.sum()}, {w})[0];
    const auto [plainPool, plainIndices] = at::max_pool2d_with_indices(x, {2, 2});

    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    const auto root = moduleObject(*session, "");
    auto events = EventStream::attach(256);
    callEnterOp(root); // gelu's provider in effect on this thread: the key is included
    const at::Tensor passedRelu = at::relu(x * w);
    const at::Tensor passedGrad = torch::autograd::grad({passedRelu.sum()}, {w})[0];
    at::Tensor inPlace = x.clone();
    at::relu_(inPlace);
    const auto [passedPool, passedIndices] = at::max_pool2d_with_indices(x, {2, 2});
    EXPECT_EQ(geluTagOnThisThread(), kTagA); // gelu, from C++ too, reaches its provider
    callExitOp(root);
    runtime.deactivate();
    EXPECT_TRUE(at::equal(passedRelu, plainRelu));
    EXPECT_TRUE(at::allclose(passedGrad, plainGrad));
    EXPECT_TRUE(at::equal(inPlace, at::relu(x)));
    EXPECT_TRUE(at::equal(passedPool, plainPool) && at::equal(passedIndices, plainIndices));
    std::vector<Event> log;
    events->drain(log);
    EXPECT_EQ(countEvents(log, EventKind::OriginalCall), 0) << "a pass-through call emitted an event";

    // Reference providers in effect for relu and max_pool2d_with_indices: C++ calls are served, boxed.
    KernelProviderRuntime served(*session,
                                 planOf({entry("", "relu", "AtenReluProvider"),
                                         entry("", "max_pool2d_with_indices", "AtenMaxPool2dWithIndicesProvider")}));
    served.activate();
    callEnterOp(root);
    const at::Tensor servedRelu = at::relu(x);
    at::Tensor servedInPlace = x.clone();
    const at::Tensor& returned = at::relu_(servedInPlace);
    const auto [servedPool, servedIndices] = at::max_pool2d_with_indices(x, {2, 2});
    callExitOp(root);
    served.deactivate();
    log.clear();
    events->drain(log);
    EXPECT_EQ(countEvents(log, EventKind::ProviderCall), 3);
    EXPECT_TRUE(at::equal(servedRelu, at::relu(x)));
    EXPECT_TRUE(at::equal(servedInPlace, at::relu(x)));
    EXPECT_TRUE(returned.is_same(servedInPlace)) << "an in-place call returned another tensor than its input";
    EXPECT_TRUE(at::equal(servedPool, plainPool) && at::equal(servedIndices, plainIndices));
}

// R1: a provider that calls the same op inside does not re-enter the interposer.
TEST_F(Runtime, R1_ProviderCallingTheSameOpReachesTheRealKernel)
{
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    EXPECT_EQ(taggedGeluCallsInForward(), 2); // once per block, not recursively
}

// Turns on NNC fusion on the CPU for the scope (a CPU build without LLVM uses NNC's interpreter): on CUDA it is
// on by default, and this is how its fused groups look before a plan is activated.
class CpuFusionOn {
public:
    CpuFusionOn()
        : m_cpu(torch::jit::canFuseOnCPU()), m_texpr(torch::jit::tensorExprFuserEnabled()),
          m_llvm(torch::jit::tensorexpr::getTEMustUseLLVMOnCPU())
    {
        torch::jit::overrideCanFuseOnCPU(true);
        torch::jit::setTensorExprFuserEnabled(true);
        torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
    }
    ~CpuFusionOn()
    {
        torch::jit::overrideCanFuseOnCPU(m_cpu);
        torch::jit::setTensorExprFuserEnabled(m_texpr);
        torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = m_llvm;
    }

private:
    bool m_cpu, m_texpr, m_llvm;
};

// R1: forwards that ran before activation let the profiling executor fuse gelu with its neighbours into one
// group, which never dispatches gelu. Activation drops such plans, so the provider serves the next forward.
TEST_F(Runtime, R1_FusedGraphsBuiltBeforeActivationDoNotBypassProviders)
{
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x * 2.0) * 3.0 + 1.0"), dir.path("fusible.pt"));
    auto fusible = ModelSession::open(dir.path("fusible.pt").string(), {false, GraphExecutor::Optimized});
    fusible->setInputSpecs({"float32[4,64]"});
    CpuFusionOn fusion;
    const double originals = fusible->forward()[0].sum;
    for (int i = 0; i < 3; ++i)
        fusible->forward();
    ASSERT_TRUE(runtime::Fusers::holdFusedGroups(sessionImpl(*fusible).module))
        << "precondition: the forwards fused gelu";

    KernelProviderRuntime runtime(*fusible, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    const long before = tagCalls();
    const double served = fusible->forward()[0].sum;
    EXPECT_EQ(tagCalls() - before, 1);
    EXPECT_NEAR(served - originals, 4 * 64 * 3 * kTagA, 1.0) << "gelu ran inside a fused group";
    EXPECT_FALSE(runtime::Fusers::holdFusedGroups(sessionImpl(*fusible).module));
    runtime.deactivate();
}

// The default Direct executor runs the graph as scripted: however many forwards ran, nothing was fused, so every
// call stays interceptable. Switching the session to Optimized lets LibTorch optimise (and here fuse) again.
TEST_F(Runtime, R1_TheDirectExecutorNeverFuses)
{
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x * 2.0) * 3.0 + 1.0"), dir.path("fusible.pt"));
    auto fusible = ModelSession::open(dir.path("fusible.pt").string());
    EXPECT_EQ(fusible->options().executor, GraphExecutor::Direct);
    fusible->setInputSpecs({"float32[4,64]"});
    CpuFusionOn fusion;
    for (int i = 0; i < 4; ++i)
        fusible->forward();
    EXPECT_FALSE(runtime::Fusers::holdFusedGroups(sessionImpl(*fusible).module));
    fusible->setGraphExecutor(GraphExecutor::Optimized);
    for (int i = 0; i < 3; ++i)
        fusible->forward();
    EXPECT_TRUE(runtime::Fusers::holdFusedGroups(sessionImpl(*fusible).module));
}

// R1, R2: the scope ops order the calls they bracket, under both executors. The root calls gelu(x) before and after
// `act` calls the same gelu(x): once the optimized executor inlines `act`, common subexpression elimination would
// merge the three calls, so that the provider's result is used outside its scope or the provider never runs. The
// weights 1, 2 and 4 tell the calls apart: only the middle one carries the tag.
TEST_F(Runtime, R1_R2_ScopeOpsOrderTheCallsTheyBracketUnderBothExecutors)
{
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x)", "torch.gelu(x) + 2.0 * self.act.forward(x) + 4.0 * torch.gelu(x)"),
               dir.path("repeated.pt"));
    for (const GraphExecutor executor : {GraphExecutor::Direct, GraphExecutor::Optimized}) {
        SCOPED_TRACE(std::string(graphExecutorName(executor)));
        auto repeated = ModelSession::open(dir.path("repeated.pt").string(), {false, executor});
        repeated->setInputSpecs({"float32[8]"});
        const double originals = repeated->forward()[0].sum;
        KernelProviderRuntime runtime(*repeated, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
        const auto applied = runtime.applied();
        for (int i = 0; i < 4; ++i) // the profiling executor optimises after its first forwards
            EXPECT_NEAR(repeated->forward()[0].sum - originals, 8 * 2 * kTagA, 1e-2) << "forward " << i;
    }
}

// R1: a catalog call whose operands are all constants (here gelu(torch.ones(8)), in `act` and again in the root, and
// gelu of a traced tensor constant) is
// served in its scope on every forward and never folded into a constant: the optimized executor's constant
// propagation would compute it once while optimising, outside every scope (no provider), and its common
// subexpression elimination would merge the two scopes' calls. Deactivated, every forward is the original again.
TEST_F(Runtime, R1_CallsOnConstantsAreServedInTheirScopeUnderBothExecutors)
{
    TempDir dir;
    saveModule(twoLevelModel("x + torch.gelu(torch.ones(8))", "self.act.forward(x) + torch.gelu(torch.ones(8))"),
               dir.path("constants.pt"));
    // The same traced by torch.jit.trace, where gelu's operand is a tensor constant in the graph
    // (tests/data/models/make_constant_calls.py).
    const std::string traced = std::string(KFORGE_TEST_DATA) + "/models/constant_calls.trace.pt";
    for (const auto& [file, executor] :
         {std::pair{dir.path("constants.pt").string(), GraphExecutor::Direct},
          std::pair{dir.path("constants.pt").string(), GraphExecutor::Optimized},
          std::pair{traced, GraphExecutor::Direct}, std::pair{traced, GraphExecutor::Optimized}}) {
        SCOPED_TRACE(file + " " + std::string(graphExecutorName(executor)));
        auto model = ModelSession::open(file, {false, executor});
        model->setInputSpecs({"float32[8]"});
        const double originals = model->forward()[0].sum;
        {
            KernelProviderRuntime runtime(*model, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
            const auto applied = runtime.applied();
            for (int i = 0; i < 4; ++i) // the profiling executor optimises after its first forwards
                EXPECT_NEAR(model->forward()[0].sum - originals, 8 * kTagA, 1e-2) << "forward " << i;
        }
        for (int i = 0; i < 3; ++i)
            EXPECT_NEAR(model->forward()[0].sum, originals, 1e-3) << "deactivated, forward " << i;
    }
}

// R1 on a frozen model (torch.jit.freeze, as users freeze for deployment; tests/data/models/make_constant_calls.py):
// freezing inlined `act` and folded its gelu of a buffer into a constant before kforge saw it. What is left is two
// gelu calls on activations, both at the root: the inventory counts those two, a root entry serves both on every
// forward under both executors (never a result folded while the plan was in effect), and deactivation restores all.
TEST_F(Runtime, R1_AFrozenModelsRemainingCallsAreServedAndItsFoldedCallsAreNotClaimed)
{
    const std::string frozen = std::string(KFORGE_TEST_DATA) + "/models/constant_calls.frozen.pt";
    for (const auto executor : {GraphExecutor::Direct, GraphExecutor::Optimized}) {
        SCOPED_TRACE(graphExecutorName(executor));
        auto model = ModelSession::open(frozen, {false, executor});
        ASSERT_TRUE(model->isFrozen());
        ASSERT_EQ(model->modules().size(), 1u) << "freeze inlines every submodule";
        EXPECT_EQ(model->modules()[0].functions.at("gelu"), 2) << "the gelu of a buffer was folded by freeze";
        model->setInputSpecs({"float32[8]"});
        const double originals = model->forward()[0].sum;
        {
            KernelProviderRuntime runtime(*model, planOf({entry("", "gelu", "TestTagGeluProvider")}));
            const auto applied = runtime.applied();
            for (int i = 0; i < 4; ++i) // the profiling executor optimises after its first forwards
                EXPECT_NEAR(model->forward()[0].sum - originals, 2 * 8 * kTagA, 1e-1) << "forward " << i;
        }
        for (int i = 0; i < 3; ++i)
            EXPECT_NEAR(model->forward()[0].sum, originals, 1e-3) << "deactivated, forward " << i;
    }
}

// R2: every module class's forward graph carries the enter/exit ops; hooking is decided at run time.
TEST_F(Runtime, R2_ForwardGraphsCarryEnterAndExitOps)
{
    for (const auto& item : sessionImpl(*session).module.named_modules()) {
        const auto method = item.value.find_method("forward");
        if (!method)
            continue;
        const auto graph = torch::jit::toGraphFunction(method->function()).graph();
        const std::string text = graph->toString();
        EXPECT_NE(text.find("kforge::module_enter"), std::string::npos) << item.name;
        EXPECT_NE(text.find("kforge::module_exit"), std::string::npos) << item.name;
    }
}

// R2: each instrumented class keeps a plain copy of its forward, calling its submodules' plain copies; a forward
// while no hook has anything to do runs the plain copy (no hook op executes), and one with a runtime bound runs the
// instrumented forward; the outputs agree.
namespace {

// The TorchScript functions one forward of the session enters, in order (the interpreter's RecordFunction calls),
// and the forward's output digest.
std::pair<std::vector<std::string>, std::vector<TensorDigest>> functionsEntered(ModelSession& session)
{
    static thread_local std::vector<std::string>* names = nullptr;
    std::vector<std::string> seen;
    names = &seen;
    const auto handle = at::addThreadLocalCallback(
        at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
            if (names)
                names->emplace_back(fn.name());
            return nullptr;
        }).scopes({at::RecordScope::TORCHSCRIPT_FUNCTION}));
    const auto output = session.forward();
    at::removeCallback(handle);
    names = nullptr;
    return {seen, output};
}

runtime::HookDemand hookDemandOf(ModelSession& session)
{
    return runtime::hookDemand(sessionImpl(session).module._ivalue());
}

// What an idle forward may enter: a plain copy, or (the direct executor) the root's inlined plain forward.
bool isPlainCopy(const std::string& name)
{
    return name.rfind(kPlainMethodPrefix, 0) == 0 || name == kInlinedPlainForward;
}

} // namespace

TEST_F(Runtime, R2_IdleHooksRunThePlainForwardCopy)
{
    const torch::jit::Module& root = sessionImpl(*session).module;
    for (const auto& item : root.named_modules()) {
        const auto plain = item.value.find_method(kPlainForward);
        if (!item.value.find_method("forward"))
            continue;
        ASSERT_TRUE(plain) << item.name << " has no plain forward";
        const std::string text = torch::jit::toGraphFunction(plain->function()).graph()->toString();
        EXPECT_EQ(text.find("kforge::module_"), std::string::npos) << item.name << ":\n" << text;
        EXPECT_EQ(text.find("name=\"forward\""), std::string::npos) << item.name << " calls an instrumented forward";
    }
    ASSERT_EQ(hookDemandOf(*session), runtime::HookDemand::None);
    const auto [idle, idleOutput] = functionsEntered(*session);
    ASSERT_FALSE(idle.empty()) << "the interpreter recorded no function";
    // The direct executor (the session's) runs the root's forwards with every module call inlined: the plain one
    // holds no hook op and calls nothing, the instrumented one has every module's hooks in line.
    EXPECT_EQ(idle.front(), kInlinedPlainForward);
    const auto inlinedGraph = [&](const char* name) {
        return torch::jit::toGraphFunction(root.get_method(name).function()).graph()->toString();
    };
    EXPECT_EQ(inlinedGraph(kInlinedPlainForward).find("kforge::module_"), std::string::npos);
    EXPECT_EQ(inlinedGraph(kInlinedPlainForward).find("prim::CallMethod"), std::string::npos);
    EXPECT_NE(inlinedGraph(kInlinedForward).find("kforge::module_enter"), std::string::npos);
    EXPECT_EQ(inlinedGraph(kInlinedForward).find("prim::CallMethod"), std::string::npos);
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.1", "gelu", "AtenGeluProvider")}));
    runtime.activate();
    EXPECT_EQ(hookDemandOf(*session), runtime::HookDemand::EveryModule);
    const auto [active, activeOutput] = functionsEntered(*session);
    runtime.deactivate();
    ASSERT_FALSE(active.empty());
    EXPECT_EQ(active.front(), kInlinedForward);
    ASSERT_EQ(idleOutput.size(), activeOutput.size());
    for (size_t i = 0; i < idleOutput.size(); ++i)
        EXPECT_EQ(idleOutput[i].sum, activeOutput[i].sum) << "output " << i;
}

// R2: the direct executor inlines calls of TorchScript functions too (a helper of the user's, nn.LayerNorm's
// F.layer_norm) and prepares the graph as LibTorch prepares every graph it runs (tests/data/models/
// make_function_calls.py: `scaled_gelu(...)` in script, a traced size in trace): an idle forward enters
// no function but the inlined plain forward, the no-ops are gone, and the gelu inside blocks.1's inlined helper is
// still served in blocks.1's scope only, with the outputs of the optimized executor.
TEST_F(Runtime, R2_TheDirectExecutorInlinesFunctionsAndKeepsTheirCallsInScope)
{
    for (const char* file : {"function_calls.script.pt", "function_calls.trace.pt"}) {
        SCOPED_TRACE(file);
        const std::string path = std::string(KFORGE_TEST_DATA) + "/models/" + file;
        auto direct = ModelSession::open(path);
        direct->setInputSpecs({"float32[2,8]"});
        const torch::jit::Module& root = sessionImpl(*direct).module;
        for (const char* name : {kInlinedForward, kInlinedPlainForward}) {
            const std::string graph = torch::jit::toGraphFunction(root.get_method(name).function()).graph()->toString();
            for (const char* gone : {"prim::CallFunction", "prim::CallMethod", "prim::NumToTensor"})
                EXPECT_EQ(graph.find(gone), std::string::npos) << name << " still holds " << gone << ":\n" << graph;
        }
        ASSERT_EQ(hookDemandOf(*direct), runtime::HookDemand::None);
        const auto [entered, idleOutput] = functionsEntered(*direct);
        const auto only = [](const std::vector<std::string>& names, const char* name) {
            return !names.empty() && std::all_of(names.begin(), names.end(), [&](const auto& n) { return n == name; });
        };
        EXPECT_TRUE(only(entered, kInlinedPlainForward)) << testing::PrintToString(entered);

        KernelProviderRuntime runtime(*direct, planOf({entry("blocks.1", "gelu", "TestTagGeluProvider")}));
        runtime.activate();
        const long before = tagCalls();
        const auto [active, activeOutput] = functionsEntered(*direct);
        const long served = tagCalls() - before;
        runtime.deactivate();
        EXPECT_TRUE(only(active, kInlinedForward)) << testing::PrintToString(active);
        EXPECT_EQ(served, 1) << "blocks.1's gelu, inside its inlined helper, and not blocks.0's";

        OpenOptions optimizedOptions;
        optimizedOptions.executor = GraphExecutor::Optimized;
        auto optimized = ModelSession::open(path, optimizedOptions);
        optimized->setInputSpecs({"float32[2,8]"});
        const auto optimizedOutput = optimized->forward();
        ASSERT_EQ(idleOutput.size(), 1u);
        ASSERT_EQ(optimizedOutput.size(), 1u);
        EXPECT_EQ(idleOutput[0].sum, optimizedOutput[0].sum);
        EXPECT_NE(activeOutput[0].sum, idleOutput[0].sum) << "the tagged gelu left no mark on the output";
    }
}

// R2: the direct executor computes a repeated pure expression once, as LibTorch's optimizer does (a traced decoder
// repeats its size arithmetic and masks in every layer), and builds no tuple only to unpack it; but two calls of a
// catalog function are never merged, even of gelu on the same tensor: both stay in the graph and both are served.
TEST_F(Runtime, R2_RepeatedExpressionsRunOnceAndEveryCatalogCallStays)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module twice(c10::QualifiedName("__torch__.Twice"), cu, true);
    twice.define("def forward(self, x: Tensor) -> Tensor:\n"
                 "    pair = (torch.gelu(x) * x.size(0), torch.gelu(x) * x.size(0))\n"
                 "    a, b = pair\n"
                 "    return a + b\n");
    torch::jit::Module root(c10::QualifiedName("__torch__.Root"), cu, true);
    root.register_module("act", twice);
    root.define("def forward(self, x: Tensor) -> Tensor:\n    return self.act.forward(x)\n");
    root.eval();
    TempDir dir;
    saveModule(root, dir.path("twice.pt"));
    auto session = ModelSession::open(dir.path("twice.pt").string());
    session->setInputSpecs({"float32[2,3]"});
    const auto count = [&](const char* method, const char* kind) {
        const auto graph =
            torch::jit::toGraphFunction(sessionImpl(*session).module.get_method(method).function()).graph();
        return std::count_if(graph->nodes().begin(), graph->nodes().end(), [&](const torch::jit::Node* node) {
            return node->kind() == c10::Symbol::fromQualString(kind);
        });
    };
    EXPECT_EQ(count(kInlinedPlainForward, "aten::size"), 1);
    EXPECT_EQ(count(kInlinedPlainForward, "prim::TupleConstruct"), 0);
    EXPECT_EQ(count(kInlinedPlainForward, "aten::gelu"), 2);
    EXPECT_EQ(count(kInlinedForward, "aten::gelu"), 2);
    const auto act = std::find_if(session->modules().begin(), session->modules().end(),
                                  [](const auto& module) { return module.path == "act"; });
    ASSERT_NE(act, session->modules().end());
    EXPECT_EQ(act->functions.at("gelu"), 2);

    const auto idleOutput = session->forward();
    KernelProviderRuntime runtime(*session, planOf({entry("act", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    const long before = tagCalls();
    session->forward();
    EXPECT_EQ(tagCalls() - before, 2) << "both gelu calls served";
    runtime.deactivate();
    OpenOptions optimizedOptions;
    optimizedOptions.executor = GraphExecutor::Optimized;
    auto optimized = ModelSession::open(dir.path("twice.pt").string(), optimizedOptions);
    optimized->setInputSpecs({"float32[2,3]"});
    ASSERT_EQ(idleOutput.size(), 1u);
    EXPECT_EQ(idleOutput[0].sum, optimized->forward()[0].sum);
}

// R2: the plain copies keep the schema of the methods they copy, defaults included: an idle forward that leaves
// out arguments with defaults (the forward's own, and a helper's called without them) runs as the forward does.
TEST_F(Runtime, R2_PlainCopiesKeepTheDefaultArgumentsOfTheirMethods)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module act(c10::QualifiedName("__torch__.Act"), cu, true);
    act.define("def forward(self, x: Tensor, slope: float = 3.0) -> Tensor:\n    return self._shift(x) * slope\n"
               "def _shift(self, x: Tensor, by: float = 1.0) -> Tensor:\n    return torch.gelu(x) + by\n");
    torch::jit::Module root(c10::QualifiedName("__torch__.Root"), cu, true);
    root.register_module("act", act);
    root.define("def forward(self, x: Tensor, scale: float = 2.0, bias: Optional[Tensor] = None) -> Tensor:\n"
                "    y = self.act.forward(x) * scale\n"
                "    if bias is not None:\n        y = y + bias\n"
                "    return y\n");
    root.eval();
    TempDir dir;
    saveModule(root, dir.path("defaults.pt"));
    auto defaults = ModelSession::open(dir.path("defaults.pt").string());
    defaults->setInputSpecs({"float32[2,3]"});
    const torch::jit::Method plain = sessionImpl(*defaults).module.get_method(kPlainForward);
    const auto& arguments = plain.function().getSchema().arguments();
    ASSERT_EQ(arguments.size(), 4u);
    ASSERT_TRUE(arguments[2].default_value().has_value()) << plain.function().getSchema();
    EXPECT_EQ(arguments[2].default_value()->toDouble(), 2.0);

    ASSERT_EQ(hookDemandOf(*defaults), runtime::HookDemand::None);
    const auto [entered, idleOutput] = functionsEntered(*defaults);
    ASSERT_FALSE(entered.empty());
    EXPECT_EQ(entered.front(), kInlinedPlainForward);
    const auto& inlinedArguments =
        sessionImpl(*defaults).module.get_method(kInlinedPlainForward).function().getSchema().arguments();
    ASSERT_EQ(inlinedArguments.size(), 4u);
    ASSERT_TRUE(inlinedArguments[2].default_value().has_value());
    EXPECT_EQ(inlinedArguments[2].default_value()->toDouble(), 2.0);
    KernelProviderRuntime runtime(*defaults, planOf({entry("act", "gelu", "AtenGeluProvider")}));
    runtime.activate();
    const auto activeOutput = defaults->forward();
    runtime.deactivate();
    ASSERT_EQ(idleOutput.size(), 1u);
    ASSERT_EQ(activeOutput.size(), 1u);
    EXPECT_EQ(idleOutput[0].sum, activeOutput[0].sum);
}

// R2: a forward that reaches its submodules through helper methods (torchvision's ResNet.forward calls
// self._forward_impl, SqueezeExcitation.forward calls self._scale) runs plain copies of those methods too while idle:
// no instrumented forward, so no hook, anywhere in the model.
TEST_F(Runtime, R2_IdleForwardsReachSubmodulesThroughPlainCopiesOfHelperMethods)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module act(c10::QualifiedName("__torch__.Act"), cu, true);
    act.define("def forward(self, x: Tensor) -> Tensor:\n    return torch.gelu(x)\n");
    torch::jit::Module block(c10::QualifiedName("__torch__.Block"), cu, true);
    block.register_module("act", act);
    block.define("def forward(self, x: Tensor) -> Tensor:\n    return self._scale(x)\n"
                 "def _scale(self, x: Tensor) -> Tensor:\n    return self.act.forward(x) * 2.0\n");
    torch::jit::Module root(c10::QualifiedName("__torch__.Root"), cu, true);
    root.register_module("block", block);
    root.define("def forward(self, x: Tensor) -> Tensor:\n    return self._forward_impl(x)\n"
                "def _forward_impl(self, x: Tensor) -> Tensor:\n    return self.block.forward(x) + 1.0\n");
    root.eval();
    TempDir dir;
    saveModule(root, dir.path("helpers.pt"));
    auto helpers = ModelSession::open(dir.path("helpers.pt").string());
    helpers->setInputSpecs({"float32[2,3]"});

    // Every plain copy calls plain copies only, and holds no hook op.
    std::vector<std::string> plainMethods;
    for (const auto& item : sessionImpl(*helpers).module.named_modules())
        for (const torch::jit::Method& method : item.value.get_methods()) {
            if (method.name().rfind(kPlainMethodPrefix, 0) != 0)
                continue;
            plainMethods.push_back(item.value.type()->name()->name() + "." + method.name());
            const auto graph = torch::jit::toGraphFunction(method.function()).graph();
            EXPECT_EQ(graph->toString().find("kforge::module_"), std::string::npos) << plainMethods.back();
            for (const torch::jit::Node* node : graph->nodes())
                if (node->kind() == c10::prim::CallMethod)
                    EXPECT_EQ(node->s(c10::attr::name).rfind(kPlainMethodPrefix, 0), 0u)
                        << plainMethods.back() << " calls " << node->s(c10::attr::name);
        }
    std::sort(plainMethods.begin(), plainMethods.end());
    EXPECT_EQ(plainMethods, (std::vector<std::string>{"Act._kforge_plain_forward", "Block._kforge_plain__scale",
                                                      "Block._kforge_plain_forward", "Root._kforge_plain__forward_impl",
                                                      "Root._kforge_plain_forward"}));
    // While idle the forward enters plain copies only; with a runtime active, the instrumented methods only.
    const auto isPlain = isPlainCopy;
    ASSERT_EQ(hookDemandOf(*helpers), runtime::HookDemand::None);
    const auto [idle, idleOutput] = functionsEntered(*helpers);
    ASSERT_FALSE(idle.empty());
    EXPECT_TRUE(std::all_of(idle.begin(), idle.end(), isPlain)) << testing::PrintToString(idle);
    KernelProviderRuntime runtime(*helpers, planOf({entry("block.act", "gelu", "AtenGeluProvider")}));
    runtime.activate();
    const auto [active, activeOutput] = functionsEntered(*helpers);
    runtime.deactivate();
    ASSERT_FALSE(active.empty());
    EXPECT_TRUE(std::none_of(active.begin(), active.end(), isPlain)) << testing::PrintToString(active);
    ASSERT_EQ(idleOutput.size(), 1u);
    ASSERT_EQ(activeOutput.size(), 1u);
    EXPECT_EQ(idleOutput[0].sum, activeOutput[0].sum);
}

// R2: a plan whose scopes are all the root needs no hook below it: the forward runs the plain copies between the
// root's hooks, called by hand, and its provider serves what it serves with every module's hooks running (an event
// stream needs them all). A scope below the root brings every hook back.
TEST_F(Runtime, R2_RootOnlyPlansRunThePlainForwardBetweenTheRootsHooks)
{
    static std::vector<std::string> hooked;
    runtime::faults::gAfterHookSnapshot = [](const char* path) { hooked.emplace_back(path); };
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    EXPECT_EQ(hookDemandOf(*session), runtime::HookDemand::RootOnly);
    hooked.clear();
    const long before = tagCalls();
    const auto [entered, output] = functionsEntered(*session);
    const long served = tagCalls() - before;
    EXPECT_EQ(hooked, std::vector<std::string>{""});
    ASSERT_FALSE(entered.empty());
    EXPECT_TRUE(std::all_of(entered.begin(), entered.end(), isPlainCopy)) << testing::PrintToString(entered);
    EXPECT_EQ(served, 2); // both blocks' gelus

    hooked.clear();
    std::vector<TensorDigest> everyHookOutput;
    {
        auto stream = EventStream::attach();
        EXPECT_EQ(hookDemandOf(*session), runtime::HookDemand::EveryModule);
        everyHookOutput = session->forward();
    }
    EXPECT_GT(hooked.size(), 1u) << "with an event stream every module's hooks run";
    EXPECT_EQ(tagCalls() - before, 2 * served);
    ASSERT_EQ(output.size(), everyHookOutput.size());
    for (size_t i = 0; i < output.size(); ++i)
        EXPECT_EQ(output[i].sum, everyHookOutput[i].sum) << "output " << i;
    runtime.deactivate();
    EXPECT_EQ(geluTagOnThisThread(), 0.0);

    KernelProviderRuntime inner(*session, planOf({entry("blocks.1", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    inner.activate();
    EXPECT_EQ(hookDemandOf(*session), runtime::HookDemand::EveryModule);
    inner.deactivate();
    runtime.deactivate();
    runtime::faults::gAfterHookSnapshot = nullptr;
    EXPECT_EQ(hookDemandOf(*session), runtime::HookDemand::None);
}

// R2, R9: an empty plan installs nothing and is_active stays false, as in Python.
TEST_F(Runtime, R2_R9_EmptyPlanStaysInactive)
{
    KernelProviderRuntime runtime(*session, Plan{});
    runtime.activate();
    EXPECT_FALSE(runtime.isActive());
}

// R3 (AITune: transactional pre-hook): the 2nd of 3 steps fails -> the 1st is undone, the error rethrown.
TEST_F(Runtime, R3_PreHookIsTransactional)
{
    KernelProviderRuntime runtime(
        *session, planOf({entry("", "gelu", "TestTagGeluProvider"), entry("", "layer_norm", "AtenLayerNormProvider"),
                          entry("", "softmax", "AtenSoftmaxProvider")}));
    runtime.activate();
    runtime::faults::gBeforePush = [](Function, int planIndex) {
        if (planIndex == 1)
            throw std::runtime_error("injected failure on the second entry");
    };
    EXPECT_THROW(
        {
            try {
                callEnterOp(moduleObject(*session, ""));
            } catch (const std::exception& e) {
                EXPECT_NE(std::string(e.what()).find("injected failure"), std::string::npos);
                throw;
            }
        },
        std::exception);
    runtime::faults::gBeforePush = nullptr;
    auto& thread = runtime::ThreadState::current();
    EXPECT_EQ(thread.inEffect(Function::Gelu), nullptr);
    EXPECT_EQ(thread.inEffect(Function::LayerNorm), nullptr);
    EXPECT_TRUE(runtime.leftovers().empty());
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}

// R3, R4: pre-hook pushes in plan order, post-hook pops in reverse order and restores the original.
TEST_F(Runtime, R3_R4_PrePushesPostRestores)
{
    KernelProviderRuntime runtime(
        *session, planOf({entry("", "gelu", "TestTagGeluProvider"), entry("", "softmax", "AtenSoftmaxProvider")}));
    runtime.activate();
    auto events = EventStream::attach(256);
    const auto root = moduleObject(*session, "");
    callEnterOp(root);
    EXPECT_EQ(geluTagOnThisThread(), kTagA);
    callExitOp(root);
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    std::vector<Event> log;
    events->drain(log);
    std::vector<std::string> order;
    for (const auto& e : log)
        if (e.kind == EventKind::Push || e.kind == EventKind::Pop)
            order.push_back(std::string(eventKindName(e.kind)) + ":" + e.function);
    EXPECT_EQ(order, (std::vector<std::string>{"push:gelu", "push:softmax", "pop:softmax", "pop:gelu"}));
}

// R4 (AITune: post-hook restores after a provider throws); R16: the error names function, provider, module.
TEST_F(Runtime, R4_R16_PostHookRestoresAfterProviderThrows)
{
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.0.mlp", "gelu", "TestThrowingGeluProvider")}));
    runtime.activate();
    try {
        session->forward();
        FAIL() << "the planted provider failure did not surface";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("gelu"), std::string::npos) << what;
        EXPECT_NE(what.find("TestThrowingGeluProvider"), std::string::npos) << what;
        EXPECT_NE(what.find("blocks.0.mlp"), std::string::npos) << what;
        EXPECT_NE(what.find("planted failure"), std::string::npos) << what;
    }
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    runtime.deactivate();
    EXPECT_NO_THROW(session->forward()); // the session stays usable (R16)
}

// R4 at scale: a scope holding many entries for one function pops them in steps that grow with
// log N per entry, not N: each pop bisects the stacks for the next push of that function (a scan of every entry
// left made 320k entries take 128 s). Counted, not timed: the entries the post-hook looked at.
TEST_F(Runtime, R4_APostHookFindsEachNextPushByBisectionNotAScan)
{
    constexpr int kEntries = 4096;
    std::vector<PlanEntry> entries(kEntries, entry("blocks.0.mlp", "gelu", "AtenGeluProvider"));
    KernelProviderRuntime runtime(*session, planOf(entries));
    runtime.activate();
    const auto mlp = moduleObject(*session, "blocks.0.mlp");
    callEnterOp(mlp);
    runtime::faults::tlsStackSearchSteps = 0;
    callExitOp(mlp);
    const std::uint64_t steps = runtime::faults::tlsStackSearchSteps;
    EXPECT_GT(steps, 0u);
    EXPECT_LE(steps, std::uint64_t(kEntries) * 16) << steps << " steps; log2(4096) = 12 per pop, a scan ~N^2/2 = 8.4 M";
    runtime.deactivate();
    EXPECT_NO_THROW(session->forward());
}

// R5: nested scopes replacing the same function: inner wins, outer is back after it, original after that.
TEST_F(Runtime, R5_NestedScopesAreLastInFirstOut)
{
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider"),
                                                    entry("blocks.0", "gelu", "TestTagBGeluProvider")}));
    runtime.activate();
    const auto root = moduleObject(*session, "");
    const auto block = moduleObject(*session, "blocks.0");
    callEnterOp(root);
    EXPECT_EQ(geluTagOnThisThread(), kTagA);
    callEnterOp(block);
    EXPECT_EQ(geluTagOnThisThread(), kTagB);
    callExitOp(block);
    EXPECT_EQ(geluTagOnThisThread(), kTagA);
    callExitOp(root);
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}

// R5: a re-entrant scope (the same module entered twice) composes LIFO too.
TEST_F(Runtime, R5_ReentrantScopeComposes)
{
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    const auto root = moduleObject(*session, "");
    callEnterOp(root);
    callEnterOp(root);
    callExitOp(root);
    EXPECT_EQ(geluTagOnThisThread(), kTagA);
    callExitOp(root);
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}

// R5: two runtimes on one model compose the same way; deactivating the inner one leaves the outer one.
TEST_F(Runtime, R5_TwoRuntimesCompose)
{
    KernelProviderRuntime outer(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    KernelProviderRuntime inner(*session, planOf({entry("blocks.0", "gelu", "TestTagBGeluProvider")}));
    outer.activate();
    inner.activate();
    const auto root = moduleObject(*session, "");
    const auto block = moduleObject(*session, "blocks.0");
    callEnterOp(root);
    callEnterOp(block);
    EXPECT_EQ(geluTagOnThisThread(), kTagB);
    callExitOp(block);
    EXPECT_EQ(geluTagOnThisThread(), kTagA);
    callExitOp(root);
    inner.deactivate();
    EXPECT_EQ(taggedGeluCallsInForward(), 2); // both gelus now by the outer runtime's provider
}

// R5: two runtimes bound to the same module: the later binding's push is on top while inside, both are gone after
// the exit, and an unbalanced enter unwinds to the original whichever runtime is deactivated first.
TEST_F(Runtime, R5_TwoRuntimesOnTheSameModule)
{
    KernelProviderRuntime a(*session, planOf({entry("blocks.0", "gelu", "TestTagGeluProvider")}));
    KernelProviderRuntime b(*session, planOf({entry("blocks.0", "gelu", "TestTagBGeluProvider")}));
    a.activate();
    b.activate();
    const auto block = moduleObject(*session, "blocks.0");
    callEnterOp(block);
    EXPECT_EQ(geluTagOnThisThread(), kTagB);
    callExitOp(block);
    EXPECT_EQ(geluTagOnThisThread(), 0.0);

    callEnterOp(block); // never exited
    a.deactivate();     // a's entry is below b's
    EXPECT_EQ(geluTagOnThisThread(), kTagB);
    b.deactivate();
    EXPECT_EQ(geluTagOnThisThread(), 0.0) << "a's provider came back after both runtimes were deactivated";
    EXPECT_TRUE(a.leftovers().empty());
    EXPECT_TRUE(b.leftovers().empty());
}

// R5, R7: deactivating the outer runtime while inside both scopes keeps the inner scope's provider, and the
// inner exit then restores the original, not the deactivated outer provider.
TEST_F(Runtime, R5_R7_DeactivateTheOuterRuntimeInsideBothScopes)
{
    KernelProviderRuntime outer(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    KernelProviderRuntime inner(*session, planOf({entry("blocks.0", "gelu", "TestTagBGeluProvider")}));
    outer.activate();
    inner.activate();
    const auto root = moduleObject(*session, "");
    const auto block = moduleObject(*session, "blocks.0");
    callEnterOp(root);
    callEnterOp(block);
    outer.deactivate();
    EXPECT_EQ(geluTagOnThisThread(), kTagB);
    callExitOp(block);
    EXPECT_EQ(geluTagOnThisThread(), 0.0) << "the deactivated outer provider is back in effect";
    callExitOp(root); // the outer runtime is unbound: nothing to pop
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    inner.deactivate();
    EXPECT_TRUE(outer.leftovers().empty());
    EXPECT_TRUE(inner.leftovers().empty());
    EXPECT_EQ(taggedGeluCallsInForward(), 0);
}

// R5, R7: activations interleaved with scopes: the inner runtime activated inside the outer scope and
// deactivated inside its own scope; the outer provider is back, then the original.
TEST_F(Runtime, R5_R7_InterleavedActivationsOfTwoRuntimes)
{
    KernelProviderRuntime outer(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    KernelProviderRuntime inner(*session, planOf({entry("blocks.0", "gelu", "TestTagBGeluProvider")}));
    const auto root = moduleObject(*session, "");
    const auto block = moduleObject(*session, "blocks.0");
    outer.activate();
    callEnterOp(root);
    inner.activate();
    callEnterOp(block);
    EXPECT_EQ(geluTagOnThisThread(), kTagB);
    inner.deactivate();
    EXPECT_EQ(geluTagOnThisThread(), kTagA);
    callExitOp(block); // inner unbound: nothing to pop
    EXPECT_EQ(geluTagOnThisThread(), kTagA);
    callExitOp(root);
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    outer.deactivate();
    EXPECT_TRUE(outer.leftovers().empty());
}

// R6 (AITune: idempotent activate): activating twice hooks once: one push per scope entry per forward.
TEST_F(Runtime, R6_ActivateIsIdempotent)
{
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.0", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    runtime.activate();
    auto events = EventStream::attach(4096);
    session->forward();
    std::vector<Event> log;
    events->drain(log);
    EXPECT_EQ(countEvents(log, EventKind::Push), 1);
    EXPECT_EQ(countEvents(log, EventKind::Pop), 1);
}

// R7 (AITune: deactivate unwinds a pre-hook that ran without its post-hook), idempotent.
TEST_F(Runtime, R7_DeactivateUnwindsUnbalancedPreHook)
{
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    callEnterOp(moduleObject(*session, ""));
    EXPECT_EQ(geluTagOnThisThread(), kTagA);
    EXPECT_TRUE(c10::impl::tls_is_dispatch_key_included(runtime::kModeKey));
    runtime.deactivate();
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
    EXPECT_TRUE(runtime.leftovers().empty());
    runtime.deactivate();
    EXPECT_FALSE(runtime.isActive());
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}

// R7: deactivate() reaches every thread the runtime touched, not only its own.
TEST_F(Runtime, R7_DeactivateUnwindsOtherThreads)
{
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    runtime.activate();
    std::mutex m;
    std::condition_variable cv;
    int stage = 0;
    double before = -1, after = -1;
    std::thread worker([&] {
        callEnterOp(moduleObject(*session, ""));
        before = geluTagOnThisThread();
        std::unique_lock lock(m);
        stage = 1;
        cv.notify_all();
        cv.wait(lock, [&] { return stage == 2; });
        after = geluTagOnThisThread();
    });
    {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return stage == 1; });
    }
    EXPECT_EQ(runtime.leftovers().size(), 1u);
    runtime.deactivate();
    {
        std::lock_guard lock(m);
        stage = 2;
    }
    cv.notify_all();
    worker.join();
    EXPECT_EQ(before, kTagA);
    EXPECT_EQ(after, 0.0);
}

// R8 (AITune: applied keeps an existing activation, deactivates when it activated, also on exception).
TEST_F(Runtime, R8_AppliedRestoresPriorState)
{
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    {
        auto applied = runtime.applied();
        EXPECT_TRUE(runtime.isActive());
        EXPECT_FALSE(at::GradMode::is_enabled());
    }
    EXPECT_FALSE(runtime.isActive());
    EXPECT_TRUE(at::GradMode::is_enabled());

    runtime.activate();
    {
        auto applied = runtime.applied();
    }
    EXPECT_TRUE(runtime.isActive());
    runtime.deactivate();

    try {
        auto applied = runtime.applied();
        throw std::runtime_error("block failed");
    } catch (const std::runtime_error&) {
    }
    EXPECT_FALSE(runtime.isActive());
}

// R8, R12: applied() blocks open at once on two threads: the one that activated the runtime closes first, and the
// other keeps its providers to its end (the runtime is deactivated when the last block closes, not under it).
TEST_F(Runtime, R8_R12_OverlappingAppliedBlocksOnTwoThreadsDeactivateWhenTheLastCloses)
{
    KernelProviderRuntime runtime(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    std::promise<void> firstOpen, firstClosed;
    std::thread first([&] {
        {
            const auto applied = runtime.applied(); // activates
            firstOpen.set_value();
            EXPECT_EQ(taggedGeluCallsInForward(), 2);
        }
        firstClosed.set_value();
    });
    firstOpen.get_future().wait();
    {
        const auto applied = runtime.applied(); // already active
        firstClosed.get_future().wait();
        EXPECT_TRUE(runtime.isActive()) << "deactivated under an open applied() block";
        EXPECT_EQ(taggedGeluCallsInForward(), 2);
    }
    first.join();
    EXPECT_FALSE(runtime.isActive());
}

// R9: is_active is true exactly while hooks are installed.
TEST_F(Runtime, R9_IsActiveTracksHooks)
{
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.0", "gelu", "TestTagGeluProvider")}));
    EXPECT_FALSE(runtime.isActive());
    runtime.activate();
    EXPECT_TRUE(runtime.isActive());
    EXPECT_EQ(taggedGeluCallsInForward(), 1);
    runtime.deactivate();
    EXPECT_FALSE(runtime.isActive());
    EXPECT_EQ(taggedGeluCallsInForward(), 0);
}

// Plan resolution: unknown scope, unknown function, provider of another function: all reported at once.
TEST_F(Runtime, PlanProblemsAreReportedTogether)
{
    try {
        KernelProviderRuntime runtime(
            *session, planOf({entry("nope", "gelu", "TestTagGeluProvider"), entry("", "gelu", "AtenLayerNormProvider"),
                              entry("", "gelu", "NoSuchProvider")}));
        FAIL();
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("no module 'nope'"), std::string::npos) << what;
        EXPECT_NE(what.find("replaces 'layer_norm'"), std::string::npos) << what;
        EXPECT_NE(what.find("NoSuchProvider"), std::string::npos) << what;
    }
}

// A plan's scope of 400 KB (a corrupted or generated file) is quoted clipped: its head and tail and how much was left
// out, not 400 KB of error; the runtime's refusal and plan validation alike.
TEST_F(Runtime, LongUserTextInPlanErrorsIsClipped)
{
    const std::string scope = "a" + std::string(400000, 'x') + "z";
    const std::string what = test::errorOf(
        [&] { KernelProviderRuntime runtime(*session, planOf({entry(scope, "gelu", "TestTagGeluProvider")})); });
    EXPECT_LT(what.size(), 2000u) << what.substr(0, 300);
    EXPECT_NE(what.find("...[399862 characters]..."), std::string::npos) << what.substr(0, 600);
    EXPECT_NE(what.find("no module 'axxx"), std::string::npos) << what.substr(0, 600);
}

// Reference and SDPA providers give the original's numbers on the built-in model.
TEST_F(Runtime, ReferenceAndSdpaProvidersMatchTheOriginal)
{
    const auto baseline = session->forward();
    for (const char* backend : {"MATH", "FLASH_ATTENTION"}) {
        PlanEntry sdpa = entry("", "scaled_dot_product_attention", "TorchSDPAKernelProvider");
        sdpa.provider["backend"] = backend;
        KernelProviderRuntime runtime(*session, planOf({sdpa, entry("", "linear", "AtenLinearProvider"),
                                                        entry("", "layer_norm", "AtenLayerNormProvider")}));
        auto applied = runtime.applied();
        const auto out = session->forward();
        EXPECT_NEAR(out[0].sum, baseline[0].sum, 1e-4) << backend;
        EXPECT_NEAR(out[0].maxAbs, baseline[0].maxAbs, 1e-5) << backend;
    }
}

// R16: a provider that breaks its contract is named with the function, provider and module, and the forward loses
// nothing (no patch left, the next forward is the baseline's): an exception that is not a std::exception, more
// outputs than the op returns, a value that is not a tensor, a result of another shape or dtype for an in-place
// call (copy_ would broadcast or convert it silently), a decline after taking the arguments off the stack.
TEST_F(Runtime, R16_ProvidersBreakingTheirContractAreNamed)
{
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x)"), dir.path("gelu.pt"));
    saveModule(twoLevelModel("torch.gelu_(x * 1.0)"), dir.path("gelu_inplace.pt"));
    struct Case {
        const char* file;
        const char* mode;
        const char* says;
    };
    for (const Case& c : {Case{"gelu.pt", "throw-int", "not a std::exception"},
                          Case{"gelu.pt", "two-outputs", "returned 2 value(s) where aten::gelu returns 1"},
                          Case{"gelu.pt", "not-a-tensor", "returned a Double where aten::gelu returns a tensor"},
                          Case{"gelu.pt", "decline-after-pop", "declined the call after taking its arguments"},
                          Case{"gelu_inplace.pt", "wrong-shape", "for an in-place call on Float[4, 8]"},
                          Case{"gelu_inplace.pt", "wrong-dtype", "returned Double[4, 8] for an in-place call"}}) {
        SCOPED_TRACE(std::string(c.file) + " " + c.mode);
        auto model = ModelSession::open(dir.path(c.file).string());
        model->setInputSpecs({"float32[4,8]"});
        const double baseline = model->forward()[0].sum;
        PlanEntry misbehaving = entry("act", "gelu", "TestMisbehavingGeluProvider");
        misbehaving.provider["mode"] = c.mode;
        KernelProviderRuntime runtime(*model, planOf({misbehaving}));
        {
            const auto applied = runtime.applied();
            const std::string error = errorOf([&] { model->forward(); });
            EXPECT_NE(error.find("function 'gelu', provider 'TestMisbehavingGeluProvider', module 'act'"),
                      std::string::npos)
                << error;
            EXPECT_NE(error.find(c.says), std::string::npos) << error;
        }
        EXPECT_TRUE(runtime.leftovers().empty());
        EXPECT_EQ(geluTagOnThisThread(), 0.0);
        EXPECT_EQ(model->forward()[0].sum, baseline);
    }
}

// R7, R12: deactivate() from another thread landing between a module's enter op taking its hook-table snapshot
// (with the runtime still bound) and its pre-hook: no scope of the runtime starts after deactivate() returned, so
// its provider serves nothing in that module and no leftover is reported.
TEST_F(Runtime, R7_R12_DeactivateBetweenTheHookSnapshotAndThePushStartsNoScope)
{
    KernelProviderRuntime runtime(*session, planOf({entry("blocks.1", "gelu", "TestTagGeluProvider")}));
    static KernelProviderRuntime* pending = nullptr;
    pending = &runtime;
    runtime::faults::gAfterHookSnapshot = [](const char* path) {
        if (std::string_view(path) == "blocks.1")
            if (KernelProviderRuntime* r = std::exchange(pending, nullptr))
                std::thread([r] { r->deactivate(); }).join();
    };
    runtime.activate();
    EXPECT_EQ(taggedGeluCallsInForward(), 0);
    runtime::faults::gAfterHookSnapshot = nullptr;
    EXPECT_EQ(pending, nullptr) << "the forward never entered blocks.1";
    EXPECT_FALSE(runtime.isActive());
    EXPECT_TRUE(runtime.leftoverReports().empty()) << runtime.leftoverReports().front().modulePath;
    EXPECT_TRUE(runtime.leftovers().empty());
    EXPECT_EQ(geluTagOnThisThread(), 0.0);
}
