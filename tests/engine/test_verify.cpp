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

void registerSeededFaults()
{
    static const bool done = [] {
        for (auto& info : seededFaultTypes())
            ProviderRegistry::instance().add(std::move(info));
        return true;
    }();
    (void)done;
}

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

// A model that draws random numbers, or changes its input, disagrees with itself: an exact plan is not failed for it,
// a random output is judged against that spread (one too small for that is not judged), a deterministic output
// beside it is judged as usual, and no module is blamed.
TEST(Verify, TheModelsOwnNondeterminismIsNeverBlamedOnThePlan)
{
    registerTestProviders();
    TempDir dir;
    auto noisy = rootOverGelu(dir, "noisy.pt", "self.act.forward(x) + torch.rand_like(x)");
    VerifyReport r = verifyPlan(*noisy, planOf({entry("", "gelu", "AtenGeluProvider")}));
    EXPECT_TRUE(r.passed) << (r.outputs.empty() ? "" : r.outputs[0].problem);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_FALSE(r.outputs[0].judged);
    EXPECT_NE(r.outputs[0].problem.find("not judged: it differs between two forwards without the plan"),
              std::string::npos)
        << r.outputs[0].problem;
    EXPECT_NE(r.nondeterminism.find("draws random numbers"), std::string::npos) << r.nondeterminism;
    EXPECT_FALSE(r.divergence);

    auto half = rootOverGelu(dir, "half.pt", "(self.act.forward(x), torch.rand_like(x))");
    r = verifyPlan(*half, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    EXPECT_FALSE(r.passed); // the deterministic output is still judged, and the tag provider changes it
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_TRUE(r.outputs[0].judged);
    EXPECT_FALSE(r.outputs[0].passed);
    EXPECT_FALSE(r.outputs[1].judged);
    EXPECT_FALSE(r.divergence) << "a module of a nondeterministic model is not blamed";

    // Large enough to judge against the model's own spread: an exact plan passes, judged; one that moves the output
    // far beyond what two forwards without it differ by fails, and says so; no module is blamed either way.
    const auto wide = [&](const std::string& name, const std::string& body) {
        auto session = rootOverGelu(dir, name, body);
        session->setInputSpecs({"float32[16,16]"});
        return session;
    };
    auto noisyWide = wide("noisy_wide.pt", "self.act.forward(x) + torch.rand_like(x)");
    r = verifyPlan(*noisyWide, planOf({entry("", "gelu", "AtenGeluProvider")}));
    EXPECT_TRUE(r.passed) << r.outputs[0].problem;
    EXPECT_TRUE(r.outputs[0].judged);
    EXPECT_FALSE(r.nondeterminism.empty());
    r = verifyPlan(*noisyWide, planOf({entry("", "gelu", "TestTagGeluProvider")}));
    EXPECT_FALSE(r.passed);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_TRUE(r.outputs[0].judged);
    EXPECT_NE(r.outputs[0].problem.find("the model's own spread"), std::string::npos) << r.outputs[0].problem;
    EXPECT_FALSE(r.divergence);
    // An input the model changes in place drifts every forward: the plan's forward, judged against the one just
    // before it, is not blamed for the drift.
    auto drifting = wide("drifting.pt", "self.act.forward(x.add_(1.0))");
    r = verifyPlan(*drifting, planOf({entry("", "gelu", "AtenGeluProvider")}));
    EXPECT_TRUE(r.passed) << r.outputs[0].problem << " / " << r.nondeterminism;
    EXPECT_TRUE(r.outputs[0].judged);
    EXPECT_NE(r.nondeterminism.find("changes a buffer or its input"), std::string::npos) << r.nondeterminism;

    auto steady = rootOverGelu(dir, "steady.pt", "self.act.forward(x)");
    r = verifyPlan(*steady, planOf({entry("", "gelu", "AtenGeluProvider")}));
    EXPECT_TRUE(r.passed);
    EXPECT_TRUE(r.nondeterminism.empty());
    EXPECT_TRUE(r.outputs[0].judged);
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
