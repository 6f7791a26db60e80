// Profiling costs (Profiling issue, Benchmarks):
//  1. attribution + statistics + Chrome trace export of 1,000,000 synthetic CUPTI kernel records
//     (target < 2 s), printed with records/s;
//  2. CPU profiling of builtin:tiny-gpt vs plain forwards, printed as a ratio measured in the same run.
#include "bench_common.h"

#include <kforge/model_session.h>
#include <kforge/profile_export.h>
#include <kforge/profiler.h>

#include "profiling/kernel_attribution.h"

#include <ATen/Parallel.h>

#include <ostream>
#include <streambuf>

using namespace kforge;

namespace {

constexpr int kRecords = 1'000'000;
constexpr int kFunctionCalls = 50'000;

// A discarding stream: measures the trace writer, not the disk.
class NullBuffer : public std::streambuf {
protected:
    int_type overflow(int_type c) override { return traits_type::not_eof(c); }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

struct Synthetic {
    profiling::ParsedActivities activities;
    profiling::HostTables tables;
    profiling::AttributionOptions options;
};

// Kernels with runtime API records and external correlations to function calls and module scopes, as a real
// trace of a transformer would have them (20 kernels per function call, 12 modules, 5 functions).
const Synthetic& synthetic()
{
    static const Synthetic s = [] {
        Synthetic s;
        const char* functions[] = {"linear", "layer_norm", "gelu", "softmax", "scaled_dot_product_attention"};
        for (std::uint64_t m = 1; m <= 12; ++m)
            s.tables.moduleScopes[1'000'000 + m] = "blocks." + std::to_string(m % 2) + ".layer" + std::to_string(m);
        for (std::uint64_t c = 1; c <= kFunctionCalls; ++c)
            s.tables.functionCalls[c] = {"blocks." + std::to_string(c % 2), functions[c % 5],
                                         std::string("aten::") + functions[c % 5], "original"};
        s.tables.iterationStarts = {{0, 0}};
        auto& a = s.activities;
        a.kernels.reserve(kRecords);
        for (std::uint32_t i = 0; i < kRecords; ++i) {
            const std::uint32_t correlation = i + 1;
            profiling::KernelActivity k;
            k.name = i % 3 ? "ampere_sgemm_128x64_tn" : "void at::native::vectorized_elementwise_kernel<4>";
            k.start = 1'000'000 + std::uint64_t(i) * 1000;
            k.end = k.start + 700;
            k.stream = 7;
            k.correlation = correlation;
            k.grid = {int(i % 64) + 1, 1, 1};
            k.block = {128, 1, 1};
            k.registers = 32;
            a.kernels.push_back(std::move(k));
            a.apis.push_back({profiling::ApiKind::Runtime, correlation, 211, k.start - 500, k.start - 400, 1, 1});
            a.externalCorrelations.push_back(
                {profiling::kExternalKindFunctionCall, std::uint64_t(i / 20 % kFunctionCalls) + 1, correlation});
            a.externalCorrelations.push_back(
                {profiling::kExternalKindModuleScope, 1'000'000 + std::uint64_t(i % 12) + 1, correlation});
        }
        s.options.origin = {0, 0};
        s.options.profileStartHostNs = 0;
        return s;
    }();
    return s;
}

void BM_AttributeStatisticsTrace1M(benchmark::State& state)
{
    const Synthetic& s = synthetic();
    NullBuffer sink;
    std::ostream out(&sink);
    for (auto _ : state) {
        ProfileRun run;
        run.device = "cuda";
        run.records = profiling::attributeKernels(s.activities, s.tables, s.options);
        auto byKernel = statistics(run.records, GroupBy::Kernel);
        auto byFunction = statistics(run.records, GroupBy::Function);
        auto byModule = statistics(run.records, GroupBy::Module);
        writeChromeTrace(run, out);
        benchmark::DoNotOptimize(byKernel);
        benchmark::DoNotOptimize(byFunction);
        benchmark::DoNotOptimize(byModule);
    }
    state.counters["records/s"] =
        benchmark::Counter(double(kRecords) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AttributeStatisticsTrace1M)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

std::unique_ptr<ModelSession>& session()
{
    static auto s = ModelSession::open("builtin:tiny-gpt");
    return s;
}

void BM_TinyGptForward(benchmark::State& state)
{
    for (auto _ : state)
        benchmark::DoNotOptimize(session()->forward());
}
BENCHMARK(BM_TinyGptForward)->Unit(benchmark::kMicrosecond);

void BM_TinyGptForwardCpuProfiled(benchmark::State& state)
{
    // Profiling cost per forward: one profile() of 20 measured forwards, no warm-up, per 20 iterations.
    ProfileOptions options;
    options.warmupIterations = 0;
    options.iterations = 20;
    for (auto _ : state)
        benchmark::DoNotOptimize(profile(*session(), options));
    state.SetItemsProcessed(state.iterations() * 20);
}
BENCHMARK(BM_TinyGptForwardCpuProfiled)->Unit(benchmark::kMicrosecond);

} // namespace

int main(int argc, char** argv)
{
    at::set_num_threads(1);
    auto args = kforge_bench::withDefaultFlags(argc, argv, {"--benchmark_repetitions=3", "--benchmark_min_time=0.3"});
    int n = int(args.size()) - 1;
    benchmark::Initialize(&n, args.data());
    if (benchmark::ReportUnrecognizedArguments(n, args.data()))
        return 1;
    kforge_bench::CollectingReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    std::printf("\n== summary (ratios from this run) ==\n");
    if (const auto* a = reporter.stats("BM_AttributeStatisticsTrace1M/iterations:1/real_time"))
        std::printf("attribution + statistics + trace of %d records: %.3f s (min %.3f s), %.2f M records/s "
                    "(target < 2 s)\n",
                    kRecords, a->mean / 1e9, a->min / 1e9, kRecords / (a->min / 1e9) / 1e6);
    const auto* plain = reporter.stats("BM_TinyGptForward", true);
    const auto* profiled = reporter.stats("BM_TinyGptForwardCpuProfiled", true);
    if (plain && profiled)
        std::printf("tiny-gpt forward: %.1f us plain, %.1f us CPU-profiled (%.2fx, thread CPU time)\n",
                    plain->median / 1e3, profiled->median / 20 / 1e3, profiled->median / 20 / plain->median);
    benchmark::Shutdown();
    return 0;
}
