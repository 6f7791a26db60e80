// SPDX-License-Identifier: Apache-2.0
// torch.export packages (.pt2): the module tree, functions and nodes read from the serialized program, compared
// with what Python says of the same model (tests/data/models/make_exported_block.py).
#include "build_path.h"
#include <kforge/error.h>
#include <kforge/exported_program.h>
#include <kforge/events.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/profiling.h>
#include <kforge/runtime.h>

#include "model/compiled_inputs.h"
#include "model/exported_values.h"
#include "runtime/fault_injection.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace kforge;
using kforge::test::registerTestProviders;
using kforge::test::tagCalls;

namespace {

const std::string kModels = std::string(KFORGE_TEST_DATA) + "/models/";

nlohmann::json expected()
{
    std::ifstream in(kModels + "exported_block.expected.json");
    return nlohmann::json::parse(in);
}

} // namespace

TEST(ExportedProgram, ModuleTreeIsPythonsNamedModulesWithTypesAndParameters)
{
    const ExportedProgramInfo info = readExportedProgram(kModels + "exported_block.pt2");
    std::map<std::string, const ModuleInfo*> byPath;
    for (const ModuleInfo& m : info.modules)
        byPath[m.path] = &m;
    const nlohmann::json python = expected().at("modules");
    ASSERT_EQ(info.modules.size(), python.size());
    for (size_t i = 0; i < python.size(); ++i) // named_modules() order
        EXPECT_EQ(info.modules[i].path, python[i].at("path").get<std::string>()) << i;
    EXPECT_EQ(info.modules.front().path, "");
    for (const auto& m : python) {
        const std::string path = m.at("path");
        ASSERT_TRUE(byPath.count(path)) << "missing module '" << path << "'";
        const ModuleInfo& ours = *byPath[path];
        if (ours.forwardCalled) // a module that never runs has no type in the package
            EXPECT_EQ(ours.typeName, m.at("type").get<std::string>()) << path;
        else
            EXPECT_EQ(ours.typeName, "") << path;
        EXPECT_EQ(ours.parameterCount, m.at("parameters").get<std::int64_t>()) << path;
    }
    // The ModuleList is never called: a container, as TorchScript reports one.
    EXPECT_FALSE(byPath.at("blocks")->forwardCalled);
    EXPECT_TRUE(byPath.at("blocks.0")->forwardCalled);
    EXPECT_EQ(byPath.at("blocks.0")->depth, 2);
    EXPECT_EQ(byPath.at("blocks.0.mlp")->children,
              (std::vector<std::string>{"blocks.0.mlp.up", "blocks.0.mlp.act", "blocks.0.mlp.down"}));
    std::int64_t parameters = 0;
    for (const auto& m : python)
        parameters += m.at("parameters").get<std::int64_t>();
    EXPECT_EQ(info.modules.front().subtreeParameterCount, parameters);
}

TEST(ExportedProgram, FunctionsPerModuleAreTheCallsItsForwardMakes)
{
    const ExportedProgramInfo info = readExportedProgram(kModels + "exported_block.pt2");
    std::map<std::string, std::map<std::string, int>> ours;
    for (const ModuleInfo& m : info.modules)
        ours[m.path] = m.functions;
    for (const auto& m : expected().at("modules")) {
        const std::map<std::string, int> python = m.at("functions").get<std::map<std::string, int>>();
        EXPECT_EQ(ours[m.at("path").get<std::string>()], python) << "module '" << m.at("path") << "'";
    }
    // Summed over the tree: 2 blocks x (layer_norm, 2 linear, relu), shared linear twice, gelu and softmax.
    const auto& total = info.modules.front().subtreeFunctions;
    EXPECT_EQ(total.at("linear"), 6);
    EXPECT_EQ(total.at("layer_norm"), 2);
    EXPECT_EQ(total.at("relu"), 2);
}

TEST(ExportedProgram, EveryNodeNamesItsOpModuleAndFunction)
{
    const ExportedProgramInfo info = readExportedProgram(kModels + "exported_block.pt2");
    ASSERT_FALSE(info.nodes.empty());
    EXPECT_EQ(info.inputNames, std::vector<std::string>{"x"});
    const ExportedNode& first = info.nodes.front();
    EXPECT_EQ(first.op, "aten::gelu");
    EXPECT_EQ(first.function, "gelu");
    EXPECT_EQ(first.modulePath, "");
    std::multiset<std::string> linearModules;
    for (const ExportedNode& n : info.nodes)
        if (n.function == "linear")
            linearModules.insert(n.modulePath);
    EXPECT_EQ(linearModules.count("shared"), 2u);
    EXPECT_EQ(linearModules.count("blocks.1.mlp.down"), 1u);
}

TEST(ExportedProgram, BadPackagesAreClearErrors)
{
    try {
        readExportedProgram(kModels + "missing.pt2");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("file not found"), std::string::npos) << e.what();
    }
    try {
        readExportedProgram(kModels + "exported_block.pt2", "decode");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has no exported program 'decode' (it has: forward)"), std::string::npos)
            << e.what();
    }
    try {
        readExportedProgram(kModels + "forked_gelu.pt"); // a TorchScript zip
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not a torch.export package"), std::string::npos) << e.what();
    }
}

// Running: kforge's interpreter over the serialized graph, every op through the dispatcher (exported_runner.h).
namespace {

std::unique_ptr<ModelSession> openBlock() { return ModelSession::open(kModels + "exported_block.pt2"); }

PlanEntry entry(const std::string& scope, const std::string& function, const std::string& provider)
{
    PlanEntry e;
    e.scope = scope;
    e.function = function;
    e.provider = {{"type", provider}};
    return e;
}

std::vector<Event> eventsOfOneForward(ModelSession& session, KernelProviderRuntime* runtime)
{
    auto stream = EventStream::attach();
    if (runtime)
        runtime->activate();
    session.forward();
    if (runtime)
        runtime->deactivate();
    std::vector<Event> events;
    stream->drain(events);
    return events;
}

std::map<std::string, int> count(const std::vector<Event>& events, EventKind kind, bool byModule)
{
    std::map<std::string, int> out;
    for (const Event& e : events)
        if (e.kind == kind)
            ++out[byModule ? e.modulePath : e.function + "@" + e.modulePath];
    return out;
}

} // namespace

TEST(ExportedProgram, RunsOnItsSampleInputWithPythonsOutput)
{
    const auto session = openBlock();
    EXPECT_EQ(session->describeInputs(), std::vector<std::string>{"float32[2,16]"}); // the package's sample input
    EXPECT_EQ(session->forwardArgumentNames(), std::vector<std::string>{"x"});
    const auto outputs = session->forward();
    ASSERT_EQ(outputs.size(), 1u);
    const nlohmann::json want = expected();
    EXPECT_EQ(outputs[0].shape, want["output_shape"].get<std::vector<std::int64_t>>());
    double sum = 0, maxAbs = 0;
    for (double v : want["output"]) {
        sum += v;
        maxAbs = std::max(maxAbs, std::abs(v));
    }
    EXPECT_NEAR(outputs[0].sum, sum, 1e-5);
    EXPECT_NEAR(outputs[0].maxAbs, maxAbs, 1e-6);
}

TEST(ExportedProgram, ScopedProviderServesExactlyTheCallsInItsScope)
{
    const auto session = openBlock();
    KernelProviderRuntime runtime(*session, Plan{{entry("blocks.1", "linear", "AtenLinearProvider")}});
    const auto events = eventsOfOneForward(*session, &runtime);
    // blocks.1.mlp.up and .down run under blocks.1's entry; blocks.0's two and shared's two calls stay original.
    EXPECT_EQ(count(events, EventKind::ProviderCall, true), (std::map<std::string, int>{{"blocks.1", 2}}));
    EXPECT_EQ(count(events, EventKind::OriginalCall, false)["linear@"], 4);
    EXPECT_TRUE(runtime.leftovers().empty());
}

TEST(ExportedProgram, ModuleHooksRunWhereTheGraphEntersAndLeavesModules)
{
    const auto session = openBlock();
    // shared is called twice in a row: two calls, two enters (the graph's module stacks tell the calls apart).
    KernelProviderRuntime runtime(*session, Plan{{entry("shared", "linear", "AtenLinearProvider"),
                                                  entry("blocks.0.mlp.act", "relu", "AtenReluProvider")}});
    const auto events = eventsOfOneForward(*session, &runtime);
    const std::map<std::string, int> twiceAndOnce{{"blocks.0.mlp.act", 1}, {"shared", 2}};
    EXPECT_EQ(count(events, EventKind::ModuleEnter, true), twiceAndOnce);
    EXPECT_EQ(count(events, EventKind::ModuleExit, true), twiceAndOnce);
    EXPECT_EQ(count(events, EventKind::ProviderCall, true), twiceAndOnce);
}

// R2: a plan whose scopes are all the root enters no frame below it; its provider serves the root's gelu as it does
// with every frame's hooks running (an event stream needs them all).
TEST(ExportedProgram, RootOnlyPlansEnterNoFrameBelowTheRoot)
{
    registerTestProviders();
    const auto session = openBlock();
    static std::vector<std::string> hooked;
    runtime::faults::gAfterHookSnapshot = [](const char* path) { hooked.emplace_back(path); };
    KernelProviderRuntime runtime(*session, Plan{{entry("", "gelu", "TestTagGeluProvider")}});
    runtime.activate();
    const long before = tagCalls();
    const auto rootOnly = session->forward();
    EXPECT_EQ(tagCalls() - before, 1); // the root's own gelu
    EXPECT_EQ(hooked, std::vector<std::string>{""});
    hooked.clear();
    std::vector<TensorDigest> everyFrame;
    {
        auto stream = EventStream::attach();
        everyFrame = session->forward();
    }
    runtime.deactivate();
    runtime::faults::gAfterHookSnapshot = nullptr;
    EXPECT_EQ(tagCalls() - before, 2);
    EXPECT_NE(std::find(hooked.begin(), hooked.end(), "blocks.0"), hooked.end()) << testing::PrintToString(hooked);
    ASSERT_EQ(rootOnly.size(), 1u);
    ASSERT_EQ(everyFrame.size(), 1u);
    EXPECT_EQ(rootOnly[0].sum, everyFrame[0].sum);
}

TEST(ExportedProgram, BadInputsAreClearErrorsNamingTheNode)
{
    const auto session = openBlock();
    try {
        session->setInputSpecs({"float32[2,16]", "float32[2,16]"});
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("forward takes 1 input(s), 2 given"), std::string::npos) << e.what();
    }
    session->setInputSpecs({"float32[2,8]"}); // exported with 16 features, a static size: checked as Python does
    try {
        session->forward();
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(
            std::string(e.what()).find("input 'x' dimension 1 is 8; the program was exported with it static at 16"),
            std::string::npos)
            << e.what();
    }
    session->setInputSpecs({"float64[2,16]"}); // the norms' weights are float32
    try {
        session->forward();
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("node 'layer_norm' (aten::layer_norm in module 'blocks.0.norm')"),
                  std::string::npos)
            << e.what();
    }
    session->setInputSpecs({"float32[2,16]"});
    EXPECT_EQ(session->forward()[0].shape, (std::vector<std::int64_t>{2, 16})); // still usable
}

// Export reads some op outputs through views that rely on the layout ATen returned (here the attention output's
// transposed strides: permute + view, no reshape). A provider returning another layout is copied into the recorded
// one, so an AITune plan file (TorchSDPAKernelProvider, MATH backend: contiguous outputs) runs the graph unchanged.
TEST(ExportedProgram, ProviderOutputsTakeTheLayoutTheGraphWasExportedWith)
{
    const auto session = ModelSession::open(kModels + "exported_attention.pt2");
    const auto baseline = session->forward();
    KernelProviderRuntime runtime(*session, readPlan(std::string(KFORGE_TEST_DATA) + "/plans/aitune_sdpa_math.json"));
    auto stream = EventStream::attach();
    runtime.activate();
    const auto served = session->forward();
    runtime.deactivate();
    std::vector<Event> events;
    stream->drain(events);
    EXPECT_EQ(count(events, EventKind::ProviderCall, false).size(), 1u);
    EXPECT_EQ(count(events, EventKind::ProviderCall, false).begin()->first, "scaled_dot_product_attention@");
    ASSERT_EQ(served.size(), 1u);
    EXPECT_EQ(served[0].shape, baseline[0].shape);
    EXPECT_NEAR(served[0].sum, baseline[0].sum, 1e-4);
    EXPECT_NEAR(served[0].maxAbs, baseline[0].maxAbs, 1e-5);
}

// A program decomposed to core ATen (linear -> permute + addmm, layer_norm -> native_layer_norm, softmax ->
// _softmax): each call counts once as the function its nodes' torch_fn names, as `kforge modules` counts them, and
// as the undecomposed program's calls do. Such calls run their ops as the original (no provider sees the function's
// arguments).
TEST(ExportedProgram, DecomposedFunctionsCountAsTheirTorchFnCalls)
{
    const auto core = ModelSession::open(kModels + "exported_block_core.pt2");
    std::map<std::string, int> calls;
    for (const auto& [key, n] : count(eventsOfOneForward(*core, nullptr), EventKind::OriginalCall, false))
        calls[key.substr(0, key.find('@'))] += n;
    const std::map<std::string, int> expected{
        {"gelu", 1}, {"layer_norm", 2}, {"linear", 6}, {"relu", 2}, {"softmax", 1}};
    EXPECT_EQ(calls, expected);
    std::map<std::string, int> inventory(core->modules().front().subtreeFunctions.begin(),
                                         core->modules().front().subtreeFunctions.end());
    EXPECT_EQ(inventory, expected);
    // The same values as the undecomposed program.
    const auto plain = openBlock();
    EXPECT_NEAR(core->forward()[0].sum, plain->forward()[0].sum, 1e-5);
}

// Programs whose linear calls export decomposed (make_decomposed_programs.py: run_decompositions()'s permute + addmm,
// and torchao's unwrapped int8 weights, whose ops of one call export splits with _assert_tensor_metadata checks): each
// call counts once in the module tree, in a forward's events and in a profile's function table and flame graph,
// Python's 3 per forward.
TEST(ExportedProgram, DecomposedCallsCountOnceInTheTreeTheEventsAndTheProfile)
{
    for (const std::string file : {"decomposed_mlp.pt2", "unwrapped_int8.pt2"}) {
        const auto session = ModelSession::open(kModels + file);
        EXPECT_EQ(session->modules().front().subtreeFunctions.at("linear"), 3) << file;
        std::map<std::string, int> calls;
        for (const auto& [key, n] : count(eventsOfOneForward(*session, nullptr), EventKind::OriginalCall, false))
            calls[key.substr(0, key.find('@'))] += n;
        EXPECT_EQ(calls, (std::map<std::string, int>{{"gelu", 1}, {"linear", 3}, {"relu", 1}})) << file;
        ProfileOptions options;
        options.warmupIterations = 0;
        options.iterations = 2;
        const ProfileRun run = profile(*session, options);
        std::map<std::string, long long> profiled;
        for (const StatRow& row : statistics(run.records, GroupBy::Function))
            profiled[row.key] = row.calls;
        EXPECT_EQ(profiled["linear"], 2 * 3) << file;
        EXPECT_EQ(profiled.count("(no function)"), 0u) << file << ": the metadata checks inside a call are the call's";
        double flameLinear = 0; // calls per forward, over the modules whose frames hold linear
        for (const FlameFrame& frame : flameGraph(run))
            if (frame.kind == FlameFrame::Kind::Function && frame.name == "linear")
                flameLinear += frame.calls;
        EXPECT_DOUBLE_EQ(flameLinear, 3.0) << file << ": the flame graph counts calls, not their ops";
    }
}

// A plan entry for a function every call of which is decomposed can never fire: validation and the warnings every
// command prints before a plan runs say so, with the ops it became; the same entry on the undecomposed program fires.
TEST(ExportedProgram, APlanOnADecomposedFunctionCanNeverFire)
{
    const Plan plan{{entry("fc1", "linear", "AtenLinearProvider"), entry("", "gelu", "AtenGeluProvider")}};
    const auto decomposed = ModelSession::open(kModels + "decomposed_mlp.pt2");
    const auto warnings = planWarnings(plan, *decomposed);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].kind, "function-decomposed");
    EXPECT_EQ(warnings[0].entry, 0);
    EXPECT_NE(warnings[0].text().find("can never fire: linear is decomposed into permute + addmm in this program"),
              std::string::npos)
        << warnings[0].text();
    const auto unwrapped = ModelSession::open(kModels + "unwrapped_int8.pt2");
    ASSERT_EQ(planWarnings(plan, *unwrapped).size(), 1u);
    EXPECT_NE(planWarnings(plan, *unwrapped)[0].reason.find("linear is decomposed into t + reshape"), std::string::npos)
        << planWarnings(plan, *unwrapped)[0].reason;
    KernelProviderRuntime runtime(*decomposed, plan);
    EXPECT_EQ(count(eventsOfOneForward(*decomposed, &runtime), EventKind::ProviderCall, false),
              (std::map<std::string, int>{{"gelu@", 1}}));
    EXPECT_TRUE(planWarnings(Plan{{entry("blocks.0", "linear", "AtenLinearProvider")}}, *openBlock()).empty());
}

// Packages as their users write them (tests/data/models/make_exported_saved.py): torch.export.save names its program
// "model"; a package with several programs opens one by name, and naming none or a missing one lists them.
TEST(ExportedProgram, TorchExportSaveFilesOpenAndSeveralProgramsAreChosenByName)
{
    const auto saved = ModelSession::open(kModels + "saved_block.pt2");
    EXPECT_EQ(saved->describeInputs(), std::vector<std::string>{"float32[2,8]"});
    EXPECT_EQ(saved->forward()[0].shape, (std::vector<std::int64_t>{2, 8}));
    EXPECT_EQ(exportedProgramNames(kModels + "saved_block.pt2"), std::vector<std::string>{"model"});

    const std::string two = kModels + "two_programs.pt2";
    EXPECT_EQ(exportedProgramNames(two), (std::vector<std::string>{"encode", "decode"}));
    try {
        ModelSession::open(two);
        FAIL() << "opened a package with two programs without asking which";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("holds several exported programs (encode, decode): choose one with "
                                             "--program NAME"),
                  std::string::npos)
            << e.what();
    }
    OpenOptions decode;
    decode.program = "decode";
    const auto session = ModelSession::open(two, decode);
    EXPECT_EQ(session->describeInputs(), std::vector<std::string>{"float32[2,4]"});
    EXPECT_EQ(session->modules().front().subtreeFunctions.count("gelu"), 1u);
    decode.program = "encoder";
    try {
        ModelSession::open(two, decode);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has no exported program 'encoder' (it has: encode, decode)"),
                  std::string::npos)
            << e.what();
    }
}

// A tied weight (head.weight is embed.weight) is one tensor: each module counts it, the model counts it once, as
// Python's parameters() does (64 + 16 for the norm, not 144).
TEST(ExportedProgram, TiedWeightsCountOnceInTotals)
{
    const auto session = ModelSession::open(kModels + "saved_block.pt2");
    const auto& modules = session->modules();
    const auto find = [&](const std::string& path) {
        return *std::find_if(modules.begin(), modules.end(), [&](const ModuleInfo& m) { return m.path == path; });
    };
    EXPECT_EQ(find("embed").parameterCount, 64);
    EXPECT_EQ(find("head").parameterCount, 64);
    EXPECT_EQ(modules.front().subtreeParameterCount, 64 + 16);
    EXPECT_EQ(modules.front().subtreeParameterBytes, (64 + 16) * 4);
}

// The higher-order ops export emits for ordinary code run, with module scopes and interception inside them:
// `inner` runs inside wrap_with_autocast, silu inside wrap_with_set_grad_enabled, and cond runs one branch, whose
// nodes (export records no module stack there) belong to the module calling cond. Outputs are eager Python's
// (make_exported_saved.py prints them).
TEST(ExportedProgram, HigherOrderOpsRunWithModuleScopesInside)
{
    const auto session = ModelSession::open(kModels + "higher_order.pt2");
    const auto& root = session->modules().front();
    // Static: both branches count (as a TorchScript If does).
    EXPECT_EQ(root.subtreeFunctions.at("linear"), 3);
    EXPECT_EQ(root.subtreeFunctions.at("silu"), 1);
    EXPECT_EQ(root.subtreeFunctions.at("relu"), 1);
    EXPECT_EQ(root.subtreeFunctions.at("gelu"), 2);
    for (const auto& [input, expectedSum, geluCalls] :
         {std::tuple{"positive", -1.8309073448181152, 1}, std::tuple{"negative", -1.397326111793518, 2}}) {
        session->loadInputsFile(kModels + "higher_order." + input + ".pt"); // ones or minus ones: cond's branch
        KernelProviderRuntime runtime(
            *session, Plan{{entry("inner", "linear", "AtenLinearProvider"), entry("", "gelu", "AtenGeluProvider"),
                            entry("", "silu", "AtenSiluProvider")}});
        const auto events = eventsOfOneForward(*session, &runtime);
        const auto served = count(events, EventKind::ProviderCall, false);
        EXPECT_EQ(served.at("linear@inner"), 1) << input;
        EXPECT_EQ(served.at("silu@"), 1) << input;
        int gelu = 0;
        for (const auto& [key, n] : served)
            gelu += key.rfind("gelu@", 0) == 0 ? n : 0;
        EXPECT_EQ(gelu, geluCalls) << input;
        EXPECT_EQ(count(events, EventKind::OriginalCall, false).count("linear@inner"), 0u) << input;
        const auto out = session->forward();
        EXPECT_NEAR(out[0].sum, expectedSum, 1e-5) << input;
    }
}

// Decoders exported with Dim.DYNAMIC batch and sequence (the prompt pass, and the decode step with its key/value
// cache; make_dynamic_decoder.py): export's placeholder module stack on the sym_size nodes of the dynamic dimensions
// is no module, so the tree is exactly Python's named_modules(), and a forward enters only modules of the model.
TEST(ExportedProgram, DynamicShapeExportsListOnlyPythonsNamedModules)
{
    std::ifstream in(kModels + "dynamic_decoder.expected.json");
    const nlohmann::json python = nlohmann::json::parse(in);
    for (const auto& [file, named] : python.items()) {
        const auto session = ModelSession::open(kModels + file);
        std::vector<std::string> paths;
        for (const ModuleInfo& m : session->modules())
            paths.push_back(m.path);
        EXPECT_EQ(paths, named.get<std::vector<std::string>>()) << file;
        const std::set<std::string> known(paths.begin(), paths.end());
        for (const auto& [path, n] : count(eventsOfOneForward(*session, nullptr), EventKind::ModuleEnter, true))
            EXPECT_TRUE(known.count(path)) << file << " entered '" << path << "'";
    }
}

// Modules a torch.cond branch calls (make_cond_branches.py: gate picks gate.hot or gate.cold) run no node of their
// own: export records no module stack inside cond branches. Opening says so once, naming the scope that works (the
// module holding the cond); an entry scoped to a branch module is accepted and can never fire, saying why; an entry
// on the holder serves the branch's calls.
TEST(ExportedProgram, ModulesInsideCondBranchesAreExplainedWithTheScopeThatServesThem)
{
    const auto session = ModelSession::open(kModels + "cond_branches.pt2");
    std::vector<std::string> notes;
    for (const std::string& warning : session->warnings())
        if (warning.find("torch.cond") != std::string::npos)
            notes.push_back(warning);
    ASSERT_EQ(notes.size(), 1u) << testing::PrintToString(session->warnings());
    EXPECT_EQ(notes[0].rfind("'gate.cold', 'gate.cold.0', 'gate.cold.1', 'gate.hot' run inside torch.cond branches of "
                             "'gate'",
                             0),
              0u)
        << notes[0];
    EXPECT_NE(notes[0].find("plan them with scope 'gate' (the module holding the cond)"), std::string::npos)
        << notes[0];

    const Plan branch{{entry("gate.cold", "linear", "AtenLinearProvider")}};
    const auto warnings = planWarnings(branch, *session);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].kind, "scope-not-called");
    EXPECT_EQ(warnings[0].reason, "'gate.cold' runs inside a torch.cond branch of 'gate': export records no module "
                                  "stack inside cond branches, so the scope is never entered");
    EXPECT_EQ(warnings[0].fix, "use the scope 'gate' (the module holding the cond), where the branch's calls run");
    KernelProviderRuntime accepted(*session, branch); // a scope of the model, never entered: not refused
    EXPECT_EQ(count(eventsOfOneForward(*session, &accepted), EventKind::ProviderCall, false).size(), 0u);

    KernelProviderRuntime holder(*session, Plan{{entry("gate", "linear", "AtenLinearProvider")}});
    EXPECT_EQ(count(eventsOfOneForward(*session, &holder), EventKind::ProviderCall, true),
              (std::map<std::string, int>{{"gate", 2}})); // gate.proj's linear and the branch's
}

// Outputs nest as the program's out_spec says, including the mappings other libraries register as pytree nodes:
// a Hugging Face model returns a ModelOutput, whose node carries its keys as context ("logits"), read as a dict;
// tuples and lists stay sequences.
TEST(ExportedProgram, OutputsOfRegisteredMappingTypesKeepTheirNames)
{
    const auto spec = parseTreeSpec(R"([1, {"type": "transformers.modeling_outputs.CausalLMOutputWithPast",
        "context": "[\"logits\", \"hidden\"]", "children_spec": [{"type": null, "context": null, "children_spec": []},
        {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null,
        "children_spec": []}]}]}])",
                                    "test");
    const c10::IValue out = unflattenTreeSpec(spec, {at::ones({1}), at::zeros({2})});
    ASSERT_TRUE(out.isGenericDict());
    const auto dict = out.toGenericDict();
    EXPECT_EQ(dict.at("logits").toTensor().numel(), 1);
    EXPECT_TRUE(dict.at("hidden").isTuple());
}

// What an AOTInductor package's compiled code takes, read from its generated input checks (the shape of
// torch._inductor's wrapper source, 2.11): dtype and static sizes per input; other inputs are refused naming both.
TEST(CompiledInputs, TheGeneratedChecksGiveEachInputsDtypeAndStaticSizes)
{
    const std::string source = R"(
AOTI_NOINLINE static void check_input_0(
    AtenTensorHandle* input_handles
) {
    ConstantHandle arg2_1 = ConstantHandle(input_handles[0]);
    int32_t arg2_1_dtype;
    int32_t arg2_1_expected_dtype = aoti_torch_dtype_float32();
    auto arg2_1_size = arg2_1.sizes();
    if (4 != arg2_1_size[0]) {
    if (8 != arg2_1_size[1]) {
    if (8 != arg2_1_stride[0]) {
}
AOTI_NOINLINE static void check_input_1(
    AtenTensorHandle* input_handles
) {
    ConstantHandle arg3_1 = ConstantHandle(input_handles[1]);
    int32_t arg3_1_expected_dtype = aoti_torch_dtype_int64();
    auto arg3_1_size = arg3_1.sizes();
    if (arg3_1_size[0] < 2) {
    if (16 != arg3_1_size[1]) {
}
)";
    const std::vector<CompiledInput> inputs = compiledInputsOf(source);
    ASSERT_EQ(inputs.size(), 2u);
    EXPECT_EQ(inputs[0].dtype, "float32");
    EXPECT_EQ(inputs[0].sizes, (std::vector<std::optional<int64_t>>{4, 8}));
    EXPECT_EQ(inputs[1].dtype, "int64");
    EXPECT_EQ(inputs[1].sizes, (std::vector<std::optional<int64_t>>{std::nullopt, 16}));

    const at::Tensor ints = at::zeros({5, 16}, at::kLong);
    EXPECT_EQ(compiledInputMismatch(inputs, {at::zeros({4, 8}), ints}), "");
    const std::string batch = compiledInputMismatch(inputs, {at::zeros({64, 8}), ints});
    EXPECT_NE(batch.find("input 1 is float32[64, 8]; the package was compiled for float32[4, 8]"), std::string::npos)
        << batch;
    EXPECT_NE(batch.find("dimension 0 is static"), std::string::npos) << batch;
    EXPECT_NE(compiledInputMismatch(inputs, {at::zeros({4, 8}), at::zeros({5, 16})}).find("another dtype"),
              std::string::npos);
    EXPECT_NE(compiledInputMismatch(inputs, {at::zeros({4, 8, 1}), ints}).find("another number of dimensions"),
              std::string::npos);
}
