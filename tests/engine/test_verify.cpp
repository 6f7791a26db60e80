// SPDX-License-Identifier: Apache-2.0
// kforge verify (kforge/verify.h): the plan's outputs against the baseline's, the verdict, and the first module whose
// output diverges while its inputs agree, with seeded faults whose place is known by construction (seeded_faults.h).
// The real-model corpus runs the same faults through the CLI (tests/corpus/test_verify_faults.py).
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/verify.h>

#include "build_path.h"
#include "runtime/hook_ops.h"
#include "runtime/hook_table.h"
#include "seeded_faults.h"
#include "test_helpers.h"

#include <map>

#include <gtest/gtest.h>

#include <string>

using namespace kforge;
using namespace kforge::test;

namespace {

const std::string kModels = std::string(KFORGE_TEST_DATA) + "/models/";

PlanEntry seeded(const std::string& scope, SeededFault fault, Function function, nlohmann::json settings = {})
{
    PlanEntry e = entry(scope, std::string(functionName(function)), seededTypeName(fault, function));
    for (const auto& [key, value] : settings.items())
        e.provider[key] = value;
    return e;
}

VerifyReport verifyOne(const std::string& model, PlanEntry e, VerifyOptions options = {})
{
    registerSeededFaults();
    auto session = ModelSession::open(model);
    if (model.find(".pt2") != std::string::npos)
        session->setInputSpecs({"float32[2,16]"});
    return verifyPlan(*session, planOf({std::move(e)}), options);
}

// A saved model whose child `act` is a gelu and whose root returns `rootBody`, with float32[2,3] inputs.
std::unique_ptr<ModelSession> rootOverGelu(const TempDir& dir, const std::string& name, const std::string& rootBody)
{
    saveModule(twoLevelModel("torch.gelu(x)", rootBody), dir.path(name));
    auto session = ModelSession::open(dir.path(name).string());
    session->setInputSpecs({"float32[2,3]"});
    return session;
}

} // namespace

// Every output a model returns is judged, not its tensors only: an int a plan changes fails (the tensor beside it
// agrees), a model returning only an int passes an exact plan, and a complex tensor's imaginary part counts.
TEST(Verify, NonTensorAndComplexOutputsAreJudged)
{
    registerTestProviders(); // TestTagGeluProvider: gelu(x) + 1000
    TempDir dir;
    const Plan tagged = planOf({entry("", "gelu", "TestTagGeluProvider")});
    const Plan exact = planOf({entry("", "gelu", "AtenGeluProvider")});

    auto counting = rootOverGelu(dir, "count.pt", "(x * 2.0, int((self.act.forward(x) > 500.0).sum()))");
    VerifyReport r = verifyPlan(*counting, tagged);
    EXPECT_FALSE(r.passed);
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_TRUE(r.outputs[0].passed) << r.outputs[0].problem;
    EXPECT_EQ(r.outputs[1].path, "1");
    EXPECT_EQ(r.outputs[1].dtype, "int");
    EXPECT_FALSE(r.outputs[1].passed);
    EXPECT_EQ(r.outputs[1].problem, "6 where the baseline's is 0");
    EXPECT_TRUE(verifyPlan(*counting, exact).passed);

    auto onlyAnInt = rootOverGelu(dir, "int.pt", "int((self.act.forward(x) > 0.0).sum())");
    r = verifyPlan(*onlyAnInt, exact);
    EXPECT_TRUE(r.passed);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].dtype, "int");
    EXPECT_FALSE(verifyPlan(*onlyAnInt, tagged).passed) << "every gelu output now exceeds 0";

    auto complex =
        rootOverGelu(dir, "complex.pt", "torch.complex(x, self.act.forward(x))"); // gelu in the imaginary part
    r = verifyPlan(*complex, tagged);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].dtype, "complex64");
    EXPECT_FALSE(r.passed);
    EXPECT_GT(r.outputs[0].maxAbsError, 900.0);
    EXPECT_TRUE(verifyPlan(*complex, exact).passed);
}

// Every forward of verify starts from the same random generator state: a model adding noise, or with dropout left
// on, computes the same thing each time, so the plan is judged on the same draws, as a deterministic model is, and
// the diverging module is found.
TEST(Verify, RandomDrawsAreReplayedSoANoisyModelIsJudgedAsADeterministicOne)
{
    registerSeededFaults();
    TempDir dir;
    const Plan exact = planOf({seeded("act", SeededFault::Exact, Function::Gelu)});
    const Plan zero = planOf({seeded("act", SeededFault::Zero, Function::Gelu)});
    for (const std::string body : {"self.act.forward(x) + 0.001 * torch.randn_like(x)",
                                   "torch.dropout(self.act.forward(x), 0.5, True) + torch.rand_like(x)"}) {
        auto noisy = rootOverGelu(dir, "noisy.pt", body);
        VerifyReport r = verifyPlan(*noisy, exact);
        EXPECT_TRUE(r.passed) << body;
        EXPECT_FALSE(r.inconclusive);
        EXPECT_TRUE(r.nondeterminism.empty()) << r.nondeterminism;
        EXPECT_EQ(r.randomness.rfind("replayed", 0), 0u) << r.randomness;
        ASSERT_EQ(r.outputs.size(), 1u);
        EXPECT_EQ(r.outputs[0].maxAbsError, 0.0);
        r = verifyPlan(*noisy, zero);
        EXPECT_FALSE(r.passed) << body;
        ASSERT_TRUE(r.divergence) << body << ": " << r.localisationNote;
        EXPECT_EQ(r.divergence->module, "act");
    }
}

namespace {

VerifyReport verifyFresh(ModelSession& session, const Plan& plan)
{
    VerifyOptions options;
    options.replayRandomness = false;
    return verifyPlan(session, plan, options);
}

std::string problemsOf(const VerifyReport& r)
{
    std::string out = r.nondeterminism;
    for (const auto& o : r.outputs)
        out += " | " + o.path + ": " + o.problem;
    return out;
}

} // namespace

// Random draws that are not replayed (--fresh-random, a provider that draws itself, nondeterministic kernels): each
// output that moves is judged element by element against its own spread over several forwards. A zeroing provider
// fails, as does a constant bias of 5 standard deviations of the noise (inside the noise's maximum, but one-sided);
// the elements the forwards agree on (rows without noise) are judged exactly; an exact provider passes.
TEST(Verify, MovingOutputsAreJudgedElementByElementAgainstTheirOwnSpread)
{
    registerSeededFaults();
    TempDir dir;
    const Plan exact = planOf({seeded("act", SeededFault::Exact, Function::Gelu)});
    const Plan zero = planOf({seeded("act", SeededFault::Zero, Function::Gelu)});
    const Plan bias = planOf({seeded("act", SeededFault::Bias, Function::Gelu, {{"bias", 0.05}})});
    const auto model = [&](const std::string& name, const std::string& body, const std::string& input) {
        auto session = rootOverGelu(dir, name, body);
        session->setInputSpecs({input});
        return session;
    };

    auto noisy = model("noisy.pt", "self.act.forward(x) + 0.01 * torch.randn_like(x)", "float32[256,256]");
    VerifyReport r = verifyFresh(*noisy, exact);
    EXPECT_TRUE(r.passed) << problemsOf(r);
    EXPECT_EQ(r.baselineForwards, 8);
    EXPECT_GT(r.outputs[0].movingElements, 60000);
    EXPECT_FALSE(r.nondeterminism.empty());
    EXPECT_EQ(r.randomness.rfind("fresh", 0), 0u) << r.randomness;
    r = verifyFresh(*noisy, bias);
    EXPECT_FALSE(r.passed) << "a bias of 5 standard deviations of the noise, always the same sign";
    EXPECT_TRUE(r.outputs[0].judged);
    EXPECT_FALSE(r.inconclusive);
    EXPECT_FALSE(verifyFresh(*noisy, zero).passed);

    // Per-sample noise as in a diffusion step whose first samples have t = 0: the noise of row 3 buys rows 0-2
    // nothing.
    auto perSample = model(
        "per_sample.pt", "self.act.forward(x) + torch.tensor([0.0, 0.0, 0.0, 1.0]).unsqueeze(1) * torch.randn_like(x)",
        "float32[4,64]");
    r = verifyFresh(*perSample, exact);
    EXPECT_TRUE(r.passed) << problemsOf(r);
    EXPECT_EQ(r.outputs[0].movingElements, 64);
    r = verifyFresh(*perSample, zero);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.outputs[0].problem.find("forwards without the plan agree on"), std::string::npos) << problemsOf(r);

    // Ten logits with noise of 1e-3: small outputs are judged the same way.
    auto logits = model("logits.pt", "self.act.forward(x) + 0.001 * torch.randn_like(x)", "float32[1,10]");
    r = verifyFresh(*logits, exact);
    EXPECT_TRUE(r.passed) << problemsOf(r);
    r = verifyFresh(*logits, zero);
    EXPECT_FALSE(r.passed) << problemsOf(r);
    EXPECT_TRUE(r.outputs[0].judged);
}

// An output that moves and cannot be judged against its spread (a count that changes from forward to forward) makes
// the verdict inconclusive, never "keeps the model's outputs".
TEST(Verify, AnOutputThatCannotBeJudgedMakesTheVerdictInconclusive)
{
    registerSeededFaults();
    TempDir dir;
    auto counting = rootOverGelu(dir, "count.pt", "int((self.act.forward(x) + torch.randn_like(x)).gt(0.0).sum())");
    counting->setInputSpecs({"float32[64,64]"});
    const VerifyReport r = verifyFresh(*counting, planOf({seeded("act", SeededFault::Exact, Function::Gelu)}));
    EXPECT_FALSE(r.passed);
    EXPECT_TRUE(r.inconclusive);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_FALSE(r.outputs[0].judged);
    EXPECT_NE(r.outputs[0].problem.find("not judged"), std::string::npos) << r.outputs[0].problem;
}

// A model that changes its input in place (preprocessing wrappers normalise it) gets the same inputs in every
// forward: an exact plan passes as on any deterministic model, a zeroing one fails, and forwards agree.
TEST(Verify, EveryForwardGetsFreshInputs)
{
    registerSeededFaults();
    TempDir dir;
    for (const std::string body : {"self.act.forward(x.sub_(0.5).div_(0.25))", "self.act.forward(x.mul_(3.0))"}) {
        auto inPlace = rootOverGelu(dir, "in_place.pt", body);
        const auto first = inPlace->forward(), second = inPlace->forward();
        ASSERT_EQ(first.size(), 1u);
        EXPECT_EQ(first[0].sum, second[0].sum) << body;
        VerifyReport r = verifyPlan(*inPlace, planOf({seeded("act", SeededFault::Exact, Function::Gelu)}));
        EXPECT_TRUE(r.passed) << body << ": " << problemsOf(r);
        EXPECT_TRUE(r.nondeterminism.empty()) << r.nondeterminism;
        r = verifyPlan(*inPlace, planOf({seeded("act", SeededFault::Zero, Function::Gelu)}));
        EXPECT_FALSE(r.passed) << body;
        ASSERT_TRUE(r.divergence) << r.localisationNote;
        EXPECT_EQ(r.divergence->module, "act");
        EXPECT_EQ(inPlace->forward()[0].sum, first[0].sum) << "verify leaves the inputs as they were set";
    }
}

namespace {

// A root whose forward counts its calls in a buffer and an int attribute and scales act's output by them.
std::unique_ptr<ModelSession> counterModel(const TempDir& dir, const std::string& name)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module child(c10::QualifiedName("__torch__.Act"), cu, true);
    child.define("def forward(self, x: Tensor) -> Tensor:\n    return torch.gelu(x)\n");
    torch::jit::Module root(c10::QualifiedName("__torch__.Counter"), cu, true);
    root.register_module("act", child);
    root.register_buffer("count", torch::zeros({1}));
    root.register_attribute("steps", c10::IntType::get(), int64_t(0));
    root.define("def forward(self, x: Tensor):\n"
                "    self.count.add_(1.0)\n"
                "    self.steps = self.steps + 1\n"
                "    return self.act.forward(x) * self.count + float(self.steps) + torch.rand(1)\n");
    root.eval();
    saveModule(root, dir.path(name));
    auto session = ModelSession::open(dir.path(name).string());
    session->setInputSpecs({"float32[2,3]"});
    return session;
}

} // namespace

// Verify's forwards change a counter buffer, an int attribute and the random generator: each starts from the state
// before the first (so the counter does not move the outputs), and after the verdict all of it is put back: the
// next forward computes what it would have computed without verify.
TEST(Verify, VerifyingLeavesTheModelsStateAsItWas)
{
    registerSeededFaults();
    TempDir dir;
    auto control = counterModel(dir, "control.pt");
    auto verified = counterModel(dir, "verified.pt");
    torch::manual_seed(7);
    const double controlFirst = control->forward()[0].sum;
    const double controlSecond = control->forward()[0].sum;
    torch::manual_seed(7);
    EXPECT_EQ(verified->forward()[0].sum, controlFirst);
    const VerifyReport r = verifyPlan(*verified, planOf({seeded("act", SeededFault::Exact, Function::Gelu)}));
    EXPECT_TRUE(r.passed) << problemsOf(r);
    EXPECT_TRUE(r.nondeterminism.empty()) << r.nondeterminism;
    std::string restored;
    for (const auto& name : r.restoredState)
        restored += name + " ";
    EXPECT_NE(restored.find("count"), std::string::npos) << restored;
    EXPECT_NE(restored.find("steps"), std::string::npos) << restored;
    EXPECT_EQ(verified->forward()[0].sum, controlSecond) << "the buffer, the attribute and the draws were put back";
}

TEST(Verify, AnExactProviderPassesWithIdenticalOutputs)
{
    const VerifyReport r = verifyOne("builtin:tiny-gpt", seeded("", SeededFault::Exact, Function::Gelu));
    EXPECT_TRUE(r.passed);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].maxAbsError, 0.0);
    EXPECT_NEAR(r.outputs[0].cosine, 1.0, 1e-12);
    ASSERT_TRUE(r.outputs[0].top1Agreement); // [1, 16, 256] logits: per-token top-k
    EXPECT_DOUBLE_EQ(*r.outputs[0].top1Agreement, 1.0);
    EXPECT_DOUBLE_EQ(*r.outputs[0].top5Agreement, 1.0);
    EXPECT_FALSE(r.divergence);
    EXPECT_EQ(r.passes, 0); // nothing to locate
}

TEST(Verify, NoiseInOneMlpFailsAndNamesThatMlpNotTheLinearAfterIt)
{
    // gelu runs in MLP.forward between fc and proj: proj's output diverges first, but its input already did.
    const VerifyReport r = verifyOne("builtin:tiny-gpt", seeded("blocks.1", SeededFault::Noise, Function::Gelu));
    EXPECT_FALSE(r.passed);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_FALSE(r.outputs[0].passed);
    EXPECT_GT(r.outputs[0].outsideTolerance, 0);
    ASSERT_TRUE(r.divergence) << r.localisationNote;
    EXPECT_EQ(r.divergence->module, "blocks.1.mlp");
    EXPECT_EQ(r.divergence->call, 0);
    EXPECT_EQ(r.divergence->entries, std::vector<int>{0});
    ASSERT_FALSE(r.divergence->calls.empty());
    bool servedBySeeded = false;
    for (const auto& c : r.divergence->calls)
        servedBySeeded |= c.function == "gelu" && c.provider.find("SeededNoise_gelu") == 0 && c.calls == 1;
    EXPECT_TRUE(servedBySeeded);
}

TEST(Verify, AZeroedAttentionHeadIsLocatedToItsAttentionModule)
{
    const VerifyReport r = verifyOne("builtin:tiny-gpt", seeded("blocks.0", SeededFault::ZeroHead,
                                                                Function::ScaledDotProductAttention, {{"head", 1}}));
    EXPECT_FALSE(r.passed);
    ASSERT_TRUE(r.divergence) << r.localisationNote;
    EXPECT_EQ(r.divergence->module, "blocks.0.attn");
}

TEST(Verify, NaNForOneShapeFailsOnNewNonFiniteValues)
{
    // The root's softmax runs on [1, 16, 256] logits, the attention's on none: NaN only there.
    const VerifyReport r = verifyOne("builtin:tiny-gpt",
                                     seeded("", SeededFault::NanOnShape, Function::Softmax, {{"shape", {1, 16, 256}}}));
    EXPECT_FALSE(r.passed);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_GT(r.outputs[0].newNonFinite, 0);
    EXPECT_NE(r.outputs[0].problem.find("NaN/Inf"), std::string::npos) << r.outputs[0].problem;
    ASSERT_TRUE(r.divergence) << r.localisationNote;
    EXPECT_EQ(r.divergence->module, ""); // the root's own softmax
    // And allowed, it fails on cosine and tolerance only: the NaN rows drop out of the cosine.
    VerifyOptions allow;
    allow.thresholds.allowNewNonFinite = true;
    allow.locate = false;
    const VerifyReport allowed = verifyOne(
        "builtin:tiny-gpt", seeded("", SeededFault::NanOnShape, Function::Softmax, {{"shape", {1, 16, 256}}}), allow);
    EXPECT_EQ(allowed.outputs[0].problem.find("NaN/Inf"), std::string::npos) << allowed.outputs[0].problem;
    EXPECT_FALSE(allowed.divergence);
}

// Item 2 of the plan-trust issue (the module tree's Error column): every module compared, per module, past the first
// divergence. Noise in blocks.1's gelu: blocks.0 and blocks.1.attn agree; blocks.1.mlp is where agreeing inputs
// turn into diverging outputs; blocks.1 and the root diverge too; the final norm only gets diverged inputs.
TEST(Verify, EveryModuleIsComparedWithItsErrorsForTheModuleTree)
{
    const VerifyReport r = verifyOne("builtin:tiny-gpt", seeded("blocks.1", SeededFault::Noise, Function::Gelu));
    ASSERT_TRUE(r.divergence) << r.localisationNote;
    std::map<std::string, ModuleAgreement> byPath;
    for (const ModuleAgreement& m : r.modules)
        byPath[m.module] = m;
    for (const char* path :
         {"blocks.0", "blocks.0.attn", "blocks.0.mlp", "blocks.1.attn", "blocks.1.mlp", "blocks.1", ""})
        ASSERT_TRUE(byPath.count(path)) << "module '" << path << "' not compared";
    EXPECT_TRUE(byPath["blocks.0"].outputsAgree);
    EXPECT_EQ(byPath["blocks.0.mlp"].maxAbsError, 0.0);
    EXPECT_TRUE(byPath["blocks.1.attn"].outputsAgree);
    EXPECT_FALSE(byPath["blocks.1.mlp"].outputsAgree);
    EXPECT_TRUE(byPath["blocks.1.mlp"].inputsAgree);
    EXPECT_GT(byPath["blocks.1.mlp"].maxAbsError, 0.0);
    EXPECT_LT(byPath["blocks.1.mlp"].minCosine, 1.0);
    EXPECT_FALSE(byPath["blocks.1"].outputsAgree);
    EXPECT_FALSE(byPath[""].outputsAgree);
    EXPECT_EQ(byPath["blocks.0"].calls, 1);
    // In the order their first call ended: blocks.0's submodules before blocks.0, the root last.
    EXPECT_EQ(r.modules.back().module, "");

    // An exact plan, compared on request: every module agrees, and nothing is said to be missing.
    VerifyOptions compare;
    compare.compareModules = true;
    const VerifyReport exact = verifyOne("builtin:tiny-gpt", seeded("", SeededFault::Exact, Function::Gelu), compare);
    EXPECT_TRUE(exact.passed);
    EXPECT_EQ(exact.passes, 1);
    EXPECT_TRUE(exact.localisationNote.empty()) << exact.localisationNote;
    ASSERT_FALSE(exact.modules.empty());
    for (const ModuleAgreement& m : exact.modules) {
        EXPECT_TRUE(m.outputsAgree && m.inputsAgree) << m.module;
        EXPECT_EQ(m.maxAbsError, 0.0) << m.module;
    }
}

TEST(Verify, ALooseThresholdPassesWhatTheDefaultsFail)
{
    VerifyOptions loose;
    loose.thresholds.minCosine = 0.9;
    loose.thresholds.absolute = 1.0;
    loose.thresholds.relative = 1.0;
    const VerifyReport r = verifyOne("builtin:tiny-gpt", seeded("blocks.1", SeededFault::Noise, Function::Gelu), loose);
    EXPECT_TRUE(r.passed) << r.outputs[0].problem;
}

TEST(Verify, ATinyBudgetLocatesTheSameModuleInMorePasses)
{
    VerifyOptions tiny;
    tiny.moduleOutputBudgetBytes = 1; // one module call per window
    const VerifyReport r = verifyOne("builtin:tiny-gpt", seeded("blocks.1", SeededFault::Noise, Function::Gelu), tiny);
    ASSERT_TRUE(r.divergence) << r.localisationNote;
    EXPECT_EQ(r.divergence->module, "blocks.1.mlp");
    EXPECT_GT(r.passes, 1);
    const VerifyReport wide = verifyOne("builtin:tiny-gpt", seeded("blocks.1", SeededFault::Noise, Function::Gelu));
    EXPECT_EQ(wide.passes, 1);
    EXPECT_EQ(r.divergence->moduleCalls, wide.divergence->moduleCalls);
}

TEST(Verify, APt2ProgramIsLocatedThroughItsModuleFrames)
{
    // exported_block.pt2: relu runs in blocks.N.mlp.act; `shared` is called twice. Its softmax output shrinks the
    // noise below the default tolerance (max abs error 1.5e-4 on values near 0.06), so the tolerance is tightened.
    VerifyOptions tight;
    tight.thresholds.absolute = 1e-6;
    tight.thresholds.relative = 1e-5;
    const VerifyReport relu =
        verifyOne(kModels + "exported_block.pt2", seeded("blocks.1", SeededFault::Noise, Function::Relu), tight);
    EXPECT_FALSE(relu.passed);
    ASSERT_TRUE(relu.divergence) << relu.localisationNote;
    EXPECT_EQ(relu.divergence->module, "blocks.1.mlp.act");
    const VerifyReport shared =
        verifyOne(kModels + "exported_block.pt2", seeded("shared", SeededFault::Noise, Function::Linear), tight);
    ASSERT_TRUE(shared.divergence) << shared.localisationNote;
    EXPECT_EQ(shared.divergence->module, "shared");
    EXPECT_EQ(shared.divergence->call, 0);
    const VerifyReport exact =
        verifyOne(kModels + "exported_block.pt2", seeded("", SeededFault::Exact, Function::Linear), tight);
    EXPECT_TRUE(exact.passed);
}

TEST(Verify, LeavesNoBindingAndCancelsBetweenForwards)
{
    registerSeededFaults();
    auto session = ModelSession::open("builtin:tiny-gpt");
    const Plan plan = planOf({seeded("blocks.1", SeededFault::Noise, Function::Gelu)});
    verifyPlan(*session, plan);
    EXPECT_FALSE(runtime::Hooks::anyBound());
    VerifyOptions cancel;
    cancel.progress = [](int done, int) { return done < 1; };
    EXPECT_THROW(verifyPlan(*session, plan, cancel), Error);
    EXPECT_FALSE(runtime::Hooks::anyBound());
    EXPECT_THROW(verifyPlan(*session, Plan{}), Error); // no enabled entry: nothing to verify
}

// A forking model (forked_gelu.pt: the root forks `act`'s forward with torch.jit.fork and waits): the module calls
// made in the forked task are compared there, so the divergence is located to `act` (verify said "the forward made no
// module call that could be compared": only the forward's own thread was observed).
// `worker` forks its child `act` twice, on x and on -x, and the two tasks run concurrently: their module calls start
// and end in an order that differs from forward to forward. Each plan call is matched to the baseline call of `act`
// with the same inputs, so every run names `act` (it named another module, or "the plan changed the forward's
// control flow", from run to run), and an exact plan passes.
TEST(Verify, ConcurrentForkedCallsOfOneModuleAreMatchedByTheirInputs)
{
    registerSeededFaults();
    auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/forked_pair.pt");
    session->setInputSpecs({"float32[32,64]"});
    for (int run = 0; run < 12; ++run) {
        SCOPED_TRACE(run);
        VerifyReport r = verifyPlan(*session, planOf({seeded("", SeededFault::WrongOnNegative, Function::Gelu)}));
        EXPECT_FALSE(r.passed);
        ASSERT_TRUE(r.divergence) << r.localisationNote;
        EXPECT_EQ(r.divergence->module, "worker.act");
        EXPECT_TRUE(r.localisationNote.empty()) << r.localisationNote;
        r = verifyPlan(*session, planOf({seeded("", SeededFault::Exact, Function::Gelu)}), [] {
            VerifyOptions o;
            o.compareModules = true;
            return o;
        }());
        EXPECT_TRUE(r.passed);
        for (const ModuleAgreement& m : r.modules)
            EXPECT_TRUE(m.outputsAgree && m.inputsAgree) << m.module;
    }
}

TEST(Verify, ModuleCallsOfAForkedTaskAreComparedAndLocated)
{
    registerSeededFaults();
    auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/forked_gelu.pt");
    session->setInputSpecs({"float32[4,8]"});
    const VerifyReport r = verifyPlan(*session, planOf({seeded("", SeededFault::Noise, Function::Gelu)}));
    EXPECT_FALSE(r.passed);
    ASSERT_TRUE(r.divergence) << r.localisationNote;
    EXPECT_EQ(r.divergence->module, "act");
    EXPECT_EQ(r.divergence->entries, std::vector<int>{0});
}
