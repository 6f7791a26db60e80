// SPDX-License-Identifier: Apache-2.0
// The function catalog (function_catalog.def) and R1 over every form a function takes: in place, traced
// convolutions, string padding, opaque ops; truthful attribution of declined calls (R13).
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/model_session.h>
#include <kforge/provider_catalog.h>
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>

#include "build_path.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace kforge;
using namespace kforge::test;

namespace {

// relu as clamp_min(x, 0.5): unlike the original, so a test sees who served a call and where its result went.
class ClampReluProvider final : public KernelProvider {
public:
    Function function() const override { return Function::Relu; }
    std::string typeName() const override { return "TestClampReluProvider"; }

protected:
    CallResult run(const c10::OperatorHandle&, torch::jit::Stack& stack) override
    {
        const at::Tensor x = torch::jit::pop(stack).toTensor();
        torch::jit::push(stack, at::clamp_min(x, 0.5));
        return CallResult::served();
    }
};

void registerClampRelu()
{
    static const bool once = [] {
        ProviderRegistry::instance().add(
            {"TestClampReluProvider", Function::Relu, {"cpu"}, "test: clamp_min(x, 0.5)", [] {
                 return std::make_unique<ClampReluProvider>();
             }});
        return true;
    }();
    (void)once;
}

// A root whose child "layer" runs `body` (TorchScript statements over x, ending in a return) with `params`.
std::unique_ptr<ModelSession> sessionWith(const TempDir& dir, const std::string& body,
                                          const std::map<std::string, at::Tensor>& params = {},
                                          const std::string& input = "float32[2,3,8,8]")
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module layer(c10::QualifiedName("__torch__.Layer"), cu, true);
    for (const auto& [name, value] : params)
        layer.register_parameter(name, value, false);
    layer.define("def forward(self, x: Tensor) -> Tensor:\n" + body);
    torch::jit::Module root(c10::QualifiedName("__torch__.Root"), cu, true);
    root.register_module("layer", layer);
    root.define("def forward(self, x: Tensor) -> Tensor:\n    return self.layer.forward(x)\n");
    root.eval();
    saveModule(root, dir.path("model.pt"));
    auto session = ModelSession::open(dir.path("model.pt").string());
    session->setInputSpecs({input});
    return session;
}

struct Observed {
    std::map<std::string, int> calls;    // "function by provider" (original calls: "function by original")
    std::map<std::string, int> declined; // "function: detail"
    std::vector<TensorDigest> outputs;
};

// One forward with `plan` in effect, its intercepted calls counted from the event stream.
Observed observe(ModelSession& session, const Plan& plan)
{
    Observed o;
    KernelProviderRuntime runtime(session, plan);
    auto stream = EventStream::attach();
    {
        auto applied = runtime.applied();
        o.outputs = session.forward();
    }
    std::vector<Event> events;
    stream->drain(events);
    for (const Event& e : events) {
        if (e.kind == EventKind::ProviderCall || e.kind == EventKind::OriginalCall)
            ++o.calls[e.function + " by " + e.provider];
        if (e.kind == EventKind::OriginalCall && !e.detail.empty())
            ++o.declined[e.function + ": " + e.detail];
    }
    return o;
}

void expectSameOutputs(const std::vector<TensorDigest>& a, const std::vector<TensorDigest>& b)
{
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].shape, b[i].shape);
        EXPECT_NEAR(a[i].sum, b[i].sum, 1e-4 * std::max(1.0, std::abs(a[i].sum)));
        EXPECT_NEAR(a[i].maxAbs, b[i].maxAbs, 1e-5 * std::max(1.0, a[i].maxAbs));
    }
}

Plan rootPlan(const std::vector<std::string>& functions)
{
    std::vector<PlanEntry> entries;
    for (const auto& f : functions)
        entries.push_back(entry("", f, referenceProviderType(*functionFromName(f))));
    return planOf(entries);
}

} // namespace

TEST(FunctionCatalog, CoversFortyFunctionsEachWithAReferenceProviderAndEveryFormIntercepted)
{
    ASSERT_GE(allFunctions().size(), 40u);
    std::set<std::string> names;
    const InterposerReport report = interposerReport();
    EXPECT_TRUE(report.selfTestPassed) << report.selfTestMessage;
    EXPECT_TRUE(report.missingOps.empty()) << report.missingOps.front();
    const std::set<std::string> intercepted(report.interceptedOps.begin(), report.interceptedOps.end());
    for (Function f : allFunctions()) {
        const FunctionInfo& info = functionInfo(f);
        EXPECT_TRUE(names.insert(std::string(info.name)).second) << "duplicate name " << info.name;
        EXPECT_EQ(functionFromName(info.name), f);
        for (std::string_view alias : info.aliases)
            EXPECT_EQ(functionFromName(alias), f) << alias;
        ASSERT_FALSE(info.forms.empty());
        EXPECT_EQ(qualifiedOpName(info.forms.front().op), qualifiedOpName(info.normalForm));
        for (const OpForm& form : info.forms)
            EXPECT_TRUE(intercepted.count(qualifiedOpName(form.op))) << qualifiedOpName(form.op);
        const ProviderTypeInfo* reference = ProviderRegistry::instance().find(referenceProviderType(f));
        ASSERT_NE(reference, nullptr) << "no reference provider for " << info.name;
        EXPECT_EQ(reference->function, f);
    }
    EXPECT_EQ(referenceProviderType(Function::ScaledDotProductAttention), "AtenScaledDotProductAttentionProvider");
    EXPECT_EQ(functionFromName("dropout2d"), Function::FeatureDropout);
    EXPECT_EQ(functionOfOp("aten::relu_", ""), Function::Relu);
    EXPECT_EQ(functionOfOp("aten::_convolution", "", {5, true}), Function::ConvTranspose3d);
    EXPECT_EQ(functionOfOp("aten::_convolution", ""), std::nullopt); // a shared form needs the call's facts
    EXPECT_EQ(functionOfOp("aten::lstm", "input"), std::nullopt);    // opaque
}

TEST(FunctionCatalog, R1_InPlaceCallsAreSeenServedAndTheResultLandsInTheInput)
{
    registerClampRelu();
    TempDir dir;
    // y is returned after relu_ ran on it: the in-place result must be in y itself.
    auto session = sessionWith(dir, "    y = x - 0.25\n    torch.relu_(y)\n    z = torch.hardswish_(y * 1.0)\n"
                                    "    return y + 0.0 * z\n");
    const Observed original = observe(*session, Plan{});
    EXPECT_EQ(original.calls.at("relu by original"), 1);
    EXPECT_EQ(original.calls.at("hardswish by original"), 1);

    const Observed reference = observe(*session, rootPlan({"relu", "hardswish"}));
    EXPECT_EQ(reference.calls.at("relu by AtenReluProvider"), 1);
    EXPECT_EQ(reference.calls.at("hardswish by AtenHardswishProvider"), 1);
    EXPECT_FALSE(reference.calls.count("relu by original"));
    expectSameOutputs(reference.outputs, original.outputs);

    const Observed clamped = observe(*session, planOf({entry("layer", "relu", "TestClampReluProvider")}));
    EXPECT_EQ(clamped.calls.at("relu by TestClampReluProvider"), 1);
    // Every element of y is now >= 0.5: the provider's result landed in y.
    ASSERT_EQ(clamped.outputs.size(), 1u);
    const double elements = 2 * 3 * 8 * 8;
    EXPECT_GE(clamped.outputs[0].sum, 0.5 * elements - 1e-3);
    EXPECT_GT(clamped.outputs[0].sum, original.outputs[0].sum);
}

TEST(FunctionCatalog, R1_TracedConvolutionsAreTheConvFunctionTheirWeightRankAndTransposedFlagSay)
{
    TempDir dir;
    // What torch.jit.trace records for nn.Conv2d and nn.ConvTranspose2d.
    auto session = sessionWith(
        dir,
        "    y = torch._convolution(x, self.w, self.b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, False, False, True, "
        "True)\n"
        "    return torch._convolution(y, self.wt, None, [2, 2], [0, 0], [1, 1], True, [1, 1], 1, False, False, True, "
        "True)\n",
        {{"w", at::randn({4, 3, 3, 3})}, {"b", at::randn({4})}, {"wt", at::randn({4, 2, 3, 3})}});
    const ModuleInfo* layer = session->findModule("layer");
    ASSERT_NE(layer, nullptr);
    EXPECT_EQ(layer->functions.count("conv2d") ? layer->functions.at("conv2d") : 0, 1); // static inventory
    EXPECT_EQ(layer->functions.count("conv_transpose2d") ? layer->functions.at("conv_transpose2d") : 0, 1);

    const Observed original = observe(*session, Plan{});
    EXPECT_EQ(original.calls.at("conv2d by original"), 1);
    EXPECT_EQ(original.calls.at("conv_transpose2d by original"), 1);
    const Observed reference = observe(*session, rootPlan({"conv2d", "conv_transpose2d"}));
    EXPECT_EQ(reference.calls.at("conv2d by AtenConv2dProvider"), 1);
    EXPECT_EQ(reference.calls.at("conv_transpose2d by AtenConvTranspose2dProvider"), 1);
    EXPECT_TRUE(reference.declined.empty());
    expectSameOutputs(reference.outputs, original.outputs);
}

TEST(FunctionCatalog, R1_StringPaddingIsServedInNormalFormOrDeclinedWithTheReason)
{
    TempDir dir;
    // padding="same": symmetric with a 3x3 kernel (normal form exists), asymmetric with a 2x2 one (none).
    auto session = sessionWith(dir,
                               "    y = torch.conv2d(x, self.w3, None, [1, 1], \"same\", [1, 1], 1)\n"
                               "    return torch.conv2d(y, self.w2, None, [1, 1], \"same\", [1, 1], 1)\n",
                               {{"w3", at::randn({3, 3, 3, 3})}, {"w2", at::randn({3, 3, 2, 2})}});
    const Observed original = observe(*session, Plan{});
    EXPECT_EQ(original.calls.at("conv2d by original"), 2);
    const Observed reference = observe(*session, rootPlan({"conv2d"}));
    EXPECT_EQ(reference.calls.at("conv2d by AtenConv2dProvider"), 1);
    EXPECT_EQ(reference.calls.at("conv2d by original"), 1);
    ASSERT_EQ(reference.declined.size(), 1u);
    EXPECT_NE(reference.declined.begin()->first.find("declined by AtenConv2dProvider"), std::string::npos);
    EXPECT_NE(reference.declined.begin()->first.find("asymmetric"), std::string::npos);
    expectSameOutputs(reference.outputs, original.outputs);
}

TEST(FunctionCatalog, R13_ADeclinedCallIsTheOriginalsWithTheReasonAndCountedPerEntry)
{
    TempDir dir;
    // float64: CpuGeluProvider's kernels take float32 and bfloat16 only.
    auto session = sessionWith(dir, "    return torch.gelu(torch.gelu(x))\n", {}, "float64[4,16]");
    const Plan plan = planOf({entry("layer", "gelu", "CpuGeluProvider")});
    KernelProviderRuntime runtime(*session, plan);
    auto stream = EventStream::attach();
    {
        auto applied = runtime.applied();
        session->forward();
    }
    std::vector<Event> events;
    stream->drain(events);
    int provider = 0, declined = 0;
    for (const Event& e : events) {
        provider += e.kind == EventKind::ProviderCall;
        if (e.kind == EventKind::OriginalCall && e.function == "gelu") {
            ++declined;
            EXPECT_EQ(e.provider, "original");
            EXPECT_EQ(e.modulePath, "layer");
            EXPECT_NE(e.detail.find("declined by CpuGeluProvider"), std::string::npos) << e.detail;
            EXPECT_NE(e.detail.find("dtype"), std::string::npos) << e.detail;
        }
    }
    EXPECT_EQ(provider, 0);
    EXPECT_EQ(declined, 2);
    const auto declines = runtime.declines();
    ASSERT_EQ(declines.size(), 1u);
    EXPECT_EQ(declines[0].entry, 0);
    EXPECT_EQ(declines[0].calls, 2u);
    EXPECT_NE(declines[0].lastReason.find("dtype"), std::string::npos);
}

TEST(FunctionCatalog, R1_CallsInsideOpaqueOpsAreNotFunctionCalls)
{
    TempDir dir;
    // lstm_cell runs sigmoid and tanh on its gates inside ATen: not torch.nn.functional calls.
    auto session = sessionWith(dir,
                               "    h = torch.zeros([4, 5])\n"
                               "    c = torch.zeros([4, 5])\n"
                               "    hy, cy = torch.lstm_cell(x, [h, c], self.wi, self.wh, None, None)\n"
                               "    return torch.sigmoid(hy) + cy\n",
                               {{"wi", at::randn({20, 16})}, {"wh", at::randn({20, 5})}}, "float32[4,16]");
    const Observed original = observe(*session, Plan{});
    EXPECT_EQ(original.calls.at("sigmoid by original"), 1); // the one in the model's own code
    EXPECT_FALSE(original.calls.count("tanh by original"));
    EXPECT_FALSE(original.calls.count("linear by original"));
}

// R1: the ops scripts/survey_opaque_ops.py found calling catalog ops inside their ATen implementation are opaque too:
// triplet_margin_loss computes two pairwise distances inside. A pairwise_distance entry serves the model's own call
// only, and that one call is what the static inventory and the run count (so the validator and the run agree).
TEST(FunctionCatalog, R1_TripletMarginLossKeepsItsDistancesInside)
{
    TempDir dir;
    auto session = sessionWith(dir,
                               "    loss = torch.triplet_margin_loss(x, x * 2.0, x * 3.0)\n"
                               "    return loss + torch.pairwise_distance(x, x + 1.0).sum()\n",
                               {}, "float32[4,8]");
    EXPECT_EQ(session->modules().front().subtreeFunctions.at("pairwise_distance"), 1);
    const Observed original = observe(*session, Plan{});
    EXPECT_EQ(original.calls.at("pairwise_distance by original"), 1);
    const Observed served = observe(*session, planOf({entry("", "pairwise_distance", "AtenPairwiseDistanceProvider")}));
    EXPECT_EQ(served.calls.at("pairwise_distance by AtenPairwiseDistanceProvider"), 1);
    EXPECT_FALSE(served.calls.count("pairwise_distance by original"));
}

// R1: a dynamically quantized LSTM and GRU (make_quantized_rnn.py, as quantize_dynamic users script them) run their
// gates' sigmoid and tanh inside aten::quantized_lstm / quantized_gru: the forward's one sigmoid is the model's own
// (run counted 40 sigmoid and 25 tanh calls, and reference providers claimed to serve them).
TEST(FunctionCatalog, R1_QuantizedRnnGatesAreInsideTheirOps)
{
    auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/quantized_rnn.script.pt");
    session->setInputSpecs({"float32[5,2,8]"});
    const Observed original = observe(*session, Plan{});
    EXPECT_EQ(original.calls, (std::map<std::string, int>{{"sigmoid by original", 1}}));
    const Observed served = observe(*session, planOf({entry("", "tanh", "AtenTanhProvider")}));
    EXPECT_FALSE(served.calls.count("tanh by AtenTanhProvider"));
}
