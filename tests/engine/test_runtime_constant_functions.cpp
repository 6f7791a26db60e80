// SPDX-License-Identifier: Apache-2.0
// R1, R7 for catalog calls on constants made through TorchScript functions (docs/design/runtime-semantics.md): a
// scripted model whose `act` calls F.relu and F.layer_norm of torch.linspace, a @torch.jit.script helper calling F.gelu
// of a constant, F.silu of a helper's constant result and F.softmax in a helper given a constant; the root calls the
// same relu outside `act` (tests/data/models/make_scripted_constant_calls.py, which also writes the input and the
// output Python computes from it). LibTorch's optimized executor inlines the functions; each call must stay a call.
#include <kforge/model_session.h>
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>

#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

using namespace kforge;
using namespace kforge::test;

namespace {

const std::string kScriptedConstantCalls = std::string(KFORGE_TEST_DATA) + "/models/scripted_constant_calls";

// The functions `act` calls on constants, each with a tag of its own: a provider adds it to every element of the
// result, so the output's sum says which were served (each result, of 8 elements, is a term of the output).
struct TaggedFunction {
    Function function;
    const char* name;
    double tag;
};
constexpr std::array<TaggedFunction, 5> kTaggedFunctions{{{Function::Relu, "relu", 1.0},
                                                          {Function::LayerNorm, "layer_norm", 2.0},
                                                          {Function::Gelu, "gelu", 4.0},
                                                          {Function::Silu, "silu", 8.0},
                                                          {Function::Softmax, "softmax", 16.0}}};
constexpr double kElementsPerCall = 8.0;

std::map<std::string, std::atomic<long>>& servedCalls()
{
    static std::map<std::string, std::atomic<long>> calls = [] {
        std::map<std::string, std::atomic<long>> counters;
        for (const TaggedFunction& tagged : kTaggedFunctions)
            counters[tagged.name] = 0;
        return counters;
    }();
    return calls;
}

std::string tagProviderType(const TaggedFunction& tagged) { return std::string("TestConstantCallTag_") + tagged.name; }

// Runs the original and adds its function's tag to the result: the output says the provider served the call.
class ConstantCallTagProvider final : public KernelProvider {
public:
    explicit ConstantCallTagProvider(const TaggedFunction& tagged) : m_tagged(tagged) {}
    Function function() const override { return m_tagged.function; }
    std::string typeName() const override { return tagProviderType(m_tagged); }

protected:
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        op.callBoxed(stack);
        stack.back() = stack.back().toTensor() + m_tagged.tag;
        ++servedCalls().at(m_tagged.name);
        return CallResult::served();
    }

private:
    TaggedFunction m_tagged;
};

void registerConstantCallTagProviders()
{
    static std::once_flag once;
    std::call_once(once, [] {
        for (const TaggedFunction& tagged : kTaggedFunctions)
            ProviderRegistry::instance().add({tagProviderType(tagged), tagged.function, {"cpu"}, "test", [tagged] {
                                                  return std::make_unique<ConstantCallTagProvider>(tagged);
                                              }});
    });
}

// One entry per tagged function in `scope`.
Plan taggingPlan(const std::string& scope)
{
    std::vector<PlanEntry> entries;
    for (const TaggedFunction& tagged : kTaggedFunctions)
        entries.push_back(entry(scope, tagged.name, tagProviderType(tagged)));
    return planOf(std::move(entries));
}

std::map<std::string, long> servedSoFar()
{
    std::map<std::string, long> counts;
    for (const auto& [name, calls] : servedCalls())
        counts[name] = calls.load();
    return counts;
}

std::map<std::string, long> servedSince(const std::map<std::string, long>& before)
{
    std::map<std::string, long> counts = servedSoFar();
    for (auto& [name, calls] : counts)
        calls -= before.at(name);
    return counts;
}

// What Python computed: the output of the model without a plan, on the input beside it.
struct PythonOutput {
    double sum = 0.0;
    double maxAbs = 0.0;
};

PythonOutput pythonOutput()
{
    std::ifstream in(kScriptedConstantCalls + ".expected.json");
    const nlohmann::json expected = nlohmann::json::parse(in);
    PythonOutput output;
    output.sum = expected.at("output_sum").get<double>();
    for (const auto& element : expected.at("output"))
        output.maxAbs = std::max(output.maxAbs, std::abs(element.get<double>()));
    return output;
}

std::unique_ptr<ModelSession> openScriptedConstantCalls(GraphExecutor executor)
{
    auto model = ModelSession::open(kScriptedConstantCalls + ".script.pt", {false, executor});
    model->loadInputsFile(kScriptedConstantCalls + ".input.pt");
    return model;
}

class ConstantFunctionCalls : public ::testing::Test {
protected:
    void SetUp() override { registerConstantCallTagProviders(); }
    const PythonOutput python = pythonOutput();
};

constexpr int kForwards = 4; // the profiling executor optimises after its first forwards
const std::map<std::string, long> kOncePerForward{
    {"relu", kForwards}, {"layer_norm", kForwards}, {"gelu", kForwards}, {"silu", kForwards}, {"softmax", kForwards}};
const std::map<std::string, long> kNoneServed{{"relu", 0}, {"layer_norm", 0}, {"gelu", 0}, {"silu", 0}, {"softmax", 0}};
constexpr double kEveryTagOnce = kElementsPerCall * (1.0 + 2.0 + 4.0 + 8.0 + 16.0);

} // namespace

// R1: every call `act` makes on constants through a TorchScript function is served in `act` on every forward, under
// the optimized executor as under the direct one: the same calls, the same output. The optimized executor inlines the
// functions and would otherwise compute each call once while optimising, outside every scope (no call served, the
// plan-less output). The root's relu of the same constant stays outside the scope; a root entry serves both relus.
TEST_F(ConstantFunctionCalls, R1_CallsOnConstantsThroughScriptedFunctionsAreServedUnderTheOptimizedExecutor)
{
    std::map<GraphExecutor, std::map<std::string, long>> served;
    for (const GraphExecutor executor : {GraphExecutor::Direct, GraphExecutor::Optimized}) {
        SCOPED_TRACE(std::string(graphExecutorName(executor)));
        auto model = openScriptedConstantCalls(executor);
        for (int i = 0; i < 2; ++i)
            EXPECT_NEAR(model->forward()[0].sum, python.sum, 1e-4) << "no plan, forward " << i;
        {
            KernelProviderRuntime runtime(*model, taggingPlan("act"));
            const auto applied = runtime.applied();
            const auto before = servedSoFar();
            for (int i = 0; i < kForwards; ++i)
                EXPECT_NEAR(model->forward()[0].sum, python.sum + kEveryTagOnce, 1e-3) << "forward " << i;
            served[executor] = servedSince(before);
            EXPECT_EQ(served[executor], kOncePerForward);
        }
        {
            KernelProviderRuntime runtime(*model, planOf({entry("", "relu", "TestConstantCallTag_relu")}));
            const auto applied = runtime.applied();
            const auto before = servedSoFar();
            for (int i = 0; i < kForwards; ++i)
                EXPECT_NEAR(model->forward()[0].sum, python.sum + 2 * kElementsPerCall * 1.0, 1e-3)
                    << "root relu entry, forward " << i;
            EXPECT_EQ(servedSince(before).at("relu"), 2 * kForwards) << "act's relu and the root's";
        }
    }
    EXPECT_EQ(served[GraphExecutor::Optimized], served[GraphExecutor::Direct]);
}

// R7: activated before the model's first forward, then deactivated, the optimized executor returns the output Python
// computes: no provider's result was computed while optimising and kept in the graph past deactivate(). With entries
// at the root, whose hooks are in effect while the root's forward optimises, a folded call would be the provider's
// result for good; with entries in `act`, the original's. A model opened afresh, without a plan, agrees.
TEST_F(ConstantFunctionCalls, R7_DeactivationRestoresThePlanLessOutputUnderTheOptimizedExecutor)
{
    for (const GraphExecutor executor : {GraphExecutor::Optimized, GraphExecutor::Direct}) {
        for (const std::string scope : {"", "act"}) {
            SCOPED_TRACE(std::string(graphExecutorName(executor)) + ", scope '" + scope + "'");
            const bool rootScope = scope.empty(); // the root's relu is then served too
            std::map<std::string, long> onceEach = kOncePerForward;
            onceEach["relu"] *= rootScope ? 2 : 1;
            const double tagged = python.sum + kEveryTagOnce + (rootScope ? kElementsPerCall * 1.0 : 0.0);
            auto model = openScriptedConstantCalls(executor);
            KernelProviderRuntime runtime(*model, taggingPlan(scope));
            runtime.activate();
            const auto before = servedSoFar();
            for (int i = 0; i < kForwards; ++i)
                EXPECT_NEAR(model->forward()[0].sum, tagged, 1e-3) << "forward " << i;
            EXPECT_EQ(servedSince(before), onceEach);
            runtime.deactivate();
            const auto afterDeactivation = servedSoFar();
            for (int i = 0; i < kForwards; ++i) {
                const TensorDigest output = model->forward()[0];
                EXPECT_NEAR(output.sum, python.sum, 1e-4) << "deactivated, forward " << i;
                EXPECT_NEAR(output.maxAbs, python.maxAbs, 1e-5) << "deactivated, forward " << i;
            }
            EXPECT_EQ(servedSince(afterDeactivation), kNoneServed);
            EXPECT_NEAR(openScriptedConstantCalls(executor)->forward()[0].sum, python.sum, 1e-4) << "opened afresh";
        }
    }
}
