// SPDX-License-Identifier: Apache-2.0
// Kernel generators in make_plan: results of every kind are reported and never stop the optimisation;
// the built-in CPU autotuner emits settings a saved plan replays without generating again.
#include "build_path.h"
#include <kforge/error.h>
#include <kforge/generator_sdk.h>
#include <kforge/model_session.h>
#include <kforge/optimizer.h>
#include <kforge/plan.h>
#include <kforge/plugins.h>
#include <kforge/runtime.h>

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstdio>
#include <map>

using namespace kforge;

namespace {

const CandidateReport* generatedBy(const OptimizeResult& result, const std::string& generator,
                                   const std::string& function)
{
    for (const CandidateReport& c : result.candidates)
        if (c.generator == generator && c.function == function)
            return &c;
    return nullptr;
}

// The candidate that judges `c`: itself, or the provided one it repeats (CandidateReport::sameAs).
const CandidateReport* judgedAs(const OptimizeResult& result, const CandidateReport& c)
{
    if (c.sameAs.empty())
        return &c;
    for (const CandidateReport& o : result.candidates)
        if (o.function == c.function && o.generator.empty() && o.provider == c.sameAs)
            return &o;
    return nullptr;
}

OptimizeOptions quick(std::vector<std::string> generators)
{
    OptimizeOptions options;
    options.warmupIterations = 1;
    options.iterations = 1;
    options.benchmarkRounds = 9; // a "faster" verdict needs at least 6 rounds
    options.generators = std::move(generators);
    return options;
}

// A plan holding only `settings` for `function`, saved and read back, runs a forward with it in effect.
void expectReplaysFromThePlanAlone(ModelSession& session, const std::string& function, const nlohmann::json& settings)
{
    Plan plan;
    PlanEntry e;
    e.function = function;
    e.provider = settings;
    plan.entries.push_back(e);
    const Plan reread = parsePlan(toJson(plan), "replayed plan");
    KernelProviderRuntime runtime(session, reread);
    runtime.activate();
    EXPECT_NO_THROW(session.forward()) << function << " " << settings.dump();
    runtime.deactivate();
}

} // namespace

TEST(Generators, EveryEndingIsReportedAndNoneStopsTheOptimisation)
{
    const PluginInfo plugin = loadProviderPlugin(KFORGE_FAKE_GENERATORS_PLUGIN);
    EXPECT_EQ(plugin.generators.size(), 5u);
    EXPECT_EQ(plugin.providerTypes, std::vector<std::string>{"FakeZeroGeluProvider"});
    auto session = ModelSession::open("builtin:tiny-gpt");
    OptimizeOptions options = quick({"FakeSucceeding", "FakeFailing", "FakeThrowing", "FakeHanging", "FakeIncorrect"});
    options.generationTimeoutSeconds = 0.5;
    const OptimizeResult result = makePlan(*session, options);

    // What a generator makes is judged like a provider; when it is a provider already tried with the same settings
    // (these two fakes make registered providers as they are), it says so and that provider's row is its judgement.
    const auto provided = [&](const std::string& name) {
        const auto it = std::find_if(result.candidates.begin(), result.candidates.end(), [&](const CandidateReport& c) {
            return c.function == "gelu" && c.generator.empty() && c.provider == name;
        });
        return it == result.candidates.end() ? nullptr : &*it;
    };
    const auto* succeeding = generatedBy(result, "FakeSucceeding", "gelu");
    ASSERT_TRUE(succeeding);
    EXPECT_EQ(succeeding->settings, (nlohmann::json{{"type", "CpuGeluProvider"}, {"approximate", "none"}}));
    EXPECT_EQ(succeeding->generation, "the exact GELU kernel");
    EXPECT_EQ(succeeding->sameAs, "CpuGeluProvider(approximate=none)");
    EXPECT_EQ(succeeding->rejected, "the same provider and settings as CpuGeluProvider(approximate=none) (measured "
                                    "once, above)");
    const auto* exact = provided("CpuGeluProvider(approximate=none)");
    ASSERT_TRUE(exact);
    EXPECT_TRUE(exact->eligible && exact->correctness.passed) << exact->correctness.reason;

    const auto reasonOf = [&](const std::string& generator) {
        const auto* c = generatedBy(result, generator, "gelu");
        return c ? c->rejected : std::string("(no candidate)");
    };
    EXPECT_EQ(reasonOf("FakeFailing"), "not eligible: generation failed: no kernel for these shapes");
    EXPECT_EQ(reasonOf("FakeThrowing"), "not eligible: generator threw: planted submit failure");
    EXPECT_EQ(reasonOf("FakeHanging"), "not eligible: generation timed out after 0.5 s");
    EXPECT_EQ(reasonOf("FakeIncorrect"),
              "the same provider and settings as FakeZeroGeluProvider (measured once, above)");
    ASSERT_TRUE(provided("FakeZeroGeluProvider"));
    EXPECT_EQ(provided("FakeZeroGeluProvider")->rejected.rfind("incorrect: ", 0), 0u)
        << provided("FakeZeroGeluProvider")->rejected;
    // The other functions were still tried: the generators' troubles stay with their own candidates.
    EXPECT_TRUE(std::any_of(result.functions.begin(), result.functions.end(),
                            [](const FunctionReport& f) { return f.function == "layer_norm" && f.tried; }));
    for (const PlanEntry& e : result.plan.entries)
        EXPECT_NE(e.provider.value("type", ""), "FakeZeroGeluProvider");
    // A plugin's generator names are taken once.
    EXPECT_THROW(loadProviderPlugin(KFORGE_FAKE_GENERATORS_PLUGIN), Error);
}

TEST(Generators, CpuAutotunerEmitsSettingsThatReplayFromThePlanAlone)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const OptimizeResult result = makePlan(*session, quick({"CpuAutotuner"}));
    std::map<std::string, std::string> typeOf{{"gelu", "CpuGeluProvider"},
                                              {"layer_norm", "CpuFusedLayerNormProvider"},
                                              {"softmax", "CpuOnlineSoftmaxProvider"}};
    for (const auto& [function, type] : typeOf) {
        const auto* c = generatedBy(result, "CpuAutotuner", function);
        ASSERT_TRUE(c) << function;
        const CandidateReport* judged = judgedAs(result, *c); // the defaults may be what it found best
        ASSERT_TRUE(judged) << function << ": " << c->sameAs;
        EXPECT_TRUE(judged->eligible && judged->correctness.passed) << function << ": " << judged->correctness.reason;
        EXPECT_EQ(c->settings.value("type", ""), type);
        EXPECT_NE(c->generation.find("configurations correct"), std::string::npos) << c->generation;
        // The settings alone make the provider again: a plan replays it without generating.
        expectReplaysFromThePlanAlone(*session, function, c->settings);
    }
}

// The CUDA autotuner is offered for CUDA models only: a CPU optimisation never submits to it.
TEST(Generators, CudaAutotunerIsOfferedForCudaModelsOnly)
{
    const auto generators = GeneratorRegistry::instance().list();
    const auto cuda = std::find_if(generators.begin(), generators.end(),
                                   [](const KernelGeneratorInfo& g) { return g.name == "CudaAutotuner"; });
    if (cuda == generators.end())
        GTEST_SKIP() << "the engine was built without the CUDA toolkit: no CudaAutotuner";
    EXPECT_EQ(cuda->create()->devices(), std::vector<std::string>{"cuda"});
    auto session = ModelSession::open("builtin:tiny-gpt");
    const OptimizeResult result = makePlan(*session, quick({"CudaAutotuner"}));
    for (const CandidateReport& c : result.candidates)
        EXPECT_NE(c.generator, "CudaAutotuner") << c.function;
}

// On a GPU: the CUDA autotuner compiles and times launch variants of the Cuda*Provider kernels; its settings replay
// from a saved plan (the kernels come from NVRTC or the on-disk cache, not from tuning again).
TEST(Generators, CudaAutotunerEmitsSettingsThatReplayFromThePlanAlone)
{
    if (!torch::cuda::is_available())
        GTEST_SKIP() << "needs a CUDA device; none is visible on this machine";
    auto session = ModelSession::open("builtin:tiny-gpt");
    session->setDevice("cuda");
    OptimizeOptions options = quick({"CudaAutotuner"});
    options.device = "cuda";
    options.generationTimeoutSeconds = 300;
    const OptimizeResult result = makePlan(*session, options);
    const std::map<std::string, std::string> typeOf{
        {"gelu", "CudaGeluProvider"}, {"layer_norm", "CudaLayerNormProvider"}, {"softmax", "CudaSoftmaxProvider"}};
    for (const auto& [function, type] : typeOf) {
        const auto* c = generatedBy(result, "CudaAutotuner", function);
        ASSERT_TRUE(c) << function;
        EXPECT_TRUE(c->eligible && c->correctness.passed)
            << function << ": " << c->correctness.reason << " " << c->generation;
        EXPECT_EQ(c->settings.value("type", ""), type);
        EXPECT_NE(c->generation.find("configurations correct"), std::string::npos) << c->generation;
        std::printf("  %s: %s -> %s\n", function.c_str(), c->generation.c_str(),
                    c->kept ? "kept" : c->rejected.c_str());
        expectReplaysFromThePlanAlone(*session, function, c->settings);
    }
}
