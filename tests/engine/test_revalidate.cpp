// SPDX-License-Identifier: Apache-2.0
// Re-validation where a plan lands (kforge/revalidate.h): the recorded provenance is faked to be another machine's,
// and each flagged entry is checked again on the model's own calls. Faster, slower and wrong by construction
// (test_helpers.h's providers), never by this machine's speed.
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/optimizer.h>
#include <kforge/plan_landing.h>
#include <kforge/revalidate.h>

#include "seeded_faults.h"
#include "test_helpers.h"

#include <torch/script.h>

#include <gtest/gtest.h>

using namespace kforge;
using namespace kforge::test;

namespace {

// Three modules, each one gelu on its own 1 M-element input: big enough for TestMemoizedGeluProvider's lookup.
std::unique_ptr<ModelSession> threeGelus(const TempDir& dir)
{
    return geluModules(dir, {"fast", "wrong", "slow"},
                       "def forward(self, x: Tensor) -> Tuple[Tensor, Tensor, Tensor]:\n"
                       "    return self.fast.forward(x), self.wrong.forward(x), self.slow.forward(x)\n",
                       {"float32[256,4096]"});
}

PlanEntry measured(const std::string& spec, double speedup)
{
    PlanEntry e = parseProvideSpec(spec);
    EntryMeasurement m;
    m.signatures = {"float32[256,4096]"};
    m.speedup = speedup;
    e.measured = m;
    return e;
}

// A plan "measured" on an AVX512 machine: entries faster, wrong and slower here by construction.
Plan planFromAnotherMachine()
{
    Plan plan;
    plan.entries.push_back(measured("fast:gelu:TestMemoizedGeluProvider", 20.0));
    plan.entries.push_back(measured("wrong:gelu:TestTagGeluProvider", 1.5));
    plan.entries.push_back(measured("slow:gelu:TestSlowGeluProvider", 1.2));
    stampProvenance(plan, "cpu", "kforge optimize");
    plan.provenance->machine.cpuIsa = "AVX512-elsewhere";
    return plan;
}

} // namespace

TEST(Revalidate, EachFlaggedEntryIsCheckedAndTheFailingOnesAreDisabled)
{
    registerTestProviders();
    TempDir dir;
    auto session = threeGelus(dir);
    Plan plan = planFromAnotherMachine();
    std::vector<std::string> lines;
    RevalidateOptions options;
    options.secondsPerEntry = 5;
    options.benchmarkRounds = 9; // a "faster" verdict needs at least 6 rounds
    options.log = [&](const std::string& line) { lines.push_back(line); };
    const RevalidationReport report = revalidatePlan(*session, plan, options);

    EXPECT_TRUE(report.hadProvenance);
    EXPECT_TRUE(report.note.empty()) << report.note;
    ASSERT_EQ(report.entries.size(), 3u);
    for (const EntryRevalidation& e : report.entries) {
        ASSERT_EQ(e.reasons.size(), 1u);
        EXPECT_NE(e.reasons[0].find("AVX512-elsewhere"), std::string::npos) << e.reasons[0];
        EXPECT_EQ(e.signatures, 1) << "the recorded signature, as the model calls it in that module";
    }
    EXPECT_TRUE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_GT(report.entries[0].speedup, 1.0);
    EXPECT_TRUE(plan.entries[0].enabled);
    EXPECT_NE(report.entries[0].verdict.find("x where it was measured"), std::string::npos);

    EXPECT_FALSE(report.entries[1].kept);
    EXPECT_NE(report.entries[1].verdict.find("incorrect here"), std::string::npos) << report.entries[1].verdict;
    EXPECT_FALSE(plan.entries[1].enabled);
    EXPECT_NE(plan.entries[1].note.find("disabled by re-validation: incorrect here"), std::string::npos);

    EXPECT_FALSE(report.entries[2].kept);
    EXPECT_NE(report.entries[2].verdict.find("not faster"), std::string::npos) << report.entries[2].verdict;
    EXPECT_LT(report.entries[2].speedup, 1.0);
    EXPECT_FALSE(plan.entries[2].enabled);
    EXPECT_EQ(lines.size(), 6u) << "a line before and after each entry";
}

TEST(Revalidate, APlanFromThisMachineOrWithoutProvenanceIsLeftAsItIs)
{
    registerTestProviders();
    TempDir dir;
    auto session = threeGelus(dir);
    Plan here = planFromAnotherMachine();
    here.provenance->machine = machineFingerprint("cpu");
    const RevalidationReport same = revalidatePlan(*session, here);
    EXPECT_TRUE(same.entries.empty());
    EXPECT_EQ(same.note, "the plan's provenance matches this machine: not re-validated");
    EXPECT_TRUE(here.entries[1].enabled) << "nothing re-validated, nothing disabled";

    Plan aitune = planFromAnotherMachine();
    aitune.provenance.reset();
    const RevalidationReport none = revalidatePlan(*session, aitune);
    EXPECT_FALSE(none.hadProvenance);
    EXPECT_NE(none.note.find("no provenance"), std::string::npos);
    EXPECT_TRUE(aitune.entries[1].enabled);
}

TEST(Revalidate, AnUnmeasuredEntryIsCheckedForCorrectnessOnly)
{
    registerTestProviders();
    TempDir dir;
    auto session = threeGelus(dir);
    Plan plan;
    plan.entries.push_back(parseProvideSpec("slow:gelu:TestSlowGeluProvider"));
    stampProvenance(plan, "cpu", "kforge plan new");
    plan.provenance->machine.cpuModel = "Some Other CPU";
    const RevalidationReport report = revalidatePlan(*session, plan);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_TRUE(report.entries[0].kept) << "no speed was claimed, so none is checked";
    EXPECT_NE(report.entries[0].verdict.find("not benchmarked"), std::string::npos) << report.entries[0].verdict;
    EXPECT_EQ(report.entries[0].speedup, 0.0);
}

TEST(Revalidate, OtherInputsThanTheRecordedOnesAreCheckedOnTheCallsThatAreMade)
{
    registerTestProviders();
    TempDir dir;
    auto session = threeGelus(dir);
    session->setInputSpecs({"float32[128,4096]"});
    Plan plan = planFromAnotherMachine();
    plan.entries.resize(2);
    const RevalidationReport report = revalidatePlan(*session, plan);
    ASSERT_EQ(report.entries.size(), 2u);
    EXPECT_EQ(report.entries[1].signatures, 1);
    EXPECT_FALSE(report.entries[1].kept) << "still caught: checked on the calls the model makes";
    EXPECT_NE(report.entries[1].verdict.find("none of the recorded signatures is called"), std::string::npos)
        << report.entries[1].verdict;
}

TEST(Revalidate, MakePlanRecordsWhatItMeasured)
{
    registerTestProviders();
    TempDir dir;
    auto session = threeGelus(dir);
    OptimizeOptions options;
    options.warmupIterations = 1;
    options.iterations = 1;
    options.benchmarkRounds = 9; // a "faster" verdict needs at least 6 rounds
    options.generators.clear();
    options.providers = {"TestMemoizedGeluProvider"};
    options.granularity = OptimizeOptions::Granularity::Model;
    const OptimizeResult result = makePlan(*session, options);
    ASSERT_TRUE(result.plan.provenance);
    EXPECT_EQ(result.plan.provenance->writtenBy, "kforge optimize");
    ASSERT_EQ(result.plan.provenance->providers.size(), 1u);
    EXPECT_EQ(result.plan.provenance->providers[0].type, "TestMemoizedGeluProvider");
    ASSERT_EQ(result.plan.entries.size(), 1u);
    const auto& m = result.plan.entries[0].measured;
    ASSERT_TRUE(m);
    EXPECT_EQ(m->signatures, std::vector<std::string>{"float32[256,4096]"});
    EXPECT_GT(m->speedup, 1.0);
    EXPECT_GT(m->speedupHigh, 0.0);
    EXPECT_LE(m->speedupLow, m->speedupHigh);
}

// A model that adds random noise to its output: optimize's end-to-end check of the plan it made (verify) replays the
// draws, so a provider faster by construction and correct is kept, not dropped as "ruins the model's output".
TEST(Revalidate, OptimizeKeepsACorrectProviderOnAModelThatDrawsRandomNumbers)
{
    registerTestProviders();
    TempDir dir;
    auto session = geluModules(dir, {"fast"},
                               "def forward(self, x: Tensor) -> Tensor:\n"
                               "    return self.fast.forward(x) + torch.rand_like(x)\n",
                               {"float32[256,4096]"});
    OptimizeOptions options;
    options.warmupIterations = 1;
    options.iterations = 1;
    options.benchmarkRounds = 9;
    options.generators.clear();
    options.providers = {"TestMemoizedGeluProvider"};
    options.granularity = OptimizeOptions::Granularity::Model;
    const OptimizeResult result = makePlan(*session, options);
    ASSERT_EQ(result.plan.entries.size(), 1u) << "the correct, faster provider was dropped";
    ASSERT_TRUE(result.verification);
    EXPECT_TRUE(result.verification->passed);
    EXPECT_TRUE(result.verification->nondeterminism.empty()) << "verify replays the random draws";
}

// An interpolate that is not nearest-2d reaches providers in its own op's schema (a Variant form: bilinear, and every
// traced mode), which sample capture used to skip: the entry was kept as "not called" and then served the model,
// zeros included. Every call the entry will serve is checked, in the form it will get it (tests/data/models/
// make_upsampling.py: `up` bilinear, `near` nearest, scripted and traced).
TEST(Revalidate, CallsInAVariantFormAreCheckedInThatForm)
{
    registerTestProviders();
    for (const std::string form : {"script", "trace"}) {
        SCOPED_TRACE(form);
        auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/upsampling." + form + ".pt");
        session->setInputSpecs({"float32[1,4,8,8]"});
        Plan plan;
        plan.entries.push_back(parseProvideSpec("up:interpolate:TestZeroingInterpolateProvider"));
        plan.entries.push_back(parseProvideSpec("near:interpolate:TestZeroingInterpolateProvider"));
        plan.entries.push_back(parseProvideSpec("up:interpolate:AtenInterpolateProvider"));
        stampProvenance(plan, "cpu", "kforge plan new");
        plan.provenance->machine.cpuModel = "Some Other CPU";
        const RevalidationReport report = revalidatePlan(*session, plan);
        ASSERT_EQ(report.entries.size(), 3u);
        for (int i : {0, 1}) {
            EXPECT_FALSE(report.entries[i].kept) << report.entries[i].verdict;
            EXPECT_EQ(report.entries[i].signatures, 1);
            EXPECT_NE(report.entries[i].verdict.find("incorrect here"), std::string::npos) << report.entries[i].verdict;
            EXPECT_FALSE(plan.entries[i].enabled);
        }
        EXPECT_NE(report.entries[0].verdict.find("aten::upsample_bilinear2d"), std::string::npos)
            << report.entries[0].verdict;
        EXPECT_TRUE(report.entries[2].kept) << report.entries[2].verdict;
        EXPECT_NE(
            report.entries[2].verdict.find(
                "correct on 1 signature(s), 1 call(s) and 4 edge-value sample(s) (calls of aten::upsample_bilinear2d"),
            std::string::npos)
            << report.entries[2].verdict;
    }
}

// The entry serves every call of its function in its scope, so every signature there is checked, not only the ones
// it was measured on: a provider right on the recorded matrix and wrong on the 3-D call of the same module is
// disabled (it was kept when only the recorded signatures were checked).
TEST(Revalidate, EverySignatureTheScopeCallsIsCheckedNotOnlyTheRecordedOnes)
{
    registerTestProviders();
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x) + torch.gelu(x.unsqueeze(0)).squeeze(0)"), dir.path("m.pt"));
    auto session = ModelSession::open(dir.path("m.pt").string());
    session->setInputSpecs({"float32[4,8]"});
    Plan plan;
    PlanEntry e = parseProvideSpec("act:gelu:TestMisbehavingGeluProvider");
    e.provider["mode"] = "wrong-on-3-dims";
    e.measured = EntryMeasurement{{"float32[4,8]"}};
    plan.entries.push_back(e);
    stampProvenance(plan, "cpu", "kforge plan new");
    plan.provenance->machine.cpuModel = "Some Other CPU";
    const RevalidationReport report = revalidatePlan(*session, plan);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_EQ(report.entries[0].signatures, 2) << "the recorded matrix and the 3-D call";
    EXPECT_FALSE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_NE(report.entries[0].verdict.find("incorrect here"), std::string::npos) << report.entries[0].verdict;
    EXPECT_EQ(report.entries[0].verdict.find("none of the recorded signatures"), std::string::npos)
        << report.entries[0].verdict;
}

// Never kept unchecked: an entry whose function these inputs never call in its scope could not be
// checked, and would serve unchecked calls that other inputs make; it is disabled, saying why, not kept "not checked".
TEST(Revalidate, AnEntryTheseInputsNeverExerciseIsDisabledNotKeptUnchecked)
{
    registerTestProviders();
    TempDir dir;
    auto session = threeGelus(dir);
    Plan plan;
    plan.entries.push_back(parseProvideSpec("fast:relu:AtenReluProvider")); // no relu anywhere
    plan.entries.push_back(parseProvideSpec("fast:gelu:AtenGeluProvider"));
    stampProvenance(plan, "cpu", "kforge optimize");
    plan.provenance->machine.cpuIsa = "AVX512-elsewhere";
    const RevalidationReport report = revalidatePlan(*session, plan, {});
    ASSERT_EQ(report.entries.size(), 2u);
    EXPECT_FALSE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_EQ(report.entries[0].signatures, 0);
    EXPECT_FALSE(plan.entries[0].enabled);
    EXPECT_NE(report.entries[0].verdict.find("not exercised here: 'relu' is not called in fast"), std::string::npos)
        << report.entries[0].verdict;
    EXPECT_NE(plan.entries[0].note.find("disabled by re-validation: not exercised here"), std::string::npos)
        << plan.entries[0].note;
    EXPECT_TRUE(report.entries[1].kept) << report.entries[1].verdict; // exercised and correct: kept
    EXPECT_TRUE(plan.entries[1].enabled);
}

// Where it mattered: an entry scoped to a module whose gelu runs in a task it forks (fork_in_block.pt)
// is re-validated on that forked call, and a wrong provider there is disabled. When forked work counted at the root,
// the entry found no call in its scope: kept unchecked, then disabled as not exercised.
TEST(Revalidate, AnEntryWhoseCallsRunInAForkedTaskIsCheckedOnThem)
{
    registerTestProviders();
    auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/fork_in_block.pt");
    session->setInputSpecs({"float32[8]"});
    Plan plan;
    plan.entries.push_back(parseProvideSpec("block:gelu:AtenGeluProvider"));
    plan.entries.push_back(parseProvideSpec("block:gelu:TestTagGeluProvider"));
    stampProvenance(plan, "cpu", "kforge optimize");
    plan.provenance->machine.cpuIsa = "AVX512-elsewhere";
    const RevalidationReport report = revalidatePlan(*session, plan, {});
    ASSERT_EQ(report.entries.size(), 2u);
    EXPECT_EQ(report.entries[0].signatures, 1) << report.entries[0].verdict;
    EXPECT_TRUE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_EQ(report.entries[1].signatures, 1) << report.entries[1].verdict;
    EXPECT_FALSE(report.entries[1].kept);
    EXPECT_NE(report.entries[1].verdict.find("incorrect here"), std::string::npos) << report.entries[1].verdict;
}

// One place where a plan lands (kforge/plan_landing.h, what every CLI command and the desktop call): a plan asked to
// be re-validated has its wrong entry disabled before the notes are made, and the notes say what a user hears before
// it runs: the plan's other model, and its entries that can never fire (the disabled ones not among them).
TEST(PlanLanding, RevalidatesWhenAskedThenNotesTheOtherModelAndEntriesThatCanNeverFire)
{
    registerTestProviders();
    TempDir dir;
    auto session = threeGelus(dir);
    Plan plan;
    plan.entries.push_back(parseProvideSpec("wrong:gelu:TestTagGeluProvider"));
    plan.entries.push_back(parseProvideSpec("fast:relu:AtenReluProvider")); // no relu anywhere: can never fire
    stampProvenance(plan, "cpu", "kforge optimize");
    plan.provenance->machine.cpuIsa = "AVX512-elsewhere";
    plan.modelName = "another-model";

    Plan asIs = plan;
    const PlanLanding unchecked = landPlan(*session, asIs, {});
    EXPECT_FALSE(unchecked.revalidation);
    EXPECT_TRUE(asIs.entries[0].enabled);
    EXPECT_TRUE(contains(unchecked.notes.otherModel, "another-model")) << unchecked.notes.otherModel;
    ASSERT_EQ(unchecked.notes.warnings.size(), 1u);
    EXPECT_EQ(unchecked.notes.warnings[0].entry, 1);
    const std::vector<std::string> uncheckedLines = unchecked.notes.lines();
    ASSERT_EQ(uncheckedLines.size(), 2u);
    EXPECT_EQ(uncheckedLines[0], unchecked.notes.otherModel);
    EXPECT_TRUE(contains(uncheckedLines[1], "can never fire")) << uncheckedLines[1];

    // Re-validated: the wrong entry and the one these inputs never exercise are disabled before the notes, which
    // then name the other model only.
    PlanLandingOptions options;
    options.revalidate = true;
    const PlanLanding landed = landPlan(*session, plan, options);
    ASSERT_TRUE(landed.revalidation);
    EXPECT_FALSE(plan.entries[0].enabled) << plan.entries[0].note;
    EXPECT_FALSE(plan.entries[1].enabled) << plan.entries[1].note;
    EXPECT_TRUE(contains(landed.notes.otherModel, "another-model")) << landed.notes.otherModel;
    EXPECT_TRUE(landed.notes.warnings.empty());
    EXPECT_EQ(landed.notes.lines(), std::vector<std::string>{landed.notes.otherModel});
}

// Re-validation's sampling forward runs on the user's inputs and model: a model that counts its forwards in a buffer
// and changes its input in place computes, after a plan landed, what it would have computed without it.
TEST(Revalidate, ReValidationLeavesTheModelsStateAsItWas)
{
    registerTestProviders();
    TempDir dir;
    const auto open = [&](const std::string& name) {
        auto cu = std::make_shared<torch::jit::CompilationUnit>();
        torch::jit::Module act(c10::QualifiedName("__torch__.Act"), cu, true);
        act.define("def forward(self, x: Tensor) -> Tensor:\n    return torch.gelu(x)\n");
        torch::jit::Module root(c10::QualifiedName("__torch__.Counter"), cu, true);
        root.register_module("act", act);
        root.register_buffer("count", torch::zeros({1}));
        root.define("def forward(self, x: Tensor):\n"
                    "    self.count.add_(1.0)\n"
                    "    return self.act.forward(x.mul_(3.0)) * self.count\n");
        root.eval();
        root.save(dir.path(name).string());
        auto session = ModelSession::open(dir.path(name).string());
        session->setInputSpecs({"float32[4,8]"});
        return session;
    };
    auto control = open("control.pt");
    auto landed = open("landed.pt");
    const double first = control->forward()[0].sum;
    const double second = control->forward()[0].sum;
    ASSERT_NE(first, second) << "the counter moves the output";
    EXPECT_EQ(landed->forward()[0].sum, first);
    Plan plan;
    plan.entries.push_back(parseProvideSpec("act:gelu:AtenGeluProvider"));
    stampProvenance(plan, "cpu", "kforge plan new");
    plan.provenance->machine.cpuModel = "Some Other CPU";
    const RevalidationReport report = revalidatePlan(*landed, plan);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_TRUE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_EQ(landed->forward()[0].sum, second) << "re-validation's forward left the counter as it was";
}

namespace {

Plan correctnessOnly(const std::string& spec)
{
    Plan plan;
    plan.entries.push_back(parseProvideSpec(spec));
    stampProvenance(plan, "cpu", "kforge plan new");
    plan.provenance->machine.cpuModel = "Some Other CPU";
    return plan;
}

} // namespace

// A provider wrong on negative inputs only, on a model whose first gelu call of the signature gets non-negative
// values: re-validation checks later calls of the signature too, and edge values made from the first (negated), so
// the entry is disabled either way. It was kept as "correct on 1 signature", checked on the first call alone.
TEST(Revalidate, ValuesAreSampledNotOnlySignatures)
{
    registerSeededFaults();
    TempDir dir;
    const std::string wrong = "fast:gelu:" + seededTypeName(SeededFault::WrongOnNegative, Function::Gelu);
    // The second call of the signature is the first with negative values.
    auto twoCalls = geluModules(dir, {"fast"},
                                "def forward(self, x: Tensor) -> Tensor:\n"
                                "    return self.fast.forward(x.abs()) + self.fast.forward(x - 3.0)\n",
                                {"float32[4,8]"});
    Plan plan = correctnessOnly(wrong);
    RevalidationReport report = revalidatePlan(*twoCalls, plan);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_FALSE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_EQ(report.entries[0].signatures, 1);
    EXPECT_EQ(report.entries[0].calls, 2) << "the first call and the second";
    EXPECT_EQ(report.entries[0].edgeSamples, 4);
    // One call, never negative: the negated edge value catches it.
    auto oneCall = geluModules(dir, {"fast"},
                               "def forward(self, x: Tensor) -> Tensor:\n"
                               "    return self.fast.forward(x.abs())\n",
                               {"float32[4,8]"});
    plan = correctnessOnly(wrong);
    report = revalidatePlan(*oneCall, plan);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_FALSE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_NE(report.entries[0].verdict.find("edge values"), std::string::npos) << report.entries[0].verdict;
    // An exact provider passes every sample, edge values included.
    plan = correctnessOnly("fast:gelu:" + seededTypeName(SeededFault::Exact, Function::Gelu));
    report = revalidatePlan(*twoCalls, plan);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_TRUE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_NE(report.entries[0].verdict.find("correct on 1 signature(s), 2 call(s) and 4 edge-value sample(s)"),
              std::string::npos)
        << report.entries[0].verdict;
}

// One module object under two names: its calls run in the scope of its first name, and an entry for its second name
// serves them (R2). Re-validation checks that entry on those calls; it disabled it as "not exercised here".
TEST(Revalidate, AnEntryOnASharedModulesSecondNameIsCheckedOnTheCallsItServes)
{
    registerSeededFaults();
    TempDir dir;
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module act(c10::QualifiedName("__torch__.Act"), cu, true);
    act.define("def forward(self, x: Tensor) -> Tensor:\n    return torch.gelu(x)\n");
    torch::jit::Module root(c10::QualifiedName("__torch__.Shared"), cu, true);
    root.register_module("a", act);
    root.register_module("b", act);
    root.define("def forward(self, x: Tensor):\n    return self.a.forward(x) + self.b.forward(x)\n");
    root.eval();
    root.save(dir.path("shared.pt").string());
    auto session = ModelSession::open(dir.path("shared.pt").string());
    session->setInputSpecs({"float32[4,8]"});
    Plan plan = correctnessOnly("b:gelu:" + seededTypeName(SeededFault::Exact, Function::Gelu));
    RevalidationReport report = revalidatePlan(*session, plan);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_TRUE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_EQ(report.entries[0].calls, 2) << report.entries[0].verdict;
    plan = correctnessOnly("b:gelu:" + seededTypeName(SeededFault::Zero, Function::Gelu));
    report = revalidatePlan(*session, plan);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_FALSE(report.entries[0].kept);
    EXPECT_NE(report.entries[0].verdict.find("incorrect here"), std::string::npos) << report.entries[0].verdict;
}
