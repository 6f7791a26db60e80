// SPDX-License-Identifier: Apache-2.0
// Exports of profile runs (Chrome trace JSON, CSV) and .kfprof result files: structure, round trips, errors.
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/profile_export.h>
#include <kforge/profiling.h>

#include "build_path.h"
#include "test_helpers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <limits>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace kforge;
using namespace kforge::test;
using nlohmann::json;

namespace {

ProfileRun cpuProfile(int iterations, Plan plan = {}, bool usePlan = false)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    ProfileOptions options;
    options.device = "cpu";
    options.warmupIterations = 1;
    options.iterations = iterations;
    options.plan = std::move(plan);
    options.usePlan = usePlan;
    return profile(*session, options);
}

// One baseline profile shared by the tests that only read it.
const ProfileRun& tinyGptRun()
{
    static const ProfileRun run = cpuProfile(2);
    return run;
}

std::string traceOf(const std::vector<LabeledRun>& runs)
{
    std::ostringstream out;
    writeChromeTrace(runs, out);
    return out.str();
}

std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeText(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream(path, std::ios::binary) << text;
}

void expectSameRecords(const std::vector<KernelRecord>& a, const std::vector<KernelRecord>& b)
{
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE("record " + std::to_string(i));
        EXPECT_EQ(a[i].kind, b[i].kind);
        EXPECT_EQ(a[i].name, b[i].name);
        EXPECT_EQ(a[i].modulePath, b[i].modulePath);
        EXPECT_EQ(a[i].function, b[i].function);
        EXPECT_EQ(a[i].op, b[i].op);
        EXPECT_EQ(a[i].provider, b[i].provider);
        EXPECT_EQ(a[i].startNs, b[i].startNs);
        EXPECT_EQ(a[i].durationNs, b[i].durationNs);
        EXPECT_EQ(a[i].thread, b[i].thread);
        EXPECT_EQ(a[i].device, b[i].device);
        EXPECT_EQ(a[i].stream, b[i].stream);
        EXPECT_EQ(a[i].grid, b[i].grid);
        EXPECT_EQ(a[i].block, b[i].block);
        EXPECT_EQ(a[i].registersPerThread, b[i].registersPerThread);
        EXPECT_EQ(a[i].sharedMemoryBytes, b[i].sharedMemoryBytes);
        EXPECT_EQ(a[i].correlation, b[i].correlation);
        EXPECT_EQ(a[i].iteration, b[i].iteration);
        EXPECT_EQ(a[i].graphReplay, b[i].graphReplay);
        if (::testing::Test::HasFailure())
            return;
    }
}

void expectSameRanges(const std::vector<RangeRecord>& a, const std::vector<RangeRecord>& b)
{
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE("range " + std::to_string(i));
        EXPECT_EQ(a[i].kind, b[i].kind);
        EXPECT_EQ(a[i].name, b[i].name);
        EXPECT_EQ(a[i].provider, b[i].provider);
        EXPECT_EQ(a[i].startNs, b[i].startNs);
        EXPECT_EQ(a[i].durationNs, b[i].durationNs);
        EXPECT_EQ(a[i].thread, b[i].thread);
        EXPECT_EQ(a[i].iteration, b[i].iteration);
        if (::testing::Test::HasFailure())
            return;
    }
}

void expectSameModules(const std::vector<ModuleInfo>& a, const std::vector<ModuleInfo>& b)
{
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE("module " + a[i].path);
        EXPECT_EQ(a[i].path, b[i].path);
        EXPECT_EQ(a[i].name, b[i].name);
        EXPECT_EQ(a[i].typeName, b[i].typeName);
        EXPECT_EQ(a[i].qualifiedTypeName, b[i].qualifiedTypeName);
        EXPECT_EQ(a[i].parameterCount, b[i].parameterCount);
        EXPECT_EQ(a[i].parameterBytes, b[i].parameterBytes);
        EXPECT_EQ(a[i].subtreeParameterCount, b[i].subtreeParameterCount);
        EXPECT_EQ(a[i].subtreeParameterBytes, b[i].subtreeParameterBytes);
        EXPECT_EQ(a[i].children, b[i].children);
        EXPECT_EQ(a[i].functions, b[i].functions);
        EXPECT_EQ(a[i].subtreeFunctions, b[i].subtreeFunctions);
        EXPECT_EQ(a[i].depth, b[i].depth);
    }
}

void expectSameRun(const ProfileRun& a, const ProfileRun& b)
{
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.deviceName, b.deviceName);
    EXPECT_EQ(a.torchVersion, b.torchVersion);
    EXPECT_EQ(a.cuptiVersion, b.cuptiVersion);
    EXPECT_EQ(a.kforgeVersion, b.kforgeVersion);
    EXPECT_EQ(a.model, b.model);
    EXPECT_EQ(a.intraOpThreads, b.intraOpThreads);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.warmupIterations, b.warmupIterations);
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_EQ(a.cancelled, b.cancelled);
    EXPECT_EQ(a.usedPlan, b.usedPlan);
    EXPECT_EQ(a.droppedRecords, b.droppedRecords);
    EXPECT_EQ(a.wallNs, b.wallNs);
    ASSERT_EQ(a.plan.entries.size(), b.plan.entries.size());
    for (size_t i = 0; i < a.plan.entries.size(); ++i) {
        EXPECT_EQ(a.plan.entries[i].scope, b.plan.entries[i].scope);
        EXPECT_EQ(a.plan.entries[i].function, b.plan.entries[i].function);
        EXPECT_EQ(a.plan.entries[i].provider, b.plan.entries[i].provider);
        EXPECT_EQ(a.plan.entries[i].enabled, b.plan.entries[i].enabled);
        EXPECT_EQ(a.plan.entries[i].note, b.plan.entries[i].note);
    }
    expectSameModules(a.modules, b.modules);
    expectSameRecords(a.records, b.records);
    expectSameRanges(a.ranges, b.ranges);
    ASSERT_EQ(a.outputs.size(), b.outputs.size());
    for (size_t i = 0; i < a.outputs.size(); ++i) {
        EXPECT_EQ(a.outputs[i].path, b.outputs[i].path);
        EXPECT_EQ(a.outputs[i].dtype, b.outputs[i].dtype);
        EXPECT_EQ(a.outputs[i].device, b.outputs[i].device);
        EXPECT_EQ(a.outputs[i].shape, b.outputs[i].shape);
        EXPECT_EQ(a.outputs[i].sum, b.outputs[i].sum);
        EXPECT_EQ(a.outputs[i].maxAbs, b.outputs[i].maxAbs);
    }
    EXPECT_EQ(a.outputValues, b.outputValues);
}

// Two CUDA kernels launched by one linear call on stream 7 and a memcpy, with awkward names (ill-formed UTF-8
// only when asked: JSON text is UTF-8, so .kfprof files keep such bytes as U+FFFD).
ProfileRun syntheticCudaRun(bool illFormedUtf8 = false)
{
    ProfileRun run;
    run.device = "cuda";
    run.deviceName = "Synthetic GPU";
    run.iterations = 1;
    run.modules = {ModuleInfo{}};
    run.modules[0].typeName = "Net";
    run.ranges.push_back({"module", "", "", 0, 10'000, 1, 0});
    run.ranges.push_back({"module", "fc", "", 1'000, 8'000, 1, 0});
    run.ranges.push_back({"function", "linear", "original", 2'000, 3'000, 1, 0});
    for (int i = 0; i < 2; ++i) {
        KernelRecord k;
        k.kind = "kernel";
        k.name = i == 0          ? "gemm<float, \"quoted\">\n\tkernel\x01" // control characters
                 : illFormedUtf8 ? "bias\xff\xfe_add"
                                 : "bias_add\xc2\xb5s";
        k.modulePath = "fc";
        k.function = "linear";
        k.op = "aten::linear";
        k.provider = "original";
        k.startNs = 6'000 + 1'000 * i;
        k.durationNs = 500;
        k.thread = 1;
        k.device = 0;
        k.stream = 7;
        k.grid = {128, 2, 1};
        k.block = {256, 1, 1};
        k.registersPerThread = 64;
        k.sharedMemoryBytes = 4096;
        k.correlation = 41 + std::uint64_t(i);
        run.records.push_back(k);
    }
    KernelRecord copy;
    copy.kind = "memcpy";
    copy.name = "Memcpy HtoD (Pageable -> Device)";
    copy.startNs = 500;
    copy.durationNs = 200;
    copy.thread = 1;
    copy.device = 0;
    copy.stream = 3;
    copy.correlation = 40;
    run.records.push_back(copy);
    return run;
}

struct TraceIndex {
    json root;
    std::vector<json> slices;                                           // "X"
    std::map<long long, std::vector<json>> flows;                       // id -> "s"/"f" events
    std::map<std::pair<long long, long long>, std::string> threadNames; // (pid, tid) -> name
    std::map<long long, std::string> processNames;
};

TraceIndex indexTrace(const std::string& text)
{
    TraceIndex t;
    t.root = json::parse(text);
    for (const json& e : t.root.at("traceEvents")) {
        const std::string ph = e.at("ph");
        if (ph == "X")
            t.slices.push_back(e);
        else if (ph == "s" || ph == "f")
            t.flows[e.at("id").get<long long>()].push_back(e);
        else if (ph == "M" && e.at("name") == "thread_name")
            t.threadNames[{e.at("pid").get<long long>(), e.at("tid").get<long long>()}] = e.at("args").at("name");
        else if (ph == "M" && e.at("name") == "process_name")
            t.processNames[e.at("pid").get<long long>()] = e.at("args").at("name");
    }
    return t;
}

// The slice on (pid, tid) that is open at `tsUs` and started last (the one a flow event binds to).
const json* sliceAt(const TraceIndex& t, long long pid, long long tid, double tsUs)
{
    const json* best = nullptr;
    for (const json& s : t.slices) {
        if (s.at("pid") != pid || s.at("tid") != tid)
            continue;
        const double ts = s.at("ts"), dur = s.at("dur");
        if (ts <= tsUs && tsUs < ts + dur && (!best || ts >= best->at("ts").get<double>()))
            best = &s;
    }
    return best;
}

} // namespace

// ---- Chrome trace ----------------------------------------------------------------------------------------------

TEST(ChromeTrace, CpuProfileOfTinyGptHasLanesRangesOpsAndFlows)
{
    const ProfileRun& run = tinyGptRun();
    ASSERT_FALSE(run.records.empty());
    const TraceIndex t = indexTrace(traceOf({{"", &run}}));
    EXPECT_EQ(t.root.at("displayTimeUnit"), "ns");
    EXPECT_EQ(t.root.at("kforge").at("runs")[0].at("model"), "tiny-gpt");
    EXPECT_EQ(t.root.at("kforge").at("runs")[0].at("device"), "cpu");

    for (const json& e : t.root.at("traceEvents")) {
        for (const char* key : {"ph", "name", "pid", "tid"})
            EXPECT_TRUE(e.contains(key)) << key << " missing in " << e.dump();
        if (e.at("ph") == "X") {
            ASSERT_TRUE(e.contains("ts") && e.at("ts").is_number()) << e.dump();
            ASSERT_TRUE(e.contains("dur") && e.at("dur").is_number()) << e.dump();
            EXPECT_GE(e.at("dur").get<double>(), 0.0);
            EXPECT_TRUE(e.contains("cat")) << e.dump();
            EXPECT_TRUE(e.at("args").is_object()) << e.dump();
        }
    }
    // Lanes: the host process and its thread are named.
    EXPECT_EQ(t.processNames.at(1), "host");
    ASSERT_FALSE(run.ranges.empty());
    const auto thread = static_cast<long long>(run.ranges.front().thread);
    EXPECT_EQ(t.threadNames.at({1, thread}), "thread " + std::to_string(thread));

    std::map<std::string, size_t> byCat;
    for (const json& s : t.slices) {
        ++byCat[s.at("cat")];
        EXPECT_EQ(s.at("pid"), 1) << s.dump(); // everything runs on the host on the CPU
    }
    const auto count = [&](const char* kind) {
        return size_t(
            std::count_if(run.ranges.begin(), run.ranges.end(), [&](const auto& r) { return r.kind == kind; }));
    };
    EXPECT_EQ(byCat["module"], count("module"));
    EXPECT_EQ(byCat["function"], count("function"));
    EXPECT_EQ(byCat["cpu_op"], run.records.size());
    EXPECT_GT(byCat["module"], 0u);
    EXPECT_GT(byCat["function"], 0u);

    // Attribution in the args; a module range for blocks.0.attn, the function ranges name their module.
    bool sawAttn = false, sawSdpa = false;
    for (const json& s : t.slices) {
        const json& args = s.at("args");
        if (s.at("cat") == "module" && args.at("module") == "blocks.0.attn")
            sawAttn = true;
        if (s.at("cat") == "function" && s.at("name") == "scaled_dot_product_attention") {
            sawSdpa = true;
            EXPECT_TRUE(args.at("module") == "blocks.0.attn" || args.at("module") == "blocks.1.attn") << s.dump();
            EXPECT_EQ(args.at("provider"), "original");
        }
        if (s.at("cat") == "cpu_op")
            for (const char* key : {"module", "function", "op", "provider", "iteration"})
                EXPECT_TRUE(args.contains(key)) << key << " missing in " << s.dump();
    }
    EXPECT_TRUE(sawAttn);
    EXPECT_TRUE(sawSdpa);

    // Flows: one s and one f per id, f binds to the enclosing slice; every op that served a function has one,
    // from a function slice to the op slice of the same function.
    const size_t withFunction = size_t(std::count_if(run.records.begin(), run.records.end(),
                                                     [](const KernelRecord& r) { return !r.function.empty(); }));
    EXPECT_EQ(t.flows.size(), withFunction);
    for (const auto& [id, events] : t.flows) {
        ASSERT_EQ(events.size(), 2u) << "flow " << id;
        const json& s = events[0].at("ph") == "s" ? events[0] : events[1];
        const json& f = events[0].at("ph") == "f" ? events[0] : events[1];
        ASSERT_EQ(s.at("ph"), "s");
        ASSERT_EQ(f.at("ph"), "f");
        EXPECT_EQ(f.at("bp"), "e");
        EXPECT_EQ(s.at("cat"), f.at("cat"));
        const json* from = sliceAt(t, s.at("pid"), s.at("tid"), s.at("ts"));
        const json* to = sliceAt(t, f.at("pid"), f.at("tid"), f.at("ts"));
        ASSERT_TRUE(from && to) << s.dump() << f.dump();
        EXPECT_EQ(from->at("cat"), "function") << from->dump();
        EXPECT_EQ(to->at("cat"), "cpu_op") << to->dump();
        EXPECT_EQ(to->at("args").at("function"), from->at("name"));
    }
}

TEST(ChromeTrace, TimestampsAreMicrosecondsWithNanosecondPrecision)
{
    ProfileRun run;
    run.device = "cpu";
    KernelRecord r;
    r.name = "aten::mm";
    r.startNs = 1'234'567;
    r.durationNs = 89;
    r.thread = 3;
    run.records.push_back(r);
    const std::string text = traceOf({{"", &run}});
    EXPECT_TRUE(contains(text, R"("ts":1234.567,"dur":0.089)")) << text;
    const TraceIndex t = indexTrace(text);
    ASSERT_EQ(t.slices.size(), 1u);
    EXPECT_EQ(t.slices[0].at("tid"), 3);
}

TEST(ChromeTrace, KernelsGoOnStreamLanesWithGeometryAndFlowsFromTheirCall)
{
    const ProfileRun run = syntheticCudaRun(true);
    const std::string text = traceOf({{"", &run}});
    const TraceIndex t = indexTrace(text); // control characters and bad UTF-8 in names still give valid JSON
    EXPECT_EQ(t.processNames.at(2), "cuda:0");
    EXPECT_EQ(t.threadNames.at({2, 7}), "stream 7");
    EXPECT_EQ(t.threadNames.at({2, 3}), "stream 3");
    EXPECT_EQ(t.threadNames.at({1, 1}), "thread 1");
    std::vector<json> kernels;
    for (const json& s : t.slices)
        if (s.at("cat") == "kernel")
            kernels.push_back(s);
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0].at("name"), "gemm<float, \"quoted\">\n\tkernel\x01");
    EXPECT_EQ(kernels[1].at("name"), "bias\xef\xbf\xbd\xef\xbf\xbd_add");
    const json& args = kernels[0].at("args");
    EXPECT_EQ(kernels[0].at("pid"), 2);
    EXPECT_EQ(kernels[0].at("tid"), 7);
    EXPECT_EQ(args.at("grid"), json::array({128, 2, 1}));
    EXPECT_EQ(args.at("block"), json::array({256, 1, 1}));
    EXPECT_EQ(args.at("registers per thread"), 64); // Kineto's names for them
    EXPECT_EQ(args.at("shared memory"), 4096);
    EXPECT_EQ(args.at("correlation"), 41);
    EXPECT_EQ(args.at("module"), "fc");
    EXPECT_EQ(args.at("op"), "aten::linear");
    // The function range names its module (the innermost module range around it).
    for (const json& s : t.slices)
        if (s.at("cat") == "function")
            EXPECT_EQ(s.at("args").at("module"), "fc");
        else if (s.at("cat") == "module" && s.at("args").at("module") == "")
            EXPECT_EQ(s.at("name"), "(root)");
    // Both kernels have a flow from the linear call; the memcpy (no function) has none.
    ASSERT_EQ(t.flows.size(), 2u);
    for (const auto& [id, events] : t.flows) {
        ASSERT_EQ(events.size(), 2u);
        for (const json& e : events) {
            const json* slice = sliceAt(t, e.at("pid"), e.at("tid"), e.at("ts"));
            ASSERT_TRUE(slice) << e.dump();
            EXPECT_EQ(slice->at("cat"), e.at("ph") == "s" ? "function" : "kernel") << e.dump();
        }
    }
}

// What Holistic Trace Analysis (tests/corpus/test_hta_trace.py) and other readers of torch.profiler's Kineto traces
// expect: its top-level keys, rank 0 of 1 on a line of its own (HTA finds it by the text `"rank": N`), Kineto's
// categories and the ids of every GPU event in its args.
TEST(ChromeTrace, CudaRunCarriesKinetoKeysCategoriesAndIdsForHta)
{
    const ProfileRun run = syntheticCudaRun();
    const std::string text = traceOf({{"", &run}});
    const TraceIndex t = indexTrace(text);
    EXPECT_EQ(t.root.at("schemaVersion"), 1);
    EXPECT_EQ(t.root.at("distributedInfo"), json::parse(R"({"rank": 0, "world_size": 1})"));
    EXPECT_EQ(t.root.at("deviceProperties"), json::parse(R"([{"id": 0, "name": "Synthetic GPU"}])"));
    EXPECT_EQ(t.root.at("displayTimeUnit"), "ns");
    const std::string firstLines = text.substr(0, text.find("traceEvents"));
    EXPECT_TRUE(contains(firstLines, "\n\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n")) << firstLines;

    std::map<std::string, size_t> byCat;
    for (const json& s : t.slices) {
        ++byCat[s.at("cat")];
        const json& args = s.at("args");
        if (s.at("pid") == 1) {
            EXPECT_FALSE(args.contains("stream")) << s.dump(); // HTA takes events with a stream for GPU events
            continue;
        }
        EXPECT_EQ(s.at("pid"), 2) << s.dump();
        EXPECT_EQ(args.at("device"), 0) << s.dump();
        EXPECT_EQ(args.at("stream"), s.at("tid")) << s.dump();
        EXPECT_TRUE(args.at("correlation").is_number_integer()) << s.dump();
        if (s.at("cat") == "kernel") {
            EXPECT_EQ(args.at("grid"), json::array({128, 2, 1}));
            EXPECT_EQ(args.at("block"), json::array({256, 1, 1}));
            EXPECT_EQ(args.at("registers per thread"), 64);
            EXPECT_EQ(args.at("shared memory"), 4096);
            EXPECT_FALSE(args.contains("registers_per_thread"));
        } else {
            EXPECT_EQ(s.at("cat"), "gpu_memcpy") << s.dump();
            EXPECT_EQ(s.at("name"), "Memcpy HtoD (Pageable -> Device)"); // HTA types a "Memcpy..." name MEMORY
            EXPECT_EQ(args.at("stream"), 3);
            EXPECT_EQ(args.at("correlation"), 40);
            EXPECT_FALSE(args.contains("grid"));
        }
    }
    EXPECT_EQ(byCat["kernel"], 2u);
    EXPECT_EQ(byCat["gpu_memcpy"], 1u);
    EXPECT_EQ(byCat["memcpy"], 0u);
    // kforge records no CUDA runtime launch: no cuda_runtime slice and no ac2g flow is made up; the flows go from the
    // function call that launched a kernel (cat "launch").
    EXPECT_EQ(byCat["cuda_runtime"], 0u);
    for (const auto& [id, events] : t.flows)
        for (const json& e : events)
            EXPECT_EQ(e.at("cat"), "launch");

    // A memset gets Kineto's category too; a CPU run lists no device.
    ProfileRun withMemset = run;
    withMemset.records.back().kind = "memset";
    withMemset.records.back().name = "Memset (Device)";
    EXPECT_TRUE(contains(traceOf({{"", &withMemset}}), R"x({"ph":"X","cat":"gpu_memset","name":"Memset (Device)")x"));
    ProfileRun cpu;
    cpu.device = "cpu";
    KernelRecord op;
    op.name = "aten::mm";
    cpu.records.push_back(op);
    EXPECT_EQ(indexTrace(traceOf({{"", &cpu}})).root.at("deviceProperties"), json::array());
}

TEST(ChromeTrace, BaselineAndPlanAreSeparateProcesses)
{
    const ProfileRun a = syntheticCudaRun();
    const ProfileRun b = syntheticCudaRun();
    const TraceIndex t = indexTrace(traceOf({{"baseline", &a}, {"plan", &b}}));
    EXPECT_EQ(t.processNames.at(1), "host (baseline)");
    EXPECT_EQ(t.processNames.at(2), "cuda:0 (baseline)");
    EXPECT_EQ(t.processNames.at(101), "host (plan)");
    EXPECT_EQ(t.processNames.at(102), "cuda:0 (plan)");
    EXPECT_EQ(t.flows.size(), 4u); // ids unique across the runs
    EXPECT_EQ(t.root.at("kforge").at("runs").size(), 2u);
}

TEST(ChromeTrace, LargeRunStreamsInBoundedChunks)
{
    // A stream buffer that sees every write: the exporter must write as it goes, not one huge block at the end.
    struct Counting : std::streambuf {
        size_t total = 0, largest = 0, writes = 0;
        std::streamsize xsputn(const char*, std::streamsize n) override
        {
            total += size_t(n);
            largest = std::max(largest, size_t(n));
            ++writes;
            return n;
        }
        int_type overflow(int_type c) override
        {
            ++total;
            return c;
        }
    } counting;
    ProfileRun run = syntheticCudaRun();
    const KernelRecord k = run.records[0];
    run.records.clear();
    for (int i = 0; i < 200'000; ++i) {
        KernelRecord r = k;
        r.startNs = 10'000 + i * 100;
        r.function = "";
        run.records.push_back(std::move(r));
    }
    std::ostream out(&counting);
    const auto start = std::chrono::steady_clock::now();
    writeChromeTrace(run, out);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GT(counting.total, 200'000u * 100u);
    EXPECT_LE(counting.largest, size_t(1) << 18);
    EXPECT_GT(counting.writes, 100u);
    std::cout << "[ info ] 200,000 kernel records -> " << counting.total / 1'000'000 << " MB of trace in " << seconds
              << " s (" << long(200'000 / seconds) << " records/s)\n";
}

// The trace of a representative pair of runs, byte for byte as the writer wrote it before it was made faster
// (issue 70): host ops with shapes, kernels with flows from their calls, a graph replay, a memcpy and a memset, module
// and function ranges, memory counters, and names that need escaping. KFORGE_WRITE_GOLDEN=1 rewrites the file after
// a deliberate change of the format.
TEST(ChromeTrace, OutputOfARepresentativePairIsUnchanged)
{
    ProfileRun baseline = syntheticCudaRun(true);
    baseline.ranges.push_back({"range", "warm\"up\\", "", 100, 50, 2, 0});
    KernelRecord op;
    op.kind = "cpu_op";
    op.name = "aten::linear";
    op.modulePath = "fc";
    op.function = "linear";
    op.op = "aten::linear";
    op.provider = "original";
    op.inputShapes = "[[8, 16], [4, 16], [4]]";
    op.startNs = 1'900;
    op.durationNs = 3'300;
    op.thread = 1;
    op.device = -1;
    baseline.records.insert(baseline.records.begin(), op);
    KernelRecord replay = baseline.records[1];
    replay.startNs = 9'000;
    replay.graphReplay = true;
    replay.correlation = 0;
    baseline.records.push_back(replay);
    KernelRecord set = baseline.records.back();
    set.kind = "memset";
    set.name = "Memset (Device) \xce\xbb";
    set.graphReplay = false;
    set.device = 1;
    set.stream = 0;
    set.startNs = -1'234;
    baseline.records.push_back(set);
    baseline.memory = {{100, 4096, 4096, "fc", "linear", "cuda:0", 1, 0, 7},
                       {200, 512, 4608, "", "", "cpu", 1, 0, 9},
                       {300, -4096, 512, "fc", "", "cuda:0", 1, 0, 7}};
    ProfileRun plan = syntheticCudaRun();
    plan.usedPlan = true;
    plan.records[0].provider = "cuda.gemm";
    const std::string text = traceOf({{"baseline", &baseline}, {"plan", &plan}});
    const auto golden = std::filesystem::path(KFORGE_TEST_DATA) / "traces" / "representative.trace.json";
    if (const char* write = std::getenv("KFORGE_WRITE_GOLDEN"); write && std::string(write) == "1")
        writeText(golden, text);
    const std::string expected = readText(golden);
    ASSERT_FALSE(expected.empty()) << golden;
    if (text != expected) {
        const auto actual = std::filesystem::temp_directory_path() / "representative.trace.json";
        writeText(actual, text);
        const auto at = std::mismatch(text.begin(), text.end(), expected.begin(), expected.end()).first - text.begin();
        FAIL() << "the trace differs from " << golden << " at byte " << at << ": written to " << actual;
    }
}

// ---- CSV -------------------------------------------------------------------------------------------------------

TEST(Csv, RoundTripOfARealProfileEqualsTheRecords)
{
    const ProfileRun& run = tinyGptRun();
    std::stringstream csv;
    writeCsv(run, csv);
    const std::string text = csv.str();
    EXPECT_EQ(text.rfind("kind,name,module,function,op,provider,start_ns,duration_ns,", 0), 0u) << text.substr(0, 200);
    EXPECT_TRUE(contains(text, "\r\n"));
    expectSameRecords(readCsv(csv), run.records);
}

TEST(Csv, QuotingFollowsRfc4180AndRoundTrips)
{
    const ProfileRun run = syntheticCudaRun();
    std::vector<KernelRecord> records = run.records;
    records[2].name = "a,b";
    records[2].modulePath = "say \"hi\"";
    records[2].graphReplay = true;
    records[2].correlation = 18'446'744'073'709'551'615ull;
    std::stringstream csv;
    writeCsv(records, csv);
    const std::string text = csv.str();
    EXPECT_TRUE(contains(text, "\"gemm<float, \"\"quoted\"\">\n\tkernel\x01\"")) << text;
    EXPECT_TRUE(contains(text, ",\"a,b\",\"say \"\"hi\"\"\",")) << text;
    expectSameRecords(readCsv(csv), records);
}

TEST(Csv, ReaderTakesColumnsByNameAndLfLineEnds)
{
    std::istringstream in("name,duration_ns,extra,module\naten::mm,1500,x,blocks.0\n\"aten::add\",20,,\n");
    const auto records = readCsv(in);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].name, "aten::mm");
    EXPECT_EQ(records[0].durationNs, 1500);
    EXPECT_EQ(records[0].modulePath, "blocks.0");
    EXPECT_EQ(records[0].kind, "cpu_op"); // missing columns keep the defaults
    EXPECT_EQ(records[1].name, "aten::add");
}

TEST(Csv, MalformedInputIsAClearError)
{
    const auto read = [](const std::string& text) {
        return errorOf([&] {
            std::istringstream in(text);
            readCsv(in);
        });
    };
    EXPECT_TRUE(contains(read(""), "no header")) << read("");
    EXPECT_TRUE(contains(read("a,b\n1,2\n"), "no 'name' column"));
    const std::string badNumber = read("name,duration_ns\nk,12\nk,12x\n");
    EXPECT_TRUE(contains(badNumber, "CSV line 3")) << badNumber;
    EXPECT_TRUE(contains(badNumber, "duration_ns")) << badNumber;
    EXPECT_TRUE(contains(read("name,duration_ns\nk\n"), "1 fields where the header has 2"));
    EXPECT_TRUE(contains(read("name\n\"open\n"), "not closed"));
}

// ---- .kfprof ---------------------------------------------------------------------------------------------------

TEST(Kfprof, SaveAndLoadRoundTripOfABaselineRun)
{
    TempDir dir;
    const ProfileRun& run = tinyGptRun();
    const std::string path = dir.path("run.kfprof").string();
    saveProfile(run, path);
    const json file = json::parse(readText(path));
    EXPECT_EQ(file.at("format"), "kforge-profile");
    EXPECT_EQ(file.at("version"), 1);
    EXPECT_EQ(file.at("runs")[0].at("label"), "baseline");
    EXPECT_FALSE(file.at("runs")[0].at("statistics").at("kernel").empty());
    expectSameRun(run, loadProfile(path));
    // The threads it measured with, recorded: the same ops on 1 thread and on 16 are different numbers.
    EXPECT_EQ(run.intraOpThreads, intraOpThreadCount());
    EXPECT_GT(run.intraOpThreads, 0);
}

TEST(Kfprof, PlanRunKeepsThePlanEntriesAndProviders)
{
    TempDir dir;
    Plan plan = planOf({entry("blocks.1", "gelu", "AtenGeluProvider")});
    plan.entries[0].note = "from a test";
    const ProfileRun run = cpuProfile(1, plan, true);
    const std::string path = dir.path("plan.kfprof").string();
    saveProfile(run, path);
    const ProfileRun loaded = loadProfile(path);
    expectSameRun(run, loaded);
    ASSERT_EQ(loaded.plan.entries.size(), 1u);
    EXPECT_EQ(loaded.plan.entries[0].scope, "blocks.1");
    EXPECT_EQ(loaded.plan.entries[0].providerType(), "AtenGeluProvider");
    EXPECT_TRUE(loaded.usedPlan);
    EXPECT_EQ(loadProfiles(path)[0].label, "plan");
    EXPECT_TRUE(std::any_of(loaded.records.begin(), loaded.records.end(),
                            [](const KernelRecord& r) { return r.provider == "AtenGeluProvider"; }));
}

TEST(Kfprof, SyntheticCudaRunWithOddValuesRoundTrips)
{
    TempDir dir;
    ProfileRun run = syntheticCudaRun();
    run.cuptiVersion = "12.8";
    run.droppedRecords = 17;
    run.cancelled = true;
    run.records[0].graphReplay = true;
    run.records[1].correlation = 18'446'744'073'709'551'615ull;
    run.outputs.push_back({"0.logits", "float32", "cuda:0", {2, 3}, std::nan(""), 1e300});
    run.outputValues = {{1.5f, -0.0f, std::numeric_limits<float>::infinity(), 3.4e38f, 1e-45f}, {}};
    const std::string path = dir.path("cuda.kfprof").string();
    saveProfile(run, path);
    ProfileRun loaded = loadProfile(path);
    ASSERT_EQ(loaded.outputs.size(), 1u);
    EXPECT_TRUE(std::isnan(loaded.outputs[0].sum));
    run.outputs[0].sum = loaded.outputs[0].sum = 0; // NaN != NaN
    expectSameRun(run, loaded);
    EXPECT_TRUE(std::signbit(loaded.outputValues[0][1]));

    const ProfileRun illFormed = syntheticCudaRun(true);
    saveProfile(illFormed, path);
    EXPECT_EQ(loadProfile(path).records[1].name, "bias\xef\xbf\xbd\xef\xbf\xbd_add");
}

TEST(Kfprof, BaselineAndPlanInOneFile)
{
    TempDir dir;
    const ProfileRun& baseline = tinyGptRun();
    const ProfileRun plan = cpuProfile(1, planOf({entry("", "layer_norm", "AtenLayerNormProvider")}), true);
    const std::string path = dir.path("both.kfprof").string();
    saveProfiles({{"baseline", &baseline}, {"plan", &plan}}, path);
    const auto runs = loadProfiles(path);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].label, "baseline");
    EXPECT_EQ(runs[1].label, "plan");
    expectSameRun(baseline, runs[0].run);
    expectSameRun(plan, runs[1].run);
    // A comparison from the files alone, without the model: the reference provider changes nothing.
    const Comparison c = compare(runs[0].run, runs[1].run);
    EXPECT_TRUE(c.outputsComparable);
    EXPECT_EQ(c.maxAbsError, 0.0);
    EXPECT_EQ(loadProfile(path).usedPlan, false); // loadProfile gives the first run
}

TEST(Kfprof, BadFilesGiveClearErrors)
{
    TempDir dir;
    const auto load = [](const std::filesystem::path& p) { return errorOf([&] { loadProfile(p.string()); }); };

    const std::string missing = load(dir.path("missing.kfprof"));
    EXPECT_TRUE(contains(missing, "missing.kfprof: not found")) << missing;

    writeText(dir.path("malformed.kfprof"),
              "{\n  \"format\": \"kforge-profile\",\n  \"version\": 1,\n  \"runs\": [}\n");
    const std::string malformed = load(dir.path("malformed.kfprof"));
    EXPECT_TRUE(contains(malformed, "malformed.kfprof: malformed JSON at line 4, column 12")) << malformed;

    // A string cut in the middle (a truncated download of base64 output values) quotes its end only, not the
    // whole token nlohmann read.
    const std::string longToken(20000, 'Q');
    writeText(dir.path("cut.kfprof"), "{\"format\": \"kforge-profile\", \"runs\": [{\"x\": \"" + longToken);
    const std::string cut = load(dir.path("cut.kfprof"));
    EXPECT_TRUE(contains(cut, "cut.kfprof: malformed JSON at line 1")) << cut;
    EXPECT_TRUE(contains(cut, "missing closing quote")) << cut;
    EXPECT_TRUE(contains(cut, "characters]..." + std::string(40, 'Q') + "'")) << cut;
    EXPECT_LT(cut.size(), 300u) << cut;

    writeText(dir.path("empty.kfprof"), "");
    EXPECT_TRUE(contains(load(dir.path("empty.kfprof")), "malformed JSON at line 1, column 1"))
        << load(dir.path("empty.kfprof"));

    writeText(dir.path("plan.kfprof"), R"({"format": "kforge-plan", "version": 1, "entries": []})");
    EXPECT_TRUE(contains(load(dir.path("plan.kfprof")), "is a kforge plan, not a profile"))
        << load(dir.path("plan.kfprof"));

    writeText(dir.path("other.kfprof"), R"({"format": "something", "version": 1})");
    EXPECT_TRUE(contains(load(dir.path("other.kfprof")), "not a kforge profile")) << load(dir.path("other.kfprof"));

    writeText(dir.path("array.kfprof"), "[1, 2]");
    EXPECT_TRUE(contains(load(dir.path("array.kfprof")), "not a kforge profile")) << load(dir.path("array.kfprof"));

    std::ostringstream trace;
    const ProfileRun synthetic = syntheticCudaRun();
    writeChromeTrace(synthetic, trace);
    writeText(dir.path("trace.json"), trace.str());
    EXPECT_TRUE(contains(load(dir.path("trace.json")), "is a Chrome trace")) << load(dir.path("trace.json"));

    writeText(dir.path("newer.kfprof"), R"({"format": "kforge-profile", "version": 2, "runs": []})");
    const std::string newer = load(dir.path("newer.kfprof"));
    EXPECT_TRUE(contains(newer, "format version 2 is newer than this build reads (1)")) << newer;

    writeText(dir.path("norun.kfprof"), R"({"format": "kforge-profile", "version": 1, "runs": []})");
    EXPECT_TRUE(contains(load(dir.path("norun.kfprof")), "holds no run")) << load(dir.path("norun.kfprof"));

    // Wrong types name the JSON path.
    const std::string path = dir.path("good.kfprof").string();
    saveProfile(synthetic, path);
    json doc = json::parse(readText(path));
    doc["runs"][0]["records"][1][7] = "long";
    writeText(dir.path("badtype.kfprof"), doc.dump());
    const std::string badType = load(dir.path("badtype.kfprof"));
    EXPECT_TRUE(contains(badType, "/runs/0/records/1/7: expected an integer, found a string")) << badType;

    doc = json::parse(readText(path));
    doc["runs"][0]["records"][0][1] = 100000;
    writeText(dir.path("badindex.kfprof"), doc.dump());
    const std::string badIndex = load(dir.path("badindex.kfprof"));
    EXPECT_TRUE(contains(badIndex, "/runs/0/records/0/1: string index 100000 is outside the string table")) << badIndex;

    doc = json::parse(readText(path));
    doc["runs"][0].erase("device");
    writeText(dir.path("nodevice.kfprof"), doc.dump());
    EXPECT_TRUE(contains(load(dir.path("nodevice.kfprof")), "/runs/0/device: missing"))
        << load(dir.path("nodevice.kfprof"));

    EXPECT_TRUE(contains(load(dir.path("")), "is a folder")) << load(dir.path(""));
}

// Values each of which parses but no measurement writes: they were read without a word and printed as results.
TEST(Kfprof, ValuesNoMeasurementWritesAreRefused)
{
    TempDir dir;
    const std::string path = dir.path("run.kfprof").string();
    saveProfile(tinyGptRun(), path);
    const auto refusal = [&](const std::function<void(json&)>& spoil) {
        json doc = json::parse(readText(path));
        spoil(doc["runs"][0]);
        writeText(dir.path("spoilt.kfprof"), doc.dump());
        return errorOf([&] { loadProfile(dir.path("spoilt.kfprof").string()); });
    };
    std::string e = refusal([](json& run) { run["iterations"] = 0; });
    EXPECT_TRUE(contains(e, "/runs/0/iterations: is 0")) << e;
    e = refusal([](json& run) { run["iterations"] = -3; });
    EXPECT_TRUE(contains(e, "/runs/0/iterations: is -3")) << e;
    e = refusal([](json& run) { run["modules"][2]["path"] = run["modules"][1]["path"]; });
    EXPECT_TRUE(contains(e, "/runs/0/modules/2: module path")) << e;
    EXPECT_TRUE(contains(e, "a tree names each module once")) << e;
    e = refusal([](json& run) { run["modules"][1]["children"].push_back(""); }); // the root under its child
    EXPECT_TRUE(contains(e, "/runs/0/modules/1/children: names ''")) << e;
    e = refusal([](json& run) {
        const auto& columns = run["record_columns"];
        const size_t duration = size_t(std::find(columns.begin(), columns.end(), "duration_ns") - columns.begin());
        ASSERT_LT(duration, columns.size());
        run["records"][0][duration] = std::numeric_limits<std::int64_t>::max();
    });
    EXPECT_TRUE(contains(e, "/runs/0/records/0: starts at")) << e;
    EXPECT_TRUE(contains(e, "not a measurement")) << e;
    EXPECT_NO_THROW(loadProfile(path)) << "the file as written reads";
}

TEST(Kfprof, ReaderToleratesAddedColumnsAndKeys)
{
    // Forward compatibility within version 1: unknown keys and extra columns are ignored.
    TempDir dir;
    const ProfileRun run = syntheticCudaRun();
    const std::string path = dir.path("run.kfprof").string();
    saveProfile(run, path);
    json doc = json::parse(readText(path));
    doc["future_key"] = {{"x", 1}};
    doc["runs"][0]["future_key"] = true;
    doc["runs"][0]["record_columns"].push_back("future_column");
    for (auto& row : doc["runs"][0]["records"])
        row.push_back("anything");
    writeText(path, doc.dump());
    expectSameRun(run, loadProfile(path));
}

TEST(Kfprof, RowsBeforeTheirStringTableReadTheSameAsStreamedOnes)
{
    // kforge writes the string table and columns before the rows, so its reader decodes rows as they are parsed;
    // a file written in another key order is read from the document instead, with the same result and errors.
    TempDir dir;
    const ProfileRun run = syntheticCudaRun();
    const std::string path = dir.path("run.kfprof").string();
    saveProfile(run, path);
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(readText(path));
    for (const char* key : {"strings", "record_columns", "range_columns"}) {
        nlohmann::ordered_json moved = doc["runs"][0][key];
        doc["runs"][0].erase(key);
        doc["runs"][0][key] = std::move(moved); // now after "records" and "ranges"
    }
    writeText(path, doc.dump());
    expectSameRun(run, loadProfile(path));

    doc["runs"][0]["records"][1][0] = 9999; // a string index outside the table, found in the document
    writeText(path, doc.dump());
    try {
        loadProfile(path);
        FAIL() << "an index outside the string table was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("/runs/0/records/1/0: string index 9999"), std::string::npos) << e.what();
    }
}

TEST(Kfprof, AStreamedRowWithABadCellNamesItsPosition)
{
    TempDir dir;
    const ProfileRun run = syntheticCudaRun();
    const std::string path = dir.path("run.kfprof").string();
    saveProfile(run, path);
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(readText(path));
    doc["runs"][0]["ranges"][2][3] = "late"; // start_ns of the third range
    writeText(path, doc.dump());
    try {
        loadProfile(path);
        FAIL() << "a string start time was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("/runs/0/ranges/2/3: expected an integer"), std::string::npos) << e.what();
    }
}

TEST(Kfprof, SaveIsAtomicAndLeavesNoTemporaryFiles)
{
    TempDir dir;
    const std::string path = dir.path("run.kfprof").string();
    writeText(path, "old contents");
    const ProfileRun run = syntheticCudaRun();
    saveProfile(run, path);
    expectSameRun(run, loadProfile(path));
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path("")))
        files += entry.is_regular_file();
    EXPECT_EQ(files, 1u);

    // A failing writer leaves the old file untouched and no temporary file behind.
    EXPECT_THROW(writeFileStreaming(path,
                                    [](std::ostream& out) {
                                        out << "partial";
                                        throw Error("test", "planted failure");
                                    }),
                 Error);
    expectSameRun(run, loadProfile(path));
    files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path("")))
        files += entry.is_regular_file();
    EXPECT_EQ(files, 1u);

    const std::string noFolder = errorOf([&] { saveProfile(run, dir.path("no/such/folder/x.kfprof").string()); });
    EXPECT_TRUE(contains(noFolder, "does not exist")) << noFolder;
}

// ---- the exporter interface ------------------------------------------------------------------------------------

TEST(Exporters, BuiltInFormatsAreListedAndUnknownOnesRefused)
{
    std::vector<std::string> names;
    for (const ProfileExporter* e : profileExporters())
        names.push_back(e->name());
    EXPECT_EQ(names, (std::vector<std::string>{"chrome-trace", "csv", "kfprof", "memory-snapshot"}));
    const std::string unknown = errorOf([] { profileExporter("pprof"); });
    EXPECT_TRUE(contains(unknown, "unknown format 'pprof' (known: chrome-trace, csv, kfprof, memory-snapshot)"))
        << unknown;

    TempDir dir;
    const ProfileRun run = syntheticCudaRun();
    exportProfile(run, "csv", dir.path("k.csv").string());
    std::ifstream in(dir.path("k.csv"));
    expectSameRecords(readCsv(in), run.records);
    exportProfile(run, "chrome-trace", dir.path("t.json").string());
    EXPECT_NO_THROW(json::parse(readText(dir.path("t.json"))));
}

// Both faces write a study's runs through the registry: each format decides what of them it holds.
TEST(Exporters, EachFormatTakesWhatItHoldsOfAStudysRuns)
{
    TempDir dir;
    ProfileRun baseline = syntheticCudaRun();
    ProfileRun plan = syntheticCudaRun();
    plan.usedPlan = true;
    plan.records.pop_back();
    const std::vector<LabeledRun> both{{"baseline", &baseline}, {"plan", &plan}};

    exportProfile(both, "kfprof", dir.path("r.kfprof").string());
    const auto saved = loadProfiles(dir.path("r.kfprof").string());
    ASSERT_EQ(saved.size(), 2u);
    EXPECT_EQ(saved[0].label, "baseline");
    EXPECT_EQ(saved[1].label, "plan");
    EXPECT_EQ(saved[1].run.records.size(), plan.records.size());

    exportProfile(both, "csv", dir.path("k.csv").string()); // the first run
    std::ifstream in(dir.path("k.csv"));
    expectSameRecords(readCsv(in), baseline.records);

    const auto laneNames = [&](const std::vector<LabeledRun>& runs) {
        exportProfile(runs, "chrome-trace", dir.path("t.json").string());
        std::set<std::string> names;
        for (const auto& [pid, name] : indexTrace(readText(dir.path("t.json"))).processNames)
            names.insert(name);
        return names;
    };
    EXPECT_TRUE(laneNames(both).count("host (plan)"));
    EXPECT_TRUE(laneNames({{"plan", &plan}}).count("host")) << "one run: its lanes carry no label";
    EXPECT_FALSE(laneNames({{"plan", &plan}}).count("host (plan)"));

    const std::string none =
        errorOf([&] { exportProfile(std::vector<LabeledRun>{}, "kfprof", dir.path("x").string()); });
    EXPECT_TRUE(contains(none, "there is no run to export")) << none;
    EXPECT_FALSE(std::filesystem::exists(dir.path("x")));
}
