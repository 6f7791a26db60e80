// SPDX-License-Identifier: Apache-2.0
// Loading .kfprof files: a run of 1,000,000 kernel records is saved once, then read three ways in the
// same process: loadProfile (rows decoded as they are parsed), a plain DOM parse of the same text (what the reader
// did before: every cell a JSON value) and saveProfile (the writer, for scale). Prints time per load and peak
// memory above the process's resident set before each, and the ratios: load / save, load / DOM parse.
// The Chrome trace of the same run (issue 70: a Perfetto protobuf writer only if the JSON one cannot stay under 1 s
// per 1 M records) is timed beside the .kfprof writer, its baseline, both to a discarding stream (the trace of 1 M
// records with its flows is about 600 MB: to a file, this VM's disk is what would be timed). `--instructions` counts
// both writers per record under callgrind on a tenth of the run (time spreads on a shared VM; instructions do not).
#include "bench_common.h"
#include "instruction_count.h"

#include <kforge/profile_export.h>

#include "common/file_text.h"
#include "common/json_text.h"

#include <malloc.h>

#include <ostream>
#include <streambuf>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

using namespace kforge;

namespace {

constexpr int kRecords = 1'000'000;
constexpr int kRecordsPerCall = 20;      // kernels launched by each function call, as bench_profiling's synthetic trace
constexpr int kCountedRecords = 100'000; // --instructions: callgrind runs 50x slower

// `records` kernels and a function range for each kRecordsPerCall of them (the trace draws a flow from each call to
// each kernel it launched, and its writer looks the call up per record).
ProfileRun makeRun(int records)
{
    ProfileRun run;
    run.device = "cuda";
    run.deviceName = "Synthetic GPU";
    run.iterations = 10;
    run.modules = {ModuleInfo{}};
    const char* functions[] = {"linear", "layer_norm", "gelu", "softmax", "scaled_dot_product_attention"};
    run.records.reserve(size_t(records));
    for (int i = 0; i < records; ++i) {
        KernelRecord k;
        k.kind = "kernel";
        k.name = "sm90_xmma_gemm_bf16_" + std::to_string(i % 40);
        k.modulePath = "blocks." + std::to_string(i % 12) + ".mlp";
        k.function = functions[i / kRecordsPerCall % 5];
        k.op = std::string("aten::") + k.function;
        k.provider = "original";
        k.startNs = 1'000LL * i;
        k.durationNs = 700 + i % 300;
        k.thread = 1;
        k.device = 0;
        k.stream = 7;
        k.grid = {128, 2, 1};
        k.block = {256, 1, 1};
        k.registersPerThread = 64;
        k.correlation = std::uint64_t(i) + 1;
        k.iteration = i / (records / 10);
        if (i % kRecordsPerCall == 0)
            run.ranges.push_back({"function", k.function, "original", k.startNs - 500, 400, 1, k.iteration});
        run.records.push_back(std::move(k));
    }
    return run;
}

// A discarding stream: measures a writer, not the disk.
class NullBuffer : public std::streambuf {
protected:
    int_type overflow(int_type c) override { return traits_type::not_eof(c); }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

const ProfileRun& syntheticRun()
{
    static const ProfileRun run = makeRun(kRecords);
    return run;
}

const std::string& savedPath()
{
    static const std::string path = [] {
        const auto p = std::filesystem::temp_directory_path() / "kforge_bench_1m.kfprof";
        saveProfile(syntheticRun(), p.string());
        return p.string();
    }();
    return path;
}

// A size line of /proc/self/status in bytes: "VmRSS:" (resident now) or "VmHWM:" (the high-water mark since the
// last reset; Linux resets it when 5 is written to clear_refs).
long long statusBytes(const char* key)
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(key, 0) == 0)
            return std::stoll(line.substr(std::strlen(key))) * 1024;
    return -1;
}
void resetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::map<std::string, double> g_peakMiB; // the largest peak above the starting RSS, per benchmark

template <class Work> void measured(benchmark::State& state, const char* name, Work work)
{
    for (auto _ : state) {
        malloc_trim(0); // hand back what the previous iteration freed, so its pages do not hide this one's peak
        resetPeakRss();
        const long long before = statusBytes("VmRSS:");
        work();
        const double peak = double(statusBytes("VmHWM:") - before) / (1 << 20);
        g_peakMiB[name] = std::max(g_peakMiB[name], peak);
    }
    state.counters["records/s"] = benchmark::Counter(double(kRecords), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_KfprofLoad(benchmark::State& state)
{
    savedPath();
    measured(state, "BM_KfprofLoad", [] {
        const ProfileRun run = loadProfile(savedPath());
        benchmark::DoNotOptimize(run.records.data());
    });
}

void BM_KfprofDomParse(benchmark::State& state)
{
    savedPath();
    measured(state, "BM_KfprofDomParse", [] {
        const auto doc = parseJsonText(readTextFile(savedPath(), "is a folder"), savedPath());
        benchmark::DoNotOptimize(&doc);
    });
}

void BM_KfprofSave(benchmark::State& state)
{
    const auto path = (std::filesystem::temp_directory_path() / "kforge_bench_save.kfprof").string();
    syntheticRun();
    measured(state, "BM_KfprofSave", [&] { saveProfile(syntheticRun(), path); });
    std::filesystem::remove(path);
}

void BM_KfprofWrite(benchmark::State& state)
{
    NullBuffer sink;
    std::ostream out(&sink);
    syntheticRun();
    measured(state, "BM_KfprofWrite", [&] { writeProfile({{"baseline", &syntheticRun()}}, out); });
}

void BM_ChromeTraceWrite(benchmark::State& state)
{
    NullBuffer sink;
    std::ostream out(&sink);
    syntheticRun();
    measured(state, "BM_ChromeTraceWrite", [&] { writeChromeTrace(syntheticRun(), out); });
}

BENCHMARK(BM_KfprofLoad)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KfprofDomParse)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KfprofSave)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KfprofWrite)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ChromeTraceWrite)->Unit(benchmark::kMillisecond)->UseRealTime();

void printSummary(kforge_bench::CollectingReporter& reporter)
{
    const auto* load = reporter.stats("BM_KfprofLoad/real_time");
    const auto* dom = reporter.stats("BM_KfprofDomParse/real_time");
    const auto* save = reporter.stats("BM_KfprofSave/real_time");
    const auto* write = reporter.stats("BM_KfprofWrite/real_time");
    const auto* trace = reporter.stats("BM_ChromeTraceWrite/real_time");
    std::printf(
        "\n=== .kfprof of %d records (%.0f MiB on disk): mean of repetitions, peak memory above the start ===\n",
        kRecords, double(std::filesystem::file_size(savedPath())) / (1 << 20));
    const auto line = [&](const char* what, const char* name, const kforge_bench::Stats* s) {
        if (s)
            std::printf("%-34s %8.0f ms   peak %7.0f MiB\n", what, s->mean / 1e6, g_peakMiB[name]);
    };
    line("load (rows decoded while parsed)", "BM_KfprofLoad", load);
    line("DOM parse only (the old reader)", "BM_KfprofDomParse", dom);
    line("save", "BM_KfprofSave", save);
    line(".kfprof writer, no file", "BM_KfprofWrite", write);
    line("Chrome trace writer, no file", "BM_ChromeTraceWrite", trace);
    if (load && save)
        std::printf("load / save: time %.2fx, peak memory %.2fx\n", load->mean / save->mean,
                    g_peakMiB["BM_KfprofLoad"] / std::max(1.0, g_peakMiB["BM_KfprofSave"]));
    if (load && dom)
        std::printf("load / DOM parse: time %.2fx, peak memory %.2fx\n", load->mean / dom->mean,
                    g_peakMiB["BM_KfprofLoad"] / std::max(1.0, g_peakMiB["BM_KfprofDomParse"]));
    if (trace && write)
        std::printf("Chrome trace: %.0f ms per 1 M records (target: under 1,000), %.2fx the .kfprof writer's time\n",
                    trace->mean / 1e6 * (1e6 / kRecords), trace->mean / write->mean);
    if (!std::getenv("KFORGE_BENCH_KEEP"))
        std::filesystem::remove(savedPath());
}

// --instructions: each writer of a kCountedRecords run to a discarding stream, kCountRounds times; per record.
constexpr int kCountRounds = 3;

void countWriters()
{
    const ProfileRun run = makeRun(kCountedRecords);
    NullBuffer sink;
    std::ostream out(&sink);
    for (int round = 0; round < kCountRounds; ++round) {
        kforge_bench::countInstructions(
            "trace#" + std::to_string(round), 1, [&] { writeChromeTrace(run, out); }, 1);
        kforge_bench::countInstructions(
            "kfprof#" + std::to_string(round), 1,
            [&] {
                writeProfile({{"baseline", &run}}, out);
            },
            1);
    }
}

int reportInstructions(const char* self)
{
    const auto counts = kforge_bench::instructionsPerCall(self, {"--instructions-child"});
    if (counts.empty())
        return 1;
    std::printf("\n=== instructions per record (callgrind), a run of %d records, each round ===\n", kCountedRecords);
    for (const char* writer : {"trace", "kfprof"}) {
        std::printf("%-6s", writer);
        for (int round = 0; round < kCountRounds; ++round)
            if (const auto it = counts.find(writer + std::string("#") + std::to_string(round)); it != counts.end())
                std::printf(" %10.1f", it->second / kCountedRecords);
        std::printf("\n");
    }
    const auto trace = counts.find("trace#0"), kfprof = counts.find("kfprof#0");
    if (trace != counts.end() && kfprof != counts.end())
        std::printf("trace / .kfprof writer: %.3fx\n", trace->second / kfprof->second);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--instructions-child") == 0) {
            countWriters();
            return 0;
        }
        if (std::strcmp(argv[i], "--instructions") == 0)
            return reportInstructions(argv[0]);
    }
    return kforge_bench::runBenchmarks(argc, argv, {"--benchmark_repetitions=3"}, printSummary);
}
