// SPDX-License-Identifier: Apache-2.0
// ModelSession: built-in models, module tree, function inventory, inputs.
#include "build_path.h"
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/profiling.h>
#include <kforge/runtime.h>

#include "model/output_digest.h"
#include "test_helpers.h"

#include <gtest/gtest.h>
#include <ATen/Parallel.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <cmath>
#include <limits>
#include <map>
#include <thread>
#include <tuple>

using namespace kforge;

namespace {

const ModuleInfo& moduleAt(const ModelSession& s, const std::string& path)
{
    const ModuleInfo* m = s.findModule(path);
    if (!m)
        throw std::runtime_error("no module " + path);
    return *m;
}

} // namespace

TEST(ModelSession, TinyGptTreeFollowsNamedModules)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    std::vector<std::string> paths;
    for (const auto& m : s->modules())
        paths.push_back(m.path);
    const std::vector<std::string> expected{"",
                                            "embed",
                                            "blocks",
                                            "blocks.0",
                                            "blocks.0.ln1",
                                            "blocks.0.attn",
                                            "blocks.0.attn.qkv",
                                            "blocks.0.attn.proj",
                                            "blocks.0.ln2",
                                            "blocks.0.mlp",
                                            "blocks.0.mlp.fc",
                                            "blocks.0.mlp.proj",
                                            "blocks.1",
                                            "blocks.1.ln1",
                                            "blocks.1.attn",
                                            "blocks.1.attn.qkv",
                                            "blocks.1.attn.proj",
                                            "blocks.1.ln2",
                                            "blocks.1.mlp",
                                            "blocks.1.mlp.fc",
                                            "blocks.1.mlp.proj",
                                            "ln_f",
                                            "head"};
    EXPECT_EQ(paths, expected);
    EXPECT_EQ(moduleAt(*s, "blocks.0").children,
              (std::vector<std::string>{"blocks.0.ln1", "blocks.0.attn", "blocks.0.ln2", "blocks.0.mlp"}));
    EXPECT_EQ(moduleAt(*s, "blocks.0.attn.qkv").depth, 4);
}

TEST(ModelSession, TypeNamesAreReadableAndQualifiedKept)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    const ModuleInfo& block = moduleAt(*s, "blocks.1");
    EXPECT_EQ(block.typeName, "Block");
    EXPECT_NE(block.qualifiedTypeName.find("__torch__"), std::string::npos);
    EXPECT_EQ(moduleAt(*s, "").typeName, "TinyGPT");
}

TEST(ModelSession, ParametersCountedPerModuleAndSubtree)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    const ModuleInfo& qkv = moduleAt(*s, "blocks.0.attn.qkv");
    EXPECT_EQ(qkv.parameterCount, 64 * 192 + 192);
    EXPECT_EQ(qkv.parameterBytes, qkv.parameterCount * 4);
    const ModuleInfo& root = moduleAt(*s, "");
    EXPECT_EQ(root.parameterCount, 16 * 64); // pos only
    long long sum = 0;
    for (const auto& m : s->modules())
        sum += m.parameterCount;
    EXPECT_EQ(root.subtreeParameterCount, sum);
}

TEST(ModelSession, FunctionInventoryPerModule)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_EQ(moduleAt(*s, "blocks.0.attn").functions,
              (std::map<std::string, int>{{"scaled_dot_product_attention", 1}}));
    EXPECT_EQ(moduleAt(*s, "blocks.0.mlp").functions, (std::map<std::string, int>{{"gelu", 1}}));
    EXPECT_EQ(moduleAt(*s, "blocks.0.ln1").functions, (std::map<std::string, int>{{"layer_norm", 1}}));
    EXPECT_EQ(moduleAt(*s, "").functions, (std::map<std::string, int>{{"softmax", 1}}));
    const auto& all = moduleAt(*s, "").subtreeFunctions;
    EXPECT_EQ(all.at("linear"), 2 * 4 + 1);
    EXPECT_EQ(all.at("layer_norm"), 2 * 2 + 1);
    EXPECT_EQ(all.at("scaled_dot_product_attention"), 2);
}

TEST(ModelSession, ConvNetHasItsFunctions)
{
    auto s = ModelSession::open("builtin:convnet");
    const auto& all = moduleAt(*s, "").subtreeFunctions;
    for (const char* f : {"conv2d", "group_norm", "silu", "relu", "linear"})
        EXPECT_GT(all.count(f), 0u) << f;
}

TEST(ModelSession, BuiltinForwardIsDeterministic)
{
    auto a = ModelSession::open("builtin:tiny-gpt");
    auto b = ModelSession::open("builtin:tiny-gpt");
    const auto da = a->forward();
    const auto db = b->forward();
    ASSERT_EQ(da.size(), 1u);
    EXPECT_EQ(da[0].shape, (std::vector<int64_t>{1, 16, 256}));
    EXPECT_EQ(da[0].dtype, "float32");
    EXPECT_NEAR(da[0].sum, 16.0, 1e-3); // softmax rows sum to one
    EXPECT_DOUBLE_EQ(da[0].maxAbs, db[0].maxAbs);
}

// The digest is what the corpus compares with Python's t.double().sum() and t.double().abs().max(): both must agree
// bit for bit for every dtype, layout and special value an output can have.
TEST(ModelSession, OutputDigestEqualsDoubleReductionsForEveryDtypeAndLayout)
{
    at::manual_seed(7);
    const at::Tensor f = at::randn({37, 29}) * 3 - 5; // the largest |x| is negative somewhere
    at::Tensor withNan = at::randn({9});
    withNan[4] = std::numeric_limits<float>::quiet_NaN();
    at::Tensor withInf = at::randn({9});
    withInf[2] = -std::numeric_limits<float>::infinity();
    const std::vector<std::pair<std::string, at::Tensor>> cases{
        {"float32", f},
        {"transposed", f.t()},
        {"strided", f.slice(1, 0, 29, 3)},
        {"bfloat16", f.to(at::kBFloat16)},
        {"float16", f.to(at::kHalf)},
        {"float64", f.to(at::kDouble)},
        {"int64", at::randint(-100, 50, {41})},
        {"uint8", at::randint(0, 255, {41}).to(at::kByte)},
        {"bool", at::rand({23}) > 0.5},
        {"nan", withNan},
        {"inf", withInf},
        {"scalar", at::scalar_tensor(-2.5)},
    };
    for (const auto& [name, t] : cases) {
        SCOPED_TRACE(name);
        const auto digests = digestOutput(t);
        ASSERT_EQ(digests.size(), 1u);
        const at::Tensor d = t.to(at::kDouble);
        const double sum = d.sum().item<double>(), maxAbs = d.abs().max().item<double>();
        if (std::isnan(maxAbs)) {
            EXPECT_TRUE(std::isnan(digests[0].maxAbs));
        } else {
            EXPECT_EQ(digests[0].maxAbs, maxAbs);
        }
        if (std::isnan(sum))
            EXPECT_TRUE(std::isnan(digests[0].sum));
        else
            EXPECT_EQ(digests[0].sum, sum);
        EXPECT_EQ(digests[0].shape, t.sizes().vec());
        EXPECT_EQ(digests[0].device, "cpu");
    }
    // Empty tensors have a shape and no values; nested outputs are named by position and key.
    c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
    dict.insert("logits", at::ones({2}));
    const auto nested = digestOutput(c10::ivalue::Tuple::create({at::empty({0, 3}), dict}));
    ASSERT_EQ(nested.size(), 2u);
    EXPECT_EQ(nested[0].path, "0");
    EXPECT_EQ(nested[0].dtype, "float32");
    EXPECT_EQ(nested[0].sum, 0.0);
    EXPECT_EQ(nested[1].path, "1.logits");
    EXPECT_EQ(nested[1].sum, 2.0);
    EXPECT_EQ(nested[1].maxAbs, 1.0);
}

// forwardDiscardingOutputs runs the same guarded forward as forward(), errors included; forwardMany digests the
// last forward only, and that digest is forward()'s.
TEST(ModelSession, ForwardDiscardingOutputsRunsTheSameForward)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    auto s = ModelSession::open(dir.path("m.pt").string());
    EXPECT_THROW(s->forwardDiscardingOutputs(), Error); // no inputs yet
    s->setInputSpecs({"float32[3,4]"});
    EXPECT_NO_THROW(s->forwardDiscardingOutputs());
    const auto once = s->forward();
    for (const int threads : {1, 2}) {
        const auto many = s->forwardMany(3, threads);
        ASSERT_EQ(many.size(), 1u);
        EXPECT_EQ(many[0].sum, once[0].sum);
        EXPECT_EQ(many[0].maxAbs, once[0].maxAbs);
    }
    int calls = 0;
    EXPECT_TRUE(s->forwardMany(5, 1, [&](int, int) { return ++calls < 2; }).size() == 1u); // stopped after two
    EXPECT_EQ(calls, 2);
}

TEST(ModelSession, FileModelWithInputSpecs)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    auto s = ModelSession::open(dir.path("m.pt").string());
    EXPECT_FALSE(s->hasInputs());
    EXPECT_THROW(s->forward(), Error);
    s->setInputSpecs({"float32[2,3]"});
    const auto out = s->forward();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(s->forwardArgumentNames(), std::vector<std::string>{"x"});
}

TEST(ModelSession, InputsFromTorchSaveFile)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    // torch::pickle_save writes the same zip format as Python's torch.save.
    const auto bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create({torch::ones({4, 5})}));
    test::writeBytes(dir.path("in.pt"), std::string(bytes.begin(), bytes.end()));
    auto s = ModelSession::open(dir.path("m.pt").string());
    s->loadInputsFile(dir.path("in.pt").string());
    EXPECT_EQ(s->describeInputs(), std::vector<std::string>{"float32[4,5]"});
    EXPECT_DOUBLE_EQ(s->forward()[0].sum, 20.0);
}

// A pickled list is untyped (List[Any]); a forward taking List[Tensor] (torchvision's detection models) or
// Dict[str, List[Tensor]] gets it typed by its schema, as a Python call would: "Expected a value of type
// 'List[Tensor]' for argument 'images' but instead found type 'List[Any]'" before.
TEST(ModelSession, InputsFileContainersAreTypedByTheForwardsSchema)
{
    test::TempDir dir;
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module m(c10::QualifiedName("__torch__.Detector"), cu, true);
    m.define("def forward(self, images: List[Tensor], extra: Dict[str, List[Tensor]]) -> Tensor:\n"
             "    return images[0] + images[1] + extra['a'][0]\n");
    test::saveModule(m, dir.path("m.pt"));
    c10::impl::GenericList images(c10::AnyType::get());
    images.push_back(torch::ones({2, 3}));
    images.push_back(torch::ones({2, 3}));
    c10::impl::GenericList a(c10::AnyType::get());
    a.push_back(torch::ones({2, 3}));
    c10::impl::GenericDict extra(c10::StringType::get(), c10::AnyType::get());
    extra.insert("a", a);
    const auto bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create({images, extra}));
    test::writeBytes(dir.path("in.pt"), std::string(bytes.begin(), bytes.end()));
    auto s = ModelSession::open(dir.path("m.pt").string());
    s->loadInputsFile(dir.path("in.pt").string());
    EXPECT_DOUBLE_EQ(s->forward()[0].sum, 18.0);
}

// Files made as users make them (tests/data/models/make_scripted_inventory.py).
namespace {

const std::string kInventoryModels = std::string(KFORGE_TEST_DATA) + "/models/";

// Calls per function in one observed forward, by the original or a provider.
std::map<std::string, int> callsOfOneForward(ModelSession& session)
{
    auto stream = EventStream::attach();
    session.forward();
    std::vector<Event> events;
    stream->drain(events);
    std::map<std::string, int> calls;
    for (const Event& e : events)
        if (e.kind == EventKind::OriginalCall || e.kind == EventKind::ProviderCall)
            ++calls[e.function];
    return calls;
}

} // namespace

// The static inventory follows every method a forward calls, on itself and on its submodules (nn.Conv2d's
// _conv_forward, an attention's _attn) and the tasks it forks, so it equals what a forward calls; a plan with an
// entry for each function where it is called validates without a problem or a warning.
TEST(ModelSession, InventoryFollowsHelperMethodsAndForkedTasksAndEqualsTheRun)
{
    auto session = ModelSession::open(kInventoryModels + "helpers.script.pt");
    session->setInputSpecs({"float32[1,2,4,8]"});
    const std::map<std::string, int> expected{{"conv2d", 1}, {"gelu", 1}, {"linear", 3}, {"pad", 1}, {"softmax", 1}};
    EXPECT_EQ(session->modules().front().subtreeFunctions, expected);
    EXPECT_EQ(moduleAt(*session, "conv").functions, (std::map<std::string, int>{{"conv2d", 1}}));
    EXPECT_EQ(moduleAt(*session, "attn").functions, (std::map<std::string, int>{{"pad", 1}, {"softmax", 1}}));
    EXPECT_EQ(moduleAt(*session, "").functions, (std::map<std::string, int>{{"gelu", 1}})); // the forked task
    EXPECT_EQ(callsOfOneForward(*session), expected);

    Plan plan;
    for (const auto& [scope, function, provider] : {std::tuple{"conv", "conv2d", "AtenConv2dProvider"},
                                                    {"attn", "pad", "AtenPadProvider"},
                                                    {"attn", "softmax", "AtenSoftmaxProvider"},
                                                    {"", "gelu", "AtenGeluProvider"}})
        plan.entries.push_back(test::entry(scope, function, provider));
    const auto problems = validatePlan(plan, *session, "cpu");
    for (const PlanProblem& p : problems)
        ADD_FAILURE() << p.kind << ": " << p.message;
    EXPECT_TRUE(planWarnings(plan, *session, "cpu").empty());
}

// A weight computed at run time (a traced weight-normed Conv1d: aten::_convolution on the output of its
// ParametrizationList's forward) is classified by the rank of the parameter it comes from.
TEST(ModelSession, InventoryClassifiesConvolutionsOnComputedWeights)
{
    auto session = ModelSession::open(kInventoryModels + "weight_norm.trace.pt");
    session->setInputSpecs({"float32[1,2,16]"});
    EXPECT_EQ(session->modules().front().subtreeFunctions, (std::map<std::string, int>{{"conv1d", 1}}));
    EXPECT_EQ(callsOfOneForward(*session), (std::map<std::string, int>{{"conv1d", 1}}));
}

// torch.jit.trace saves a submodule's second and later calls as forward1, forward2 (diffusers' ResnetBlock2D's
// `nonlinearity`, a reused dropout, Mixtral's experts; tests/data/models/make_traced_twice.py): each is a run of that
// module in its scope, for the inventory and for the runtime, so a scoped entry serves every call.
TEST(ModelSession, TracedModulesCalledSeveralTimesAreInTheirScopeEveryTime)
{
    test::registerTestProviders();
    auto session = ModelSession::open(kInventoryModels + "traced_twice.trace.pt");
    session->setInputSpecs({"float32[2,8]"});
    using Calls = std::map<std::string, int>;
    EXPECT_EQ(moduleAt(*session, "block.act").subtreeFunctions, (Calls{{"gelu", 2}}));
    EXPECT_EQ(moduleAt(*session, "block.proj").subtreeFunctions, (Calls{{"linear", 2}}));
    EXPECT_EQ(moduleAt(*session, "act").subtreeFunctions, (Calls{{"gelu", 3}}));
    EXPECT_TRUE(moduleAt(*session, "block").functions.empty()); // nothing counted under the caller
    EXPECT_TRUE(moduleAt(*session, "").functions.empty());
    const Calls all{{"gelu", 5}, {"linear", 2}};
    EXPECT_EQ(session->modules().front().subtreeFunctions, all);
    EXPECT_EQ(callsOfOneForward(*session), all);

    const Plan plan = test::planOf({test::entry("block.act", "gelu", "TestTagGeluProvider")});
    EXPECT_TRUE(validatePlan(plan, *session, "cpu").empty());
    EXPECT_TRUE(planWarnings(plan, *session, "cpu").empty());
    KernelProviderRuntime runtime(*session, plan);
    runtime.activate();
    auto stream = EventStream::attach();
    session->forward();
    runtime.deactivate();
    std::vector<Event> events;
    stream->drain(events);
    std::map<std::pair<std::string, std::string>, int> served; // (scope, provider) -> gelu calls
    for (const Event& e : events)
        if ((e.kind == EventKind::OriginalCall || e.kind == EventKind::ProviderCall) && e.function == "gelu")
            ++served[{e.modulePath, e.provider}];
    // Calls are in the innermost hooked module (a plan scope): the root's act is none.
    const std::map<std::pair<std::string, std::string>, int> expected{{{"block.act", "TestTagGeluProvider"}, 2},
                                                                      {{"", "original"}, 3}};
    EXPECT_EQ(served, expected);

    // A profile hooks every module: each call is in its own module.
    ProfileOptions options;
    options.warmupIterations = 0;
    options.iterations = 1;
    Calls geluByModule;
    for (const KernelRecord& r : profile(*session, options).records)
        if (r.function == "gelu")
            ++geluByModule[r.modulePath];
    EXPECT_EQ(geluByModule, (Calls{{"block.act", 2}, {"act", 3}}));
}

// A forward that takes no argument (or only defaulted ones) runs without inputs, in every command.
TEST(ModelSession, AForwardWithoutArgumentsRunsWithoutInputs)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module root(c10::QualifiedName("__torch__.Constant"), cu, true);
    root.define("def forward(self, scale: float = 2.0):\n    return torch.gelu(torch.ones(3)) * scale\n");
    root.eval();
    test::TempDir dir;
    test::saveModule(root, dir.path("constant.pt"));
    auto session = ModelSession::open(dir.path("constant.pt").string());
    EXPECT_TRUE(session->hasInputs());
    const auto digests = session->forward();
    ASSERT_EQ(digests.size(), 1u);
    EXPECT_NEAR(digests[0].sum, 3 * 2 * 0.8413447, 1e-5);
}

// A Dict[int, Tensor] output names each tensor by its key, as a Dict[str, Tensor] does (they were all named "Int",
// so verify and bench compared the wrong tensors with each other).
TEST(ModelSession, IntKeyedDictOutputsAreNamedByTheirKeys)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module root(c10::QualifiedName("__torch__.IntKeys"), cu, true);
    root.define("def forward(self, x: Tensor) -> Dict[int, Tensor]:\n"
                "    return {0: torch.gelu(x), 7: x * 2.0, -3: x + 1.0}\n");
    root.eval();
    test::TempDir dir;
    test::saveModule(root, dir.path("int_keys.pt"));
    auto session = ModelSession::open(dir.path("int_keys.pt").string());
    session->setInputSpecs({"float32[2,3]"});
    const auto digests = session->forward();
    std::vector<std::string> paths;
    for (const TensorDigest& d : digests)
        paths.push_back(d.path);
    std::sort(paths.begin(), paths.end());
    EXPECT_EQ(paths, (std::vector<std::string>{"-3", "0", "7"}));
}

// A plan's model is matched by its file's digest where it has one (a renamed copy is the same model, another file
// is not, whatever its name), else by name.
TEST(ModelSession, APlanKnowsTheModelItWasMadeFor)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.gelu(x)"), dir.path("a.pt"));
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("b.pt"));
    std::filesystem::copy_file(dir.path("a.pt"), dir.path("renamed.pt"));
    Plan plan = test::planOf({test::entry("", "gelu", "AtenGeluProvider")});
    stampModel(plan, *ModelSession::open(dir.path("a.pt").string()));
    EXPECT_EQ(plan.modelName, "a.pt");
    EXPECT_EQ(plan.modelSha256.size(), 64u);
    EXPECT_EQ(otherModelOf(plan, *ModelSession::open(dir.path("renamed.pt").string())), "");
    const std::string other = otherModelOf(plan, *ModelSession::open(dir.path("b.pt").string()));
    EXPECT_EQ(other.rfind("the plan was made for model 'a.pt' (SHA-256 ", 0), 0u) << other;
    EXPECT_NE(other.find("this is 'b.pt'"), std::string::npos) << other;

    stampModel(plan, *ModelSession::open("builtin:tiny-gpt"));
    EXPECT_TRUE(plan.modelSha256.empty());
    EXPECT_EQ(otherModelOf(plan, *ModelSession::open("builtin:tiny-gpt")), "");
    EXPECT_EQ(otherModelOf(plan, *ModelSession::open("builtin:convnet")),
              "the plan was made for model 'tiny-gpt', this is 'convnet': its entries may not mean the same here");
    EXPECT_EQ(otherModelOf(Plan{}, *ModelSession::open("builtin:convnet")), ""); // a plan that names no model
}

// A tied weight (head.weight is embed.weight) counts in each module that holds it and once in the model's total, as
// Python's parameters() counts it.
TEST(ModelSession, TiedWeightsCountOnceInTotals)
{
    const auto session = ModelSession::open(kInventoryModels + "helpers.script.pt");
    EXPECT_EQ(moduleAt(*session, "embed").parameterCount, 64);
    EXPECT_EQ(moduleAt(*session, "head").parameterCount, 64);
    const std::int64_t conv = 2 * 2 + 2, proj = 64 + 8, embed = 64;
    EXPECT_EQ(session->modules().front().subtreeParameterCount, conv + proj + embed);
}

// A module whose forward only a forked task calls (forked_gelu.pt: the root forks `act` with torch.jit.fork) is
// called: an entry scoped to it is neither refused nor warned about (scope-not-called), and it serves the call.
TEST(ModelSession, ModulesReachedOnlyThroughForkedTasksAreCalled)
{
    auto session = ModelSession::open(kInventoryModels + "forked_gelu.pt");
    session->setInputSpecs({"float32[8]"});
    EXPECT_TRUE(moduleAt(*session, "act").forwardCalled);
    EXPECT_EQ(moduleAt(*session, "act").functions, (std::map<std::string, int>{{"gelu", 1}}));
    Plan plan;
    plan.entries.push_back(test::entry("act", "gelu", "AtenGeluProvider"));
    for (const PlanProblem& p : validatePlan(plan, *session, "cpu"))
        ADD_FAILURE() << p.kind << ": " << p.message;
    for (const PlanWarning& w : planWarnings(plan, *session, "cpu"))
        ADD_FAILURE() << w.text();
}

// R2: a submodule assigned to two attributes (`self.b = self.a`, called through both: make_shared_module.py) is two
// modules in every saved form, "a" and "b", as Python's named_modules() lists the loaded model: TorchScript copies it
// per attribute, torch.export records each call under the path it was made through. A scope on one path covers the
// calls made through that path, and its events name it.
TEST(ModelSession, R2_ASubmoduleAssignedTwiceIsAModulePerPathInEverySavedForm)
{
    test::registerTestProviders();
    for (const std::string file : {"shared_module.script.pt", "shared_module.pt2"}) {
        SCOPED_TRACE(file);
        auto session = ModelSession::open(kInventoryModels + file);
        session->setInputSpecs({"float32[4]"});
        std::vector<std::string> paths;
        for (const ModuleInfo& m : session->modules())
            paths.push_back(m.path);
        EXPECT_EQ(paths, (std::vector<std::string>{"", "a", "b"}));
        EXPECT_EQ(session->modules().front().subtreeFunctions, (std::map<std::string, int>{{"gelu", 2}}));

        const double originals = session->forward()[0].sum;
        // The output is a(x) + 2 b(x): a tag served in `a` adds kTagA per element, in `b` twice that.
        for (const auto& [scope, weight] : {std::pair{"a", 1}, {"b", 2}}) {
            SCOPED_TRACE(scope);
            KernelProviderRuntime runtime(*session, test::planOf({test::entry(scope, "gelu", "TestTagGeluProvider")}));
            auto stream = EventStream::attach();
            double served = 0;
            {
                const auto applied = runtime.applied();
                served = session->forward()[0].sum;
            }
            std::vector<Event> events;
            stream->drain(events);
            EXPECT_NEAR(served - originals, 4 * weight * test::kTagA, 1e-2) << "only the call through " << scope;
            int calls = 0;
            for (const Event& e : events)
                if (e.kind == EventKind::ProviderCall) {
                    ++calls;
                    EXPECT_EQ(e.modulePath, scope);
                }
            EXPECT_EQ(calls, 1);
        }
        EXPECT_TRUE(validatePlan(test::planOf({test::entry("a", "gelu", "AtenGeluProvider"),
                                               test::entry("b", "gelu", "AtenGeluProvider")}),
                                 *session, "cpu")
                        .empty());
    }
}

// R2: a submodule scripted before it is assigned to two attributes stays one object in the saved model
// (make_shared_module.py's shared_scripted_first.script.pt), listed as "a" and "b". Its hooks see one `self`: every
// call runs in the scope of its first name, an entry for either name is accepted and covers both calls, and the
// session says so (an entry for `a` was refused with "no module 'a'", and one for `b` served the calls as `b`).
TEST(ModelSession, R2_OneModuleObjectUnderTwoNamesRunsInItsFirstNamesScope)
{
    test::registerTestProviders();
    auto session = ModelSession::open(kInventoryModels + "shared_scripted_first.script.pt");
    session->setInputSpecs({"float32[4]"});
    std::vector<std::string> paths;
    for (const ModuleInfo& m : session->modules())
        paths.push_back(m.path);
    EXPECT_EQ(paths, (std::vector<std::string>{"", "a", "b"}));
    ASSERT_EQ(session->warnings().size(), 1u);
    EXPECT_NE(session->warnings()[0].find("module 'b' is module 'a' under a second name"), std::string::npos)
        << session->warnings()[0];

    const double originals = session->forward()[0].sum;
    for (const std::string scope : {"a", "b"}) {
        SCOPED_TRACE(scope);
        const Plan plan = test::planOf({test::entry(scope, "gelu", "TestTagGeluProvider")});
        EXPECT_TRUE(validatePlan(plan, *session, "cpu").empty());
        KernelProviderRuntime runtime(*session, plan);
        auto stream = EventStream::attach();
        double served = 0;
        {
            const auto applied = runtime.applied();
            served = session->forward()[0].sum;
        }
        std::vector<Event> events;
        stream->drain(events);
        // a(x) + 2 b(x), both calls served: 3 tags per element.
        EXPECT_NEAR(served - originals, 4 * 3 * test::kTagA, 1e-2);
        int calls = 0;
        for (const Event& e : events)
            if (e.kind == EventKind::ProviderCall) {
                ++calls;
                EXPECT_EQ(e.modulePath, "a");
            }
        EXPECT_EQ(calls, 2);
    }
}

// OpenOptions::intraOpThreads holds for forwards on any thread: a thread that has run an OpenMP region keeps a
// count of its own, so a model opened elsewhere with one intra-op thread ran its forwards there (the desktop's worker
// thread) with that thread's count. A profile made on such a thread records what its forwards ran with.
TEST(ModelSession, IntraOpThreadsHoldOnTheThreadOfEveryForward)
{
    const int before = intraOpThreadCount();
    std::promise<void> opened;
    std::promise<void> workerReady;
    std::unique_ptr<ModelSession> session;
    int ranWith = 0;
    std::thread worker([&] {
        at::parallel_for(0, 1 << 16, 1, [](std::int64_t, std::int64_t) {}); // this thread's own OpenMP state
        workerReady.set_value();
        opened.get_future().wait();
        ProfileOptions options;
        options.warmupIterations = 0;
        options.iterations = 1;
        ranWith = profile(*session, options).intraOpThreads;
    });
    workerReady.get_future().wait();
    session = ModelSession::open("builtin:tiny-gpt", {false, GraphExecutor::Direct, "", false, 1});
    opened.set_value();
    worker.join();
    EXPECT_EQ(ranWith, 1);
    at::set_num_threads(before);
}

// A traced module called twice with a flag that takes another branch (`self.blk(x, False) + self.blk(x, True)`,
// tests/data/models/make_traced_branches.py): the tracer records forward (relu) and forward1 (gelu). The inventory
// reads every forward method and counts each by the calls made of it: one relu and one gelu per forward (it read
// `forward` alone: "relu x2", and plan validate said gelu was called nowhere while run served it).
TEST(ModelSession, EveryForwardMethodOfATracedModuleIsInventoried)
{
    auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/traced_branches.trace.pt");
    const ModuleInfo& blk = moduleAt(*session, "blk");
    EXPECT_EQ(blk.functions, (std::map<std::string, int>{{"gelu", 1}, {"relu", 1}}));
    EXPECT_EQ(blk.subtreeFunctions, (std::map<std::string, int>{{"gelu", 1}, {"relu", 1}}));
    EXPECT_EQ(moduleAt(*session, "").subtreeFunctions, (std::map<std::string, int>{{"gelu", 1}, {"relu", 1}}));
    session->setInputSpecs({"float32[2,8]"});
    EXPECT_EQ(session->forward().size(), 1u);
}
