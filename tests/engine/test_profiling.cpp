// SPDX-License-Identifier: Apache-2.0
// Profiling on the CPU: attribution to module path and function, statistics, baseline vs plan.
#include <kforge/benchmark.h>
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/profiling.h>
#include <kforge/speed_verdict.h>

#include "build_path.h"
#include "test_helpers.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <map>
#include <set>

using namespace kforge;
using namespace kforge::test;

namespace {

ProfileRun cpuProfile(ModelSession& session, int iterations, Plan plan = {}, bool usePlan = false)
{
    ProfileOptions options;
    options.device = "cpu";
    options.warmupIterations = 1;
    options.iterations = iterations;
    options.plan = std::move(plan);
    options.usePlan = usePlan;
    return profile(session, options);
}

} // namespace

// A call the plan's provider declines is the original's in every record and range, and the profile counts the
// declines of the measured forwards (not the warm-up's) per plan entry.
TEST(Profiling, DeclinedCallsAreAttributedToTheOriginalAndCountedPerEntry)
{
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(torch.gelu(x))"), dir.path("m.pt"));
    auto session = ModelSession::open(dir.path("m.pt").string());
    session->setInputSpecs({"float64[4,16]"}); // CpuGeluProvider's kernels take float32 and bfloat16 only
    const ProfileRun run = cpuProfile(*session, 3, planOf({entry("act", "gelu", "CpuGeluProvider")}), true);
    int geluOps = 0, geluRanges = 0;
    for (const KernelRecord& r : run.records)
        if (r.function == "gelu") {
            ++geluOps;
            EXPECT_EQ(r.provider, "original");
        }
    for (const RangeRecord& r : run.ranges)
        if (r.kind == "function" && r.name == "gelu") {
            ++geluRanges;
            EXPECT_EQ(r.provider, "original");
        }
    EXPECT_EQ(geluOps, 6);
    EXPECT_EQ(geluRanges, 6);
    ASSERT_EQ(run.declines.size(), 1u);
    EXPECT_EQ(run.declines[0].entry, 0);
    EXPECT_EQ(run.declines[0].calls, 6u); // 2 per forward x 3 measured; the warm-up's 2 are left out
    EXPECT_EQ(run.declines[0].provider, "CpuGeluProvider(approximate=none)");
    EXPECT_NE(run.declines[0].lastReason.find("dtype"), std::string::npos);
}

TEST(Profiling, CpuRecordsAreAttributedToModulesAndFunctions)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const ProfileRun run = cpuProfile(*session, 3);
    EXPECT_EQ(run.device, "cpu");
    ASSERT_FALSE(run.records.empty());
    std::map<std::string, int> functionOps;
    std::set<std::string> modules;
    for (const auto& paths : run.modules)
        modules.insert(paths.path);
    for (const KernelRecord& r : run.records) {
        EXPECT_EQ(r.kind, "cpu_op");
        EXPECT_TRUE(modules.count(r.modulePath)) << r.name << " in unknown module '" << r.modulePath << "'";
        EXPECT_GE(r.durationNs, 0);
        EXPECT_GE(r.iteration, 0);
        EXPECT_LT(r.iteration, 3);
        if (!r.function.empty()) {
            ++functionOps[r.function];
            EXPECT_EQ(r.provider, "original");
        }
    }
    // Each replaceable function call is one top-level op execution: the call counts of one forward x 3.
    EXPECT_EQ(functionOps, (std::map<std::string, int>{{"embedding", 3},
                                                       {"gelu", 6},
                                                       {"layer_norm", 15},
                                                       {"linear", 27},
                                                       {"scaled_dot_product_attention", 6},
                                                       {"softmax", 3}}));
    // The SDPA calls happen inside the attention modules, gelu inside the MLPs.
    for (const KernelRecord& r : run.records) {
        if (r.function == "scaled_dot_product_attention")
            EXPECT_TRUE(r.modulePath == "blocks.0.attn" || r.modulePath == "blocks.1.attn") << r.modulePath;
        if (r.function == "gelu")
            EXPECT_TRUE(r.modulePath == "blocks.0.mlp" || r.modulePath == "blocks.1.mlp") << r.modulePath;
    }
    // Module and function ranges for the timeline: one root range per iteration.
    const auto roots = std::count_if(run.ranges.begin(), run.ranges.end(),
                                     [](const RangeRecord& r) { return r.kind == "module" && r.name.empty(); });
    EXPECT_EQ(roots, 3);
    const auto calls =
        std::count_if(run.ranges.begin(), run.ranges.end(), [](const RangeRecord& r) { return r.kind == "function"; });
    EXPECT_EQ(calls, 3 * 20);
    EXPECT_EQ(run.outputs.size(), 1u);
    ASSERT_EQ(run.outputValues.size(), 1u);
    EXPECT_EQ(run.outputValues[0].size(), 16u * 256u);
}

// R12: a profile sees the work of the tasks a forward forks (forked_gelu.pt: the root forks its child `act`, whose
// gelu runs on an inter-op thread, and calls a gelu of its own). Both gelus are recorded in every measured forward,
// the task's in module `act` on its own thread, with a plan's provider on both. (The task's calls were missing.)
TEST(Profiling, R12_ForkedTasksAreProfiledOnTheirThreads)
{
    registerTestProviders();
    auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/forked_gelu.pt");
    session->setInputSpecs({"float32[8]"});
    for (const bool usePlan : {false, true}) {
        SCOPED_TRACE(usePlan ? "plan" : "baseline");
        const ProfileRun run = cpuProfile(*session, 3, planOf({entry("", "gelu", "TestTagGeluProvider")}), usePlan);
        std::map<std::string, int> geluOpsByModule;
        std::set<std::uint64_t> actThreads;
        for (const KernelRecord& r : run.records)
            if (r.function == "gelu") {
                ++geluOpsByModule[r.modulePath];
                EXPECT_EQ(r.provider, usePlan ? "TestTagGeluProvider" : "original") << r.modulePath;
                if (r.modulePath == "act")
                    actThreads.insert(r.thread);
            }
        EXPECT_EQ(geluOpsByModule, (std::map<std::string, int>{{"", 3}, {"act", 3}}));
        int actRanges = 0, geluRanges = 0;
        std::set<std::uint64_t> forwardThreads; // the root's range is the forward's thread's
        for (const RangeRecord& r : run.ranges) {
            actRanges += r.kind == "module" && r.name == "act";
            geluRanges += r.kind == "function" && r.name == "gelu";
            if (r.kind == "module" && r.name.empty())
                forwardThreads.insert(r.thread);
        }
        EXPECT_EQ(actRanges, 3);
        EXPECT_EQ(geluRanges, 6);
        ASSERT_EQ(forwardThreads.size(), 1u);
        ASSERT_FALSE(actThreads.empty());
        EXPECT_EQ(actThreads.count(*forwardThreads.begin()), 0u) << "the task ran on an inter-op thread";
    }
}

// Work forked inside a submodule is that submodule's in a profile (fork_in_block.pt: `block` forks a
// helper method, no module of its own, that calls gelu, and calls relu after the wait, which may resume on another
// thread): every gelu and relu record names `block` (they named the root), and `block` has one range per forward.
TEST(Profiling, R12_WorkForkedInsideAModuleIsAttributedToIt)
{
    auto session = ModelSession::open(std::string(KFORGE_TEST_DATA) + "/models/fork_in_block.pt");
    session->setInputSpecs({"float32[8]"});
    const ProfileRun run = cpuProfile(*session, 3);
    std::map<std::string, std::map<std::string, int>> modulesOf; // function -> module -> records
    for (const KernelRecord& r : run.records)
        if (r.function == "gelu" || r.function == "relu")
            ++modulesOf[r.function][r.modulePath];
    EXPECT_EQ(modulesOf["gelu"], (std::map<std::string, int>{{"block", 3}}));
    EXPECT_EQ(modulesOf["relu"], (std::map<std::string, int>{{"block", 3}}));
    int blockRanges = 0;
    for (const RangeRecord& r : run.ranges)
        blockRanges += r.kind == "module" && r.name == "block";
    EXPECT_EQ(blockRanges, 3);
}

TEST(Profiling, PlanRunAttributesProviders)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const ProfileRun run = cpuProfile(*session, 2, planOf({entry("blocks.1", "gelu", "AtenGeluProvider")}), true);
    int byProvider = 0, byOriginal = 0;
    for (const KernelRecord& r : run.records) {
        if (r.function != "gelu")
            continue;
        (r.provider == "AtenGeluProvider" ? byProvider : byOriginal)++;
        if (r.provider == "AtenGeluProvider")
            EXPECT_EQ(r.modulePath, "blocks.1.mlp");
    }
    EXPECT_EQ(byProvider, 2);
    EXPECT_EQ(byOriginal, 2);
}

TEST(Profiling, StatisticsOfKnownSamples)
{
    std::vector<KernelRecord> records;
    for (int i = 1; i <= 100; ++i) {
        KernelRecord r;
        r.name = "k";
        r.function = "gelu";
        r.modulePath = "m";
        r.durationNs = i * 1000;
        records.push_back(r);
    }
    KernelRecord other;
    other.name = "other";
    other.durationNs = 5050 * 1000; // as long as all of "k" together
    records.push_back(other);
    const auto rows = statistics(records, GroupBy::Kernel);
    ASSERT_EQ(rows.size(), 2u);
    const StatRow& k = rows[0].key == "k" ? rows[0] : rows[1];
    EXPECT_EQ(k.calls, 100);
    EXPECT_DOUBLE_EQ(k.totalUs, 5050.0);
    EXPECT_DOUBLE_EQ(k.meanUs, 50.5);
    EXPECT_DOUBLE_EQ(k.medianUs, 50.0);
    EXPECT_DOUBLE_EQ(k.p95Us, 95.0);
    EXPECT_DOUBLE_EQ(k.minUs, 1.0);
    EXPECT_DOUBLE_EQ(k.maxUs, 100.0);
    EXPECT_DOUBLE_EQ(k.share, 0.5);
    const auto byFunction = statistics(records, GroupBy::Function);
    EXPECT_EQ(byFunction.size(), 2u); // gelu and "(no function)"
}

TEST(Profiling, CompareBaselineAndPlan)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const ProfileRun baseline = cpuProfile(*session, 2);
    const ProfileRun plan = cpuProfile(*session, 2, planOf({entry("", "layer_norm", "AtenLayerNormProvider")}), true);
    const Comparison c = compare(baseline, plan);
    EXPECT_TRUE(c.outputsComparable);
    EXPECT_EQ(c.maxAbsError, 0.0); // the reference provider computes exactly the original
    const auto ln =
        std::find_if(c.byFunction.begin(), c.byFunction.end(), [](const auto& r) { return r.key == "layer_norm"; });
    ASSERT_NE(ln, c.byFunction.end());
    EXPECT_GT(ln->baselineUs, 0.0);
    EXPECT_GT(ln->planUs, 0.0);
    EXPECT_GT(c.speedup, 0.0);
    EXPECT_FALSE(c.byModule.empty());
}

namespace {

// A run of `perIteration[i]` µs of `function` in module `module` in iteration i.
ProfileRun syntheticRun(const std::string& function, const std::string& module, const std::vector<double>& perIteration)
{
    ProfileRun run;
    run.iterations = int(perIteration.size());
    for (size_t i = 0; i < perIteration.size(); ++i) {
        KernelRecord r;
        r.name = "aten::" + function;
        r.function = function;
        r.modulePath = module;
        r.iteration = int(i);
        r.durationNs = std::int64_t(perIteration[i] * 1000.0);
        run.records.push_back(r);
    }
    return run;
}

void append(ProfileRun& run, const ProfileRun& more)
{
    run.records.insert(run.records.end(), more.records.begin(), more.records.end());
}

} // namespace

// Rows are medians per iteration and judged on the per-iteration ratios: one 40x outlier moves neither the median
// nor the verdict (a mean would read +390%), a function that is the same in every round is "no detectable change",
// and a 2x faster one is "faster" through ±10% noise.
TEST(Profiling, CompareJudgesEachRowOnPairedIterations)
{
    const std::vector<double> noise{1.00, 1.10, 0.90, 1.05, 0.95, 1.08, 0.92, 1.02, 0.98, 1.04};
    const auto scaled = [](std::vector<double> v, double by) {
        for (double& x : v)
            x *= by;
        return v;
    };
    std::vector<double> otherNoise(noise.rbegin(), noise.rend()), withOutlier = scaled(otherNoise, 100.0);
    withOutlier[3] *= 40.0;
    ProfileRun baseline = syntheticRun("silu", "a", scaled(noise, 100.0));
    append(baseline, syntheticRun("gelu", "b", scaled(noise, 100.0)));
    ProfileRun plan = syntheticRun("silu", "a", withOutlier);     // unchanged, other noise, one 40x stall
    append(plan, syntheticRun("gelu", "b", scaled(noise, 50.0))); // twice as fast in every iteration

    const Comparison c = compare(baseline, plan);
    const auto row = [&](const std::string& key) {
        const auto it = std::find_if(c.byFunction.begin(), c.byFunction.end(), [&](auto& r) { return r.key == key; });
        EXPECT_NE(it, c.byFunction.end()) << key;
        return *it;
    };
    const ComparisonRow silu = row("silu"), gelu = row("gelu");
    EXPECT_NEAR(silu.baselineUs, 100.0, 2.0); // medians: the stall would put the plan's mean at 490 µs
    EXPECT_NEAR(silu.planUs, 100.0, 5.0);
    EXPECT_EQ(silu.speed.verdict, SpeedVerdict::NoDetectableChange) << describe(silu.speed);
    EXPECT_EQ(silu.speed.rounds, 10);
    EXPECT_EQ(gelu.speed.verdict, SpeedVerdict::Faster) << describe(gelu.speed);
    EXPECT_NEAR(gelu.speedup, 2.0, 1e-3); // each iteration's ratio is 2
    EXPECT_EQ(c.speed.rounds, 10);
    // By module, the same judgement.
    const auto b = std::find_if(c.byModule.begin(), c.byModule.end(), [](auto& r) { return r.key == "b"; });
    ASSERT_NE(b, c.byModule.end());
    EXPECT_EQ(b->speed.verdict, SpeedVerdict::Faster);
    // A module's subtree holds its descendants: the root's is the total.
    const auto root = std::find_if(c.bySubtree.begin(), c.bySubtree.end(), [](auto& r) { return r.key.empty(); });
    ASSERT_NE(root, c.bySubtree.end());
    EXPECT_NEAR(root->baselineUs, c.baselineTotalUs, 1e-6);
    EXPECT_EQ(c.bySubtree.size(), 3u); // (root), a, b
    // A function in the baseline only has no verdict and no speedup.
    const Comparison gone = compare(baseline, syntheticRun("silu", "a", scaled(noise, 100.0)));
    const auto g =
        std::find_if(gone.byFunction.begin(), gone.byFunction.end(), [](auto& r) { return r.key == "gelu"; });
    ASSERT_NE(g, gone.byFunction.end());
    EXPECT_EQ(g->speedup, 0.0);
    EXPECT_EQ(g->speed.verdict, SpeedVerdict::NoDetectableChange);
}

TEST(Profiling, ProgressAndCancel)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    ProfileOptions options;
    options.warmupIterations = 2;
    options.iterations = 10;
    std::vector<int> seen;
    options.progress = [&](int done, int total) {
        EXPECT_EQ(total, 12);
        seen.push_back(done);
        return done < 4; // cancel after the 2nd measured iteration
    };
    const ProfileRun run = profile(*session, options);
    EXPECT_TRUE(run.cancelled);
    EXPECT_EQ(run.iterations, 2);
    EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
}

// Results as they come: a snapshot after the first measured forward and then at most every partialEveryMs (0:
// after each), never after the last; each holds exactly the records and ranges of the forwards done so far, marked
// in progress, and the final run is whole and not marked.
TEST(Profiling, PartialRunsHoldTheMeasuredForwardsSoFar)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    ProfileOptions options;
    options.warmupIterations = 1;
    options.iterations = 4;
    options.partialEveryMs = 0;
    std::vector<ProfileRun> partials;
    options.partial = [&](const ProfileRun& run) { partials.push_back(run); };
    const ProfileRun run = profile(*session, options);
    EXPECT_FALSE(run.inProgress);
    ASSERT_EQ(run.iterations, 4);
    ASSERT_EQ(partials.size(), 3u);
    for (size_t i = 0; i < partials.size(); ++i) {
        const ProfileRun& partial = partials[i];
        EXPECT_TRUE(partial.inProgress);
        EXPECT_EQ(partial.iterations, int(i) + 1);
        EXPECT_GT(partial.wallNs, 0);
        const auto before = [&](const auto& record) { return record.iteration <= int(i); };
        EXPECT_EQ(partial.records.size(), size_t(std::count_if(run.records.begin(), run.records.end(), before)));
        EXPECT_EQ(partial.ranges.size(), size_t(std::count_if(run.ranges.begin(), run.ranges.end(), before)));
        EXPECT_TRUE(std::all_of(partial.records.begin(), partial.records.end(), before));
        EXPECT_EQ(partial.modules.size(), run.modules.size());
    }

    options.partialEveryMs = 3'600'000; // an hour: only the first forward's snapshot
    partials.clear();
    profile(*session, options);
    ASSERT_EQ(partials.size(), 1u);
    EXPECT_EQ(partials[0].iterations, 1);
}

// Input shapes, as torch.profiler's record_shapes: recorded only when asked, one list per op with a tensor's sizes
// and [] for anything else (the op's own arguments, not the interpreter's stack around them), and grouping by op
// and input shapes splits an op called on different shapes (tiny-gpt's linears: qkv, proj, fc, out).
TEST(Profiling, InputShapesAreRecordedWhenAskedAndGroupOpsByShape)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    ProfileOptions options;
    options.warmupIterations = 0;
    options.iterations = 1;
    const ProfileRun plain = profile(*session, options);
    ASSERT_FALSE(plain.records.empty());
    EXPECT_TRUE(std::all_of(plain.records.begin(), plain.records.end(),
                            [](const KernelRecord& r) { return r.inputShapes.empty(); }));
    std::set<std::string> plainKeys;
    for (const StatRow& row : statistics(plain.records, GroupBy::OpInputShapes))
        plainKeys.insert(row.key);
    EXPECT_TRUE(plainKeys.count("aten::linear")) << "without shapes an op groups by its name";

    options.recordShapes = true;
    const ProfileRun shaped = profile(*session, options);
    std::map<std::string, long long> linearCalls;
    for (const KernelRecord& r : shaped.records) {
        EXPECT_EQ(r.inputShapes.front(), '[') << r.name;
        if (r.name == "aten::embedding")
            EXPECT_EQ(r.inputShapes, "[[256, 64], [1, 16], [], [], []]");
    }
    for (const StatRow& row : statistics(shaped.records, GroupBy::OpInputShapes))
        if (row.key.rfind("aten::linear ", 0) == 0)
            linearCalls[row.key] = row.calls;
    EXPECT_EQ(linearCalls["aten::linear [[1, 16, 64], [192, 64], [192]]"], 2); // qkv, one per block
    EXPECT_EQ(linearCalls["aten::linear [[1, 16, 64], [256, 64], [256]]"], 3); // fc of each block, the head
    EXPECT_EQ(linearCalls["aten::linear [[1, 16, 256], [64, 256], [64]]"], 2); // out
    EXPECT_GE(linearCalls.size(), 4u);
}

TEST(Profiling, CudaWithoutDeviceIsAClearError)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    ProfileOptions options;
    options.device = "cuda";
    std::string why;
    try {
        profile(*session, options);
        GTEST_SKIP() << "a CUDA device is present";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("--device cpu"), std::string::npos) << e.what();
    }
}

// GPU: CUPTI traces the kernels of a CUDA forward and attributes them to modules and functions.
TEST(Profiling, CudaKernelsAreAttributed)
{
    if (!torch::cuda::is_available())
        GTEST_SKIP() << "needs a CUDA device; none is visible on this machine";
    auto session = ModelSession::open("builtin:tiny-gpt");
    ProfileOptions options;
    options.device = "cuda";
    options.warmupIterations = 2;
    options.iterations = 3;
    const ProfileRun run = profile(*session, options);
    EXPECT_EQ(run.device, "cuda");
    ASSERT_FALSE(run.records.empty());
    int kernels = 0, linearKernels = 0, inAttention = 0;
    for (const KernelRecord& r : run.records) {
        if (r.kind != "kernel")
            continue;
        ++kernels;
        EXPECT_GT(r.durationNs, 0);
        EXPECT_GE(r.device, 0);
        linearKernels += r.function == "linear";
        inAttention += r.modulePath.find(".attn") != std::string::npos;
    }
    EXPECT_GT(kernels, 0);
    EXPECT_GT(linearKernels, 0);
    EXPECT_GT(inAttention, 0);
    EXPECT_EQ(run.droppedRecords, 0u);
}

// R15 with profiling: replays of a capture are profiled, and their kernels name the captured modules
// through the graph-node map recorded at capture.
TEST(Profiling, GraphReplayKernelsNameTheCapturedModules)
{
    if (!torch::cuda::is_available())
        GTEST_SKIP() << "needs a CUDA device; none is visible on this machine";
    auto session = ModelSession::open("builtin:tiny-gpt");
    const CaptureRecord capture = session->capture();
    ASSERT_TRUE(capture.ok) << capture.error;
    ProfileOptions options;
    options.device = "cuda";
    options.warmupIterations = 1;
    options.iterations = 3;
    options.replayCapture = capture.id;
    const ProfileRun run = profile(*session, options);
    int replayed = 0, inBlocks = 0;
    for (const KernelRecord& r : run.records) {
        if (r.kind != "kernel")
            continue;
        replayed += r.graphReplay;
        inBlocks += r.modulePath.rfind("blocks.", 0) == 0;
    }
    EXPECT_GT(replayed, 0);
    EXPECT_GT(inBlocks, 0);
}

TEST(Profiling, GraphReplayNeedsCuda)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    ProfileOptions options;
    options.device = "cpu";
    options.replayCapture = "capture-1";
    EXPECT_THROW(profile(*session, options), Error);
}

// kforge bench's statistics on known samples: percentiles interpolate between closest ranks.
TEST(Benchmark, LatencyStatisticsOfKnownSamples)
{
    const LatencyStats s = latencyStats({4.0, 1.0, 3.0, 2.0, 5.0});
    EXPECT_EQ(s.forwards, 5);
    EXPECT_DOUBLE_EQ(s.minMs, 1.0);
    EXPECT_DOUBLE_EQ(s.medianMs, 3.0);
    EXPECT_DOUBLE_EQ(s.p95Ms, 4.8);
    EXPECT_DOUBLE_EQ(s.maxMs, 5.0);
    EXPECT_DOUBLE_EQ(s.meanMs, 3.0);
    EXPECT_NEAR(s.forwardsPerSecond, 1000.0 / 3.0, 1e-9);
}

// A plan whose provider changes the result: the benchmark says the outputs differ and where; one that matches
// the original agrees. Every measured round has a forward of each side.
TEST(Benchmark, ReportsWhetherThePlansOutputsAgree)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    const BenchmarkOptions options{1, 4, 0};
    const BenchmarkResult tagged = benchmarkPlan(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}), options);
    EXPECT_EQ(tagged.baselineMs.size(), 4u);
    EXPECT_EQ(tagged.planMs.size(), 4u);
    EXPECT_FALSE(tagged.outputsAgree);
    EXPECT_NE(tagged.outputsDifference.find("output"), std::string::npos) << tagged.outputsDifference;
    // Every round is judged, but for those a side stalled in (left out on a busy machine, and counted).
    EXPECT_EQ(tagged.speed.rounds + tagged.stalls.stalledIterations, 4) << describe(tagged.stalls);
    EXPECT_EQ(tagged.stalls.iterations, 4);
    EXPECT_FALSE(tagged.speed.enoughRounds()); // four rounds: no verdict

    const BenchmarkResult reference = benchmarkPlan(*session, planOf({entry("", "gelu", "AtenGeluProvider")}), options);
    EXPECT_TRUE(reference.outputsAgree) << reference.outputsDifference;
    EXPECT_EQ(reference.plan.forwards, 4);
}

// In bench: its "outputs agree" judges every output as verify does, the numbers beside the tensors
// too: a plan that changes only an int output (a count of large values) differs, and says which output.
TEST(Benchmark, AnIntOutputThePlanChangesMakesTheOutputsDiffer)
{
    registerTestProviders(); // TestTagGeluProvider: gelu(x) + 1000
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x)", "(x * 2.0, int((self.act.forward(x) > 500.0).sum()))"),
               dir.path("count.pt"));
    auto session = ModelSession::open(dir.path("count.pt").string());
    session->setInputSpecs({"float32[2,3]"});
    const BenchmarkOptions options{0, 2, 0};
    const BenchmarkResult tagged = benchmarkPlan(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}), options);
    EXPECT_FALSE(tagged.outputsAgree);
    EXPECT_NE(tagged.outputsDifference.find("output 1"), std::string::npos) << tagged.outputsDifference;
    const BenchmarkResult exact = benchmarkPlan(*session, planOf({entry("", "gelu", "AtenGeluProvider")}), options);
    EXPECT_TRUE(exact.outputsAgree) << exact.outputsDifference;
}

// A model that draws random numbers: bench judges its outputs as verify does, on forwards of their own from the same
// saved state with the draws replayed, so an exact plan's outputs agree (nothing moves) and one that changes them
// differs. (It said DIFFER for any plan on such a model, then judged against two forwards' spread.)
TEST(Benchmark, OutputsOfAModelDrawingRandomNumbersAreJudgedAsVerifyJudgesThem)
{
    registerTestProviders();
    TempDir dir;
    saveModule(twoLevelModel("torch.gelu(x)", "self.act.forward(x) + torch.rand_like(x)"), dir.path("noisy.pt"));
    auto session = ModelSession::open(dir.path("noisy.pt").string());
    session->setInputSpecs({"float32[16,16]"});
    const BenchmarkOptions options{1, 2, 0};
    const BenchmarkResult exact = benchmarkPlan(*session, planOf({entry("", "gelu", "AtenGeluProvider")}), options);
    EXPECT_TRUE(exact.outputsAgree) << exact.outputsDifference;
    EXPECT_TRUE(exact.outputsNondeterminism.empty()) << exact.outputsNondeterminism;
    const BenchmarkResult tagged = benchmarkPlan(*session, planOf({entry("", "gelu", "TestTagGeluProvider")}), options);
    EXPECT_FALSE(tagged.outputsAgree);
    EXPECT_NE(tagged.outputsDifference.find("output 0"), std::string::npos) << tagged.outputsDifference;

    auto steady = ModelSession::open("builtin:tiny-gpt");
    const BenchmarkResult deterministic =
        benchmarkPlan(*steady, planOf({entry("", "gelu", "AtenGeluProvider")}), options);
    EXPECT_TRUE(deterministic.outputsAgree) << deterministic.outputsDifference;
    EXPECT_TRUE(deterministic.outputsNondeterminism.empty()) << deterministic.outputsNondeterminism;
}

// A 20 ms provider: every plan forward pays its two gelu calls (40 ms), and the provider serves exactly the plan
// side's forwards, none of the baseline's. The verdict is "slower": a round reads the other way only when its
// baseline forward (a millisecond or two) stalls past 40 ms, and it takes six such rounds in twenty to lose it. One
// intra-op thread: on a loaded machine LibTorch's pool once stalled tiny-gpt's forwards to ~100 ms (CliBench).
TEST(Benchmark, SlowerPlanAndPartialResult)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    const long slowBefore = slowCalls();
    const BenchmarkResult slow =
        benchmarkPlan(*session, planOf({entry("", "gelu", "TestSlowGeluProvider")}), BenchmarkOptions{2, 20, 1});
    const auto rounds = [](const std::vector<double>& ms) {
        std::string text;
        for (double v : ms)
            text += std::to_string(v) + " ";
        return text;
    };
    EXPECT_GT(slow.plan.minMs, 40.0) << "two gelu calls of 20 ms each; plan ms: " << rounds(slow.planMs);
    EXPECT_EQ(slowCalls() - slowBefore, 2 * (2 + 20 + 1))
        << "two gelu calls in each plan forward, warm-ups and the outputs check's included, and none in the "
           "baseline's; baseline ms: "
        << rounds(slow.baselineMs);
    EXPECT_EQ(slow.speed.verdict, SpeedVerdict::Slower)
        << describe(slow.speed) << "; baseline ms " << rounds(slow.baselineMs) << "; plan ms " << rounds(slow.planMs);
    EXPECT_LT(slow.speed.high, 1.0);

    int calls = 0;
    const BenchmarkResult partial = benchmarkPlan(*session, planOf({entry("", "gelu", "AtenGeluProvider")}),
                                                  BenchmarkOptions{1, 10, 0}, [&](int done, int total) {
                                                      EXPECT_EQ(total, 11);
                                                      return ++calls < 3; // warm-up and two measured rounds
                                                  });
    EXPECT_TRUE(partial.stopped);
    EXPECT_EQ(partial.baselineMs.size(), 2u);
    EXPECT_EQ(partial.plan.forwards, 2);
}

// An A/A run (the same plan on both sides, BenchmarkOptions::baselinePlan): the baseline forwards run under the plan
// too, so the slow provider serves both sides' calls, and neither side is the model as it is.
TEST(Benchmark, BaselinePlanRunsTheBaselineSideUnderItsOwnPlan)
{
    registerTestProviders();
    auto session = ModelSession::open("builtin:tiny-gpt");
    const Plan slowPlan = planOf({entry("", "gelu", "TestSlowGeluProvider")});
    BenchmarkOptions options{1, 3, 0};
    options.baselinePlan = &slowPlan;
    const long slowBefore = slowCalls();
    const BenchmarkResult aa = benchmarkPlan(*session, slowPlan, options);
    EXPECT_EQ(slowCalls() - slowBefore, 2 * 2 * (1 + 3) + 2 * (3 + 1))
        << "two gelu calls per forward, both sides, and in the outputs check's 3 baseline and 1 plan forwards";
    EXPECT_GT(aa.baseline.minMs, 40.0);
    EXPECT_GT(aa.plan.minMs, 40.0);
    EXPECT_TRUE(aa.outputsAgree) << aa.outputsDifference;
    // Afterwards the model runs as it is again: no patch of either runtime is left in effect.
    const long before = slowCalls();
    session->forwardDiscardingOutputs();
    EXPECT_EQ(slowCalls(), before);
}

// Time by module per forward: self is the records whose innermost module is the module, total adds its subtree,
// share is of the root's total; calls count module ranges; the top function is the subtree's largest.
TEST(ModuleTimes, SelfTotalShareCallsAndTopFunctionOfAKnownRun)
{
    ProfileRun run;
    run.iterations = 2;
    for (const char* path : {"", "blocks", "blocks.0", "blocks.0.mlp", "head"}) {
        ModuleInfo m;
        m.path = path;
        run.modules.push_back(m);
    }
    const auto record = [&](const char* module, const char* function, std::int64_t us) {
        KernelRecord r;
        r.modulePath = module;
        r.function = function;
        r.durationNs = us * 1000;
        run.records.push_back(r);
    };
    record("", "embedding", 20);          // root's own
    record("blocks.0", "layer_norm", 40); // blocks.0's own
    record("blocks.0.mlp", "gelu", 100);  // twice in two forwards: 100 us per forward
    record("blocks.0.mlp", "gelu", 100);
    record("blocks.0.mlp", "linear", 60);
    record("head", "linear", 20);
    record("no.such.module", "", 20); // counted for the root
    for (const char* path : {"", "", "blocks.0.mlp", "blocks.0.mlp", "head", "head"}) {
        RangeRecord r;
        r.kind = "module";
        r.name = path;
        run.ranges.push_back(r);
    }
    const std::vector<ModuleTime> times = moduleTimes(run);
    ASSERT_EQ(times.size(), 5u);
    const auto& root = times[0];
    EXPECT_EQ(root.path, "");
    EXPECT_DOUBLE_EQ(root.totalUs, 180.0); // 360 us of records over 2 forwards
    EXPECT_DOUBLE_EQ(root.selfUs, 20.0);   // embedding and the unknown module's record
    EXPECT_DOUBLE_EQ(root.share, 1.0);
    EXPECT_DOUBLE_EQ(root.calls, 1.0);
    EXPECT_EQ(root.topFunction, "gelu");
    const auto& blocks0 = times[2];
    EXPECT_DOUBLE_EQ(blocks0.totalUs, 150.0);
    EXPECT_DOUBLE_EQ(blocks0.selfUs, 20.0);
    EXPECT_DOUBLE_EQ(times[1].totalUs, 150.0); // "blocks" holds only blocks.0
    EXPECT_DOUBLE_EQ(times[1].selfUs, 0.0);
    const auto& mlp = times[3];
    EXPECT_DOUBLE_EQ(mlp.totalUs, 130.0);
    EXPECT_DOUBLE_EQ(mlp.share, 130.0 / 180.0);
    EXPECT_DOUBLE_EQ(mlp.calls, 1.0);
    EXPECT_EQ(mlp.topFunction, "gelu");
    EXPECT_DOUBLE_EQ(mlp.topFunctionUs, 100.0);
    EXPECT_EQ(times[4].topFunction, "linear");
    EXPECT_DOUBLE_EQ(times[4].totalUs, 10.0);
}

// On a real profile every module's total is at least its self time and the root's is the whole forward.
TEST(ModuleTimes, ProfileOfTinyGptAddsUp)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    ProfileOptions options;
    options.warmupIterations = 1;
    options.iterations = 2;
    const ProfileRun run = profile(*session, options);
    const auto times = moduleTimes(run);
    ASSERT_EQ(times.size(), run.modules.size());
    double records = 0;
    for (const auto& r : run.records)
        records += double(r.durationNs) / 1000.0 / 2;
    EXPECT_NEAR(times[0].totalUs, records, 1e-6 * records);
    double selfSum = 0;
    for (const auto& t : times) {
        EXPECT_GE(t.totalUs + 1e-9, t.selfUs) << t.path;
        selfSum += t.selfUs;
    }
    EXPECT_NEAR(selfSum, times[0].totalUs, 1e-6 * records);
    const auto block = std::find_if(times.begin(), times.end(), [](const auto& t) { return t.path == "blocks.0"; });
    ASSERT_NE(block, times.end());
    EXPECT_GT(block->share, 0.0);
    EXPECT_LT(block->share, 1.0);
    EXPECT_DOUBLE_EQ(block->calls, 1.0);
}

// The flame graph's tree: modules by path, then the module's own time by function and op; a frame's time is its
// subtree's; children are laid out from the parent's offset by decreasing time; paths are unique.
TEST(FlameGraph, ModulesThenFunctionsThenOpsPerForward)
{
    ProfileRun run;
    run.iterations = 2;
    const auto record = [&](const char* module, const char* function, const char* op, std::int64_t us) {
        KernelRecord r;
        r.modulePath = module;
        r.function = function;
        r.name = op;
        r.durationNs = us * 1000;
        run.records.push_back(r);
    };
    record("blocks.0.mlp", "gelu", "aten::gelu", 100);
    record("blocks.0.mlp", "linear", "aten::addmm", 300);
    record("blocks.0", "", "aten::add", 40);
    record("", "embedding", "aten::embedding", 60);
    const auto frames = flameGraph(run);
    std::map<std::string, const FlameFrame*> byPath;
    for (const auto& f : frames)
        EXPECT_TRUE(byPath.emplace(f.path, &f).second) << "duplicate path " << f.path;
    ASSERT_EQ(frames.front().parent, -1);
    EXPECT_DOUBLE_EQ(frames.front().us, 250.0); // 500 us over two forwards
    const FlameFrame* mlp = byPath.at("blocks.0.mlp");
    EXPECT_EQ(mlp->kind, FlameFrame::Kind::Module);
    EXPECT_EQ(mlp->name, "mlp");
    EXPECT_EQ(mlp->depth, 3);
    EXPECT_DOUBLE_EQ(mlp->us, 200.0);
    const FlameFrame* blocks0 = byPath.at("blocks.0");
    EXPECT_DOUBLE_EQ(blocks0->us, 220.0);
    EXPECT_DOUBLE_EQ(byPath.at("blocks.0/(no function)")->us, 20.0);
    const FlameFrame* linear = byPath.at("blocks.0.mlp/linear");
    const FlameFrame* gelu = byPath.at("blocks.0.mlp/gelu");
    EXPECT_EQ(linear->kind, FlameFrame::Kind::Function);
    EXPECT_DOUBLE_EQ(linear->offsetUs, mlp->offsetUs); // the larger child first
    EXPECT_DOUBLE_EQ(gelu->offsetUs, mlp->offsetUs + 150.0);
    EXPECT_DOUBLE_EQ(gelu->calls, 0.5);
    const FlameFrame* addmm = byPath.at("blocks.0.mlp/linear/aten::addmm");
    EXPECT_EQ(addmm->kind, FlameFrame::Kind::Op);
    EXPECT_EQ(&frames[size_t(addmm->parent)], linear);
    for (const auto& f : frames)
        if (f.parent >= 0)
            EXPECT_LT(f.parent, &f - frames.data()) << "parents come first";
}

// Identical layers keep their places: child modules are laid out in the order the forward entered them (by time,
// layer3 came first and layer1 last, and they swapped from run to run), then the module's own functions by time;
// module frames carry their type for readable labels.
TEST(FlameGraph, ChildModulesInTheOrderTheForwardEnteredThem)
{
    ProfileRun run;
    run.iterations = 1;
    for (const char* path : {"", "layer1", "layer2", "layer3"}) {
        ModuleInfo m;
        m.path = path;
        m.typeName = *path ? "Sequential" : "ResNet";
        run.modules.push_back(m);
    }
    const auto record = [&](const char* module, const char* function, std::int64_t us) {
        KernelRecord r;
        r.modulePath = module;
        r.function = function;
        r.name = "aten::op";
        r.durationNs = us * 1000;
        run.records.push_back(r);
    };
    record("layer3", "conv2d", 300);
    record("layer1", "conv2d", 100);
    record("layer2", "conv2d", 200);
    record("", "linear", 500);
    record("", "relu", 50);
    const auto childrenOfRoot = [](const std::vector<FlameFrame>& frames) {
        std::vector<std::string> names;
        for (const FlameFrame& f : frames)
            if (f.parent == 0)
                names.push_back(f.name);
        return names;
    };
    // Without module ranges: the module tree's order.
    EXPECT_EQ(childrenOfRoot(flameGraph(run)),
              (std::vector<std::string>{"layer1", "layer2", "layer3", "linear", "relu"}));
    // With them: the order of first entry, whatever the tree says.
    for (const auto& [path, start] : {std::pair{"layer2", 10}, {"layer1", 20}, {"layer3", 30}})
        run.ranges.push_back({"module", path, "", start, 1, 0, 0});
    const auto frames = flameGraph(run);
    EXPECT_EQ(childrenOfRoot(frames), (std::vector<std::string>{"layer2", "layer1", "layer3", "linear", "relu"}));
    EXPECT_EQ(frames.front().typeName, "ResNet");
    for (const FlameFrame& f : frames)
        if (f.name == "layer1")
            EXPECT_EQ(f.typeName, "Sequential");
}

// Bottom-up: the frames holding time of their own, merged by name wherever they ran, each with its callers below it.
// gelu's op runs in a (4 µs) and b (3 µs): one "aten::gelu" frame of 7 µs, called by gelu, called by the two modules;
// b's own 1 µs is a frame of its own; the root keeps the total.
TEST(FlameGraph, BottomUpMergesTheSameOpAcrossModulesWithItsCallersBelow)
{
    const auto frame = [](FlameFrame::Kind kind, const char* name, const char* path, int parent, double us,
                          double calls) {
        FlameFrame f;
        f.kind = kind;
        f.name = name;
        f.path = path;
        f.parent = parent;
        f.us = us;
        f.calls = calls;
        return f;
    };
    using K = FlameFrame::Kind;
    const std::vector<FlameFrame> topDown{
        frame(K::Module, "", "", -1, 8, 1),
        frame(K::Module, "a", "a", 0, 4, 1),
        frame(K::Function, "gelu", "a/gelu", 1, 4, 1),
        frame(K::Op, "aten::gelu", "a/gelu/aten::gelu", 2, 4, 1),
        frame(K::Module, "b", "b", 0, 4, 1),
        frame(K::Function, "gelu", "b/gelu", 4, 3, 2),
        frame(K::Op, "aten::gelu", "b/gelu/aten::gelu", 5, 3, 2),
    };
    const std::vector<FlameFrame> frames = bottomUp(topDown);
    std::map<std::string, const FlameFrame*> byPath;
    for (const FlameFrame& f : frames)
        byPath[f.path] = &f;
    ASSERT_EQ(frames.size(), 6u) << "root, aten::gelu, gelu, a, b under gelu, and b on its own";
    EXPECT_EQ(frames[0].us, 8);
    ASSERT_TRUE(byPath.count("aten::gelu"));
    EXPECT_EQ(byPath["aten::gelu"]->us, 7);
    EXPECT_EQ(byPath["aten::gelu"]->calls, 3);
    EXPECT_EQ(byPath["aten::gelu"]->parent, 0);
    EXPECT_EQ(byPath["aten::gelu/gelu"]->us, 7);
    EXPECT_EQ(byPath["aten::gelu/gelu/a"]->us, 4);
    EXPECT_EQ(byPath["aten::gelu/gelu/b"]->us, 3);
    EXPECT_EQ(byPath["b"]->us, 1);
    EXPECT_EQ(byPath["b"]->parent, 0);
    // Largest first, laid out one after the other within the parent.
    EXPECT_EQ(frames[1].path, "aten::gelu");
    EXPECT_EQ(byPath["b"]->offsetUs, 7);
    EXPECT_EQ(byPath["aten::gelu/gelu/b"]->offsetUs, 4);
}
