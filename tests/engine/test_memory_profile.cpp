// SPDX-License-Identifier: Apache-2.0
// Memory on the CPU: every allocation and free of the measured forwards, attributed to the module and function call
// open when it happened (ProfileOptions::recordMemory, summarizeMemory).
#include <kforge/memory_profile.h>
#include <kforge/model_session.h>
#include <kforge/profile_export.h>
#include <kforge/profiling.h>

#include "test_helpers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

using namespace kforge;

namespace {

// One warm-up and `iterations` measured CPU forwards, memory recorded or not.
ProfileOptions memoryOptions(bool recordMemory = true, int iterations = 2)
{
    ProfileOptions options;
    options.device = "cpu";
    options.warmupIterations = 1;
    options.iterations = iterations;
    options.recordMemory = recordMemory;
    return options;
}

ProfileRun memoryProfile(ModelSession& session, bool recordMemory)
{
    return profile(session, memoryOptions(recordMemory, 3));
}

const ModuleMemory& moduleOf(const MemorySummary& summary, const std::string& path)
{
    const auto it = std::find_if(summary.modules.begin(), summary.modules.end(),
                                 [&path](const ModuleMemory& m) { return m.path == path; });
    if (it == summary.modules.end())
        throw std::runtime_error("no memory row for '" + path + "'");
    return *it;
}

// A gelu module `first` on a [64, 4096] float32 input (1 MiB tensors), its result multiplied by 2; the test providers
// registered (TestWorkspaceGeluProvider).
constexpr std::int64_t tensorBytes = 64 * 4096 * 4;

std::unique_ptr<ModelSession> geluTimesTwo(const test::TempDir& dir)
{
    test::registerTestProviders();
    return test::geluModules(dir, {"first"},
                             "def forward(self, x: Tensor) -> Tensor:\n    return self.first.forward(x) * 2.0\n",
                             {"float32[64,4096]"});
}

} // namespace

// tiny-gpt's qkv linear makes one [1, 16, 192] float32 output per forward (12 KiB) and its head one [1, 16, 256]
// (16 KiB): each is that module's one allocation, a block holds its children's, the root everything, and the
// forward's peak is above zero in a module that allocated. Without recordMemory nothing is recorded.
TEST(MemoryProfile, AllocationsAreAttributedToTheModuleThatMadeThem)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    EXPECT_TRUE(memoryProfile(*session, false).memory.empty());

    const ProfileRun run = memoryProfile(*session, true);
    ASSERT_FALSE(run.memory.empty());
    const MemorySummary summary = summarizeMemory(run);
    ASSERT_TRUE(summary.recorded);
    const ModuleMemory& qkv = moduleOf(summary, "blocks.0.attn.qkv");
    EXPECT_DOUBLE_EQ(qkv.allocatedBytes, 1 * 16 * 192 * 4.0);
    EXPECT_DOUBLE_EQ(qkv.allocations, 1.0);
    EXPECT_DOUBLE_EQ(moduleOf(summary, "head").allocatedBytes, 1 * 16 * 256 * 4.0);
    const ModuleMemory& block = moduleOf(summary, "blocks.0");
    EXPECT_GE(block.allocatedBytes, qkv.allocatedBytes + moduleOf(summary, "blocks.0.mlp").allocatedBytes);
    const ModuleMemory& root = summary.modules.front();
    EXPECT_EQ(root.path, "");
    EXPECT_GE(root.allocatedBytes, block.allocatedBytes + moduleOf(summary, "blocks.1").allocatedBytes);
    EXPECT_GT(summary.peakBytes, 0);
    EXPECT_GE(root.peakBytes, summary.peakBytes);
    EXPECT_GT(moduleOf(summary, summary.peakModule).allocatedBytes, 0.0);
    for (const MemoryRecord& event : run.memory) {
        EXPECT_GE(event.iteration, 0);
        EXPECT_LT(event.iteration, run.iterations);
        EXPECT_EQ(event.device, "cpu");
    }
}

// A linear's output is allocated inside the linear function call: its function is named with it.
TEST(MemoryProfile, AllocationsNameTheFunctionCallOpenAtTheTime)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const ProfileRun run = memoryProfile(*session, true);
    const auto inQkv = std::find_if(run.memory.begin(), run.memory.end(), [](const MemoryRecord& event) {
        return event.modulePath == "blocks.0.attn.qkv" && event.bytes > 0;
    });
    ASSERT_NE(inQkv, run.memory.end());
    EXPECT_EQ(inQkv->function, "linear");
}

// A .kfprof keeps the allocations (a table of their own, which older readers skip): the file read back summarises as
// the run did, and a run without them writes no such table.
TEST(MemoryProfile, SavedRunsKeepTheirAllocations)
{
    kforge::test::TempDir dir;
    auto session = ModelSession::open("builtin:tiny-gpt");
    const ProfileRun run = memoryProfile(*session, true);
    saveProfile(run, dir.path("m.kfprof").string());
    const std::vector<SavedRun> saved = loadProfiles(dir.path("m.kfprof").string());
    ASSERT_EQ(saved.size(), 1u);
    ASSERT_EQ(saved[0].run.memory.size(), run.memory.size());
    for (size_t i = 0; i < run.memory.size(); ++i) {
        EXPECT_EQ(saved[0].run.memory[i].bytes, run.memory[i].bytes);
        EXPECT_EQ(saved[0].run.memory[i].modulePath, run.memory[i].modulePath);
        EXPECT_EQ(saved[0].run.memory[i].function, run.memory[i].function);
        EXPECT_EQ(saved[0].run.memory[i].iteration, run.memory[i].iteration);
    }
    EXPECT_EQ(summarizeMemory(saved[0].run).peakBytes, summarizeMemory(run).peakBytes);
    EXPECT_EQ(summarizeMemory(saved[0].run).peakModule, summarizeMemory(run).peakModule);

    saveProfile(memoryProfile(*session, false), dir.path("plain.kfprof").string());
    std::ifstream file(dir.path("plain.kfprof"));
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("\"memory\""), std::string::npos);
    EXPECT_TRUE(loadProfiles(dir.path("plain.kfprof").string())[0].run.memory.empty());
}

// verify, bench and optimize's budget read the forward's peak without and with a plan: on a model of two [64, 4096]
// float32 results (1 MiB each, both live at the multiplication), a provider with an 8 MiB workspace peaks in its own
// call, at its workspace and its output.
TEST(MemoryProfile, APlansPeakChangeIsItsProvidersWorkspace)
{
    test::TempDir dir;
    auto session = geluTimesTwo(dir);
    const PeakMemoryChange change =
        measurePeakChange(*session, test::planOf({test::entry("", "gelu", "TestWorkspaceGeluProvider")}), "cpu");
    EXPECT_GE(change.baselineBytes, 2 * tensorBytes); // and the few bytes of the scalar multiplied by
    EXPECT_LT(change.baselineBytes, 2 * tensorBytes + 64);
    EXPECT_EQ(change.planBytes, test::kWorkspaceGeluBytes + tensorBytes);
    EXPECT_EQ(change.planModule, "first");
    EXPECT_NEAR(change.percent(), (8.0 + 1.0 - 2.0) / 2.0 * 100.0, 0.01);
    EXPECT_EQ(describePeakChange(change), "2.00 MiB -> 9.00 MiB (+350.0%)");
}

// The Chrome trace carries the live bytes as a counter track (Perfetto draws "C" events as one): a step per allocation
// and free, ending at the run's net bytes, on the clock of the module ranges (a step made inside a module falls inside
// one of that module's ranges).
TEST(MemoryProfile, TheChromeTraceHasALiveBytesCounterOnTheRangesClock)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const ProfileRun run = memoryProfile(*session, true);
    ASSERT_FALSE(run.memory.empty());
    std::ostringstream out;
    writeChromeTrace(run, out);
    const nlohmann::json trace = nlohmann::json::parse(out.str());
    std::vector<nlohmann::json> counters;
    for (const nlohmann::json& event : trace.at("traceEvents"))
        if (event.value("ph", "") == "C")
            counters.push_back(event);
    ASSERT_EQ(counters.size(), run.memory.size());
    std::int64_t net = 0;
    for (const MemoryRecord& event : run.memory)
        net += event.bytes;
    EXPECT_EQ(counters.back().at("name"), "live bytes");
    EXPECT_EQ(counters.back().at("args").at("cpu").get<std::int64_t>(), net);
    int insideModules = 0;
    for (size_t i = 0; i < counters.size(); ++i) {
        const MemoryRecord& event = run.memory[i];
        if (event.modulePath.empty())
            continue;
        const double ts = counters[i].at("ts").get<double>();
        EXPECT_TRUE(std::any_of(run.ranges.begin(), run.ranges.end(),
                                [&](const RangeRecord& r) {
                                    return r.kind == "module" && r.name == event.modulePath &&
                                           ts >= double(r.startNs) / 1e3 - 1e-3 &&
                                           ts <= double(r.startNs + r.durationNs) / 1e3 + 1e-3;
                                }))
            << "a step in " << event.modulePath << " at " << ts << " us outside its ranges";
        ++insideModules;
    }
    EXPECT_GT(insideModules, 0);
}

// The peak decomposed: at the peak of a forward whose provider takes an 8 MiB workspace, what is alive is that
// workspace and the provider's 1 MiB output, both allocated in the gelu call of `first`; without the plan the peak is
// the gelu output and the product beside it, and the holders' bytes sum to the peak.
TEST(MemoryProfile, ThePeakIsDecomposedIntoWhatWasAliveByWhereItWasAllocated)
{
    test::TempDir dir;
    auto session = geluTimesTwo(dir);
    ProfileOptions options = memoryOptions();
    const MemorySummary baseline = summarizeMemory(profile(*session, options));
    std::int64_t sum = 0;
    for (const PeakHolder& h : baseline.aliveAtPeak)
        sum += h.bytes;
    EXPECT_EQ(sum, baseline.peakBytes);
    const auto geluOutput =
        std::find_if(baseline.aliveAtPeak.begin(), baseline.aliveAtPeak.end(),
                     [](const PeakHolder& h) { return h.module == "first" && h.function == "gelu"; });
    ASSERT_NE(geluOutput, baseline.aliveAtPeak.end());
    EXPECT_EQ(geluOutput->bytes, tensorBytes);
    EXPECT_EQ(geluOutput->allocations, 1);

    options.plan = test::planOf({test::entry("", "gelu", "TestWorkspaceGeluProvider")});
    options.usePlan = true;
    const MemorySummary plan = summarizeMemory(profile(*session, options));
    ASSERT_EQ(plan.aliveAtPeak.size(), 1u);
    EXPECT_EQ(plan.aliveAtPeak[0].module, "first");
    EXPECT_EQ(plan.aliveAtPeak[0].function, "gelu");
    EXPECT_EQ(plan.aliveAtPeak[0].bytes, test::kWorkspaceGeluBytes + tensorBytes);
    EXPECT_EQ(plan.aliveAtPeak[0].allocations, 2);
    EXPECT_EQ(plan.peakBytes, test::kWorkspaceGeluBytes + tensorBytes);
}

// A CUDA run's figures are of its device: the host allocations recorded beside them (inputs, digests) are left out of
// its modules, its peak and what was alive at it. Made by construction (no GPU needed).
TEST(MemoryProfile, ACudaRunCountsItsDeviceMemoryOnly)
{
    ProfileRun run;
    run.device = "cuda";
    run.iterations = 1;
    const auto event = [](std::int64_t bytes, const char* device, std::uint64_t address) {
        MemoryRecord e;
        e.bytes = bytes;
        e.device = device;
        e.modulePath = "block";
        e.address = address;
        return e;
    };
    run.memory = {event(4096, "cuda:0", 1), event(1 << 20, "cpu", 2), event(8192, "cuda:0", 3),
                  event(-4096, "cuda:0", 1), event(-(1 << 20), "cpu", 2)};
    const MemorySummary summary = summarizeMemory(run);
    EXPECT_EQ(summary.peakBytes, 4096 + 8192);
    ASSERT_FALSE(summary.modules.empty());
    EXPECT_DOUBLE_EQ(summary.modules.front().allocatedBytes, 4096.0 + 8192.0);
    std::int64_t alive = 0;
    for (const PeakHolder& h : summary.aliveAtPeak)
        alive += h.bytes;
    EXPECT_EQ(alive, 4096 + 8192);
}

// The memory flame graph lays out allocations as the time flame graph lays out time: the root holds every byte
// allocated per forward, tiny-gpt's qkv linear call its 12 KiB output in one allocation.
TEST(MemoryProfile, TheMemoryFlameGraphsWidthsAreBytesAllocatedPerForward)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    EXPECT_TRUE(memoryFlameGraph(memoryProfile(*session, false)).empty());
    const ProfileRun run = memoryProfile(*session, true);
    const std::vector<FlameFrame> frames = memoryFlameGraph(run);
    ASSERT_FALSE(frames.empty());
    EXPECT_NEAR(frames.front().us, summarizeMemory(run).modules.front().allocatedBytes, 1e-3); // summed in µs

    const auto qkv = std::find_if(frames.begin(), frames.end(),
                                  [](const FlameFrame& f) { return f.path == "blocks.0.attn.qkv/linear"; });
    ASSERT_NE(qkv, frames.end());
    EXPECT_NEAR(qkv->us, 1 * 16 * 192 * 4.0, 1e-3);
    EXPECT_DOUBLE_EQ(qkv->calls, 1.0);
}

// The timeline's memory lane: live bytes after each allocation and free, in time order, restarting at each forward;
// its peak is the forward's peak exactly (the provider's 8 MiB workspace and the gelu output alive together), and a
// CUDA run's series holds its device's steps only.
TEST(MemoryProfile, LiveBytesOverTimePeakAtTheForwardsPeak)
{
    test::TempDir dir;
    auto session = geluTimesTwo(dir);
    ProfileOptions options = memoryOptions();
    options.plan = test::planOf({test::entry("", "gelu", "TestWorkspaceGeluProvider")});
    options.usePlan = true;
    const ProfileRun run = profile(*session, options);
    const LiveBytesSeries series = liveBytesOverTime(run);
    ASSERT_EQ(series.steps.size(), run.memory.size());
    ASSERT_GE(series.peak, 0);
    EXPECT_EQ(series.steps[size_t(series.peak)].liveBytes, test::kWorkspaceGeluBytes + tensorBytes);
    EXPECT_EQ(series.steps[size_t(series.peak)].liveBytes, summarizeMemory(run).peakBytes);
    EXPECT_TRUE(std::is_sorted(series.steps.begin(), series.steps.end(),
                               [](const LiveBytesStep& a, const LiveBytesStep& b) { return a.timeNs < b.timeNs; }));
    for (const LiveBytesStep& step : series.steps)
        EXPECT_LE(step.liveBytes, series.steps[size_t(series.peak)].liveBytes);

    ProfileRun cuda;
    cuda.device = "cuda";
    const auto event = [](std::int64_t timeNs, std::int64_t bytes, const char* device, int iteration) {
        MemoryRecord e;
        e.timeNs = timeNs;
        e.bytes = bytes;
        e.device = device;
        e.iteration = iteration;
        return e;
    };
    cuda.memory = {event(10, 4096, "cuda:0", 0), event(20, 1 << 20, "cpu", 0), event(30, -4096, "cuda:0", 0),
                   event(50, 512, "cuda:0", 1), event(40, 8192, "cuda:0", 1)}; // a later thread's record first
    const LiveBytesSeries device = liveBytesOverTime(cuda);
    ASSERT_EQ(device.steps.size(), 4u);
    EXPECT_EQ(device.steps[0].liveBytes, 4096);
    EXPECT_EQ(device.steps[1].liveBytes, 0);
    EXPECT_EQ(device.steps[2].timeNs, 40); // in time order, each keeping its running sum
    EXPECT_EQ(device.steps[2].liveBytes, 512 + 8192);
    EXPECT_EQ(device.steps[3].liveBytes, 512);
    EXPECT_EQ(device.peak, 2);
    EXPECT_TRUE(liveBytesOverTime(ProfileRun{}).steps.empty());
    EXPECT_EQ(liveBytesOverTime(ProfileRun{}).peak, -1);
}

// A CUDA run's driver-level records (CUPTI's memory records, MemoryRecord::driver) are kept apart: the caching
// allocator's figures, peak and snapshot leave them out (its segments would count twice), and the summary gives them
// per module on their own. Made by construction (no GPU needed).
TEST(MemoryProfile, TheDriversAllocationsAreSummarisedApartFromTheCachingAllocators)
{
    ProfileRun run;
    run.device = "cuda";
    run.iterations = 1;
    const auto event = [](std::int64_t bytes, const char* module, bool driver, std::uint64_t address) {
        MemoryRecord e;
        e.bytes = bytes;
        e.device = "cuda:0";
        e.modulePath = module;
        e.driver = driver;
        e.address = address;
        return e;
    };
    run.memory = {event(2 << 20, "block", true, 1),     // the caching allocator's 2 MiB segment
                  event(4096, "block", false, 1),       // the tensor it serves
                  event(32 << 20, "gemm", true, 2),     // a cuBLAS workspace, outside the caching allocator
                  event(-(32 << 20), "gemm", true, 2)}; // freed
    const MemorySummary summary = summarizeMemory(run);
    EXPECT_EQ(summary.peakBytes, 4096);
    ASSERT_FALSE(summary.modules.empty());
    EXPECT_DOUBLE_EQ(summary.modules.front().allocatedBytes, 4096.0);
    ASSERT_EQ(summary.driverModules.size(), 3u); // root, gemm, block
    EXPECT_EQ(summary.driverModules.front().path, "");
    EXPECT_DOUBLE_EQ(summary.driverModules.front().allocatedBytes, double((2 << 20) + (32 << 20)));
    EXPECT_DOUBLE_EQ(summary.driverModules.front().freedBytes, double(32 << 20));
    EXPECT_EQ(summary.driverPeakBytes, (2 << 20) + (32 << 20));
    EXPECT_EQ(liveBytesOverTime(run).steps.size(), 1u); // the timeline's lane is the caching allocator's too
}

// Memory per function call and provider: gelu's calls allocate its 1 MiB output under the original; under
// TestWorkspaceGeluProvider its 8 MiB workspace beside it, and the most live inside one call is both, exactly.
TEST(MemoryProfile, EachFunctionAndProviderHasItsAllocationsAndItsPeakInACall)
{
    test::TempDir dir;
    auto session = geluTimesTwo(dir);
    ProfileOptions options = memoryOptions();
    const auto rowOf = [](const MemorySummary& summary, const std::string& function) -> const FunctionMemory& {
        const auto it = std::find_if(summary.functions.begin(), summary.functions.end(),
                                     [&](const FunctionMemory& f) { return f.function == function; });
        if (it == summary.functions.end())
            throw std::runtime_error("no memory row for " + function);
        return *it;
    };
    const FunctionMemory original = rowOf(summarizeMemory(profile(*session, options)), "gelu");
    EXPECT_EQ(original.provider, "original");
    EXPECT_DOUBLE_EQ(original.calls, 1.0);
    EXPECT_DOUBLE_EQ(original.allocatedBytes, double(tensorBytes));
    EXPECT_EQ(original.peakInCallBytes, tensorBytes);

    options.plan = test::planOf({test::entry("", "gelu", "TestWorkspaceGeluProvider")});
    options.usePlan = true;
    const FunctionMemory served = rowOf(summarizeMemory(profile(*session, options)), "gelu");
    EXPECT_EQ(served.provider, "TestWorkspaceGeluProvider");
    EXPECT_DOUBLE_EQ(served.allocatedBytes, double(test::kWorkspaceGeluBytes + tensorBytes));
    EXPECT_DOUBLE_EQ(served.allocations, 2.0);
    EXPECT_EQ(served.peakInCallBytes, test::kWorkspaceGeluBytes + tensorBytes);
}

// What each module left alive when it returned: `first` returns its 1 MiB gelu, with or without a provider whose 8 MiB
// workspace is freed inside the call (its peak inside shows the workspace, its exit does not); the forward returns its
// 1 MiB product, first's result freed by then.
TEST(MemoryProfile, EachModuleSaysWhatWasLiveWhenItReturned)
{
    test::TempDir dir;
    auto session = geluTimesTwo(dir);
    ProfileOptions options = memoryOptions();
    for (const bool workspace : {false, true}) {
        SCOPED_TRACE(workspace ? "TestWorkspaceGeluProvider" : "original");
        options.usePlan = workspace;
        options.plan = test::planOf({test::entry("", "gelu", "TestWorkspaceGeluProvider")});
        const MemorySummary summary = summarizeMemory(profile(*session, options));
        const ModuleMemory& first = moduleOf(summary, "first");
        ASSERT_TRUE(first.liveAtExitBytes.has_value());
        EXPECT_EQ(*first.liveAtExitBytes, tensorBytes);
        EXPECT_EQ(first.peakBytes, tensorBytes + (workspace ? test::kWorkspaceGeluBytes : 0));
        const ModuleMemory& root = moduleOf(summary, "");
        ASSERT_TRUE(root.liveAtExitBytes.has_value());
        EXPECT_EQ(*root.liveAtExitBytes, tensorBytes);
    }
}

// A module that is never called itself (tiny-gpt's `blocks`, a ModuleList whose children the forward calls) has no
// exit to measure; each block it holds has one.
TEST(MemoryProfile, AModuleNeverCalledItselfHasNoExit)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const MemorySummary summary = summarizeMemory(memoryProfile(*session, true));
    EXPECT_FALSE(moduleOf(summary, "blocks").liveAtExitBytes.has_value());
    const ModuleMemory& block = moduleOf(summary, "blocks.0");
    ASSERT_TRUE(block.liveAtExitBytes.has_value());
    EXPECT_EQ(*block.liveAtExitBytes, 1 * 16 * 64 * 4); // its [1, 16, 64] float32 result, the embedding's freed
}
