// SPDX-License-Identifier: Apache-2.0
// kforge diff on two captures of 1,000,000 kernel records each (issue 70: at most 2 s): the comparison's tables
// (compare) and the pairing item by item (pairRuns), against the kernel table of one run (statistics) as the baseline
// measured in the same process. B is A with every duration changed, a kernel renamed in every group (another
// library's) and an extra one in some, so the alignment has work to do.
#include "bench_common.h"

#include <kforge/profiling.h>
#include <kforge/run_pairing.h>

#include <cstdio>
#include <string>

using namespace kforge;

namespace {

constexpr int kRecords = 1'000'000;
constexpr int kIterations = 10;

ProfileRun syntheticRun(bool candidate)
{
    ProfileRun run;
    run.device = "cuda";
    run.iterations = kIterations;
    ModuleInfo root;
    for (int m = 0; m < 12; ++m)
        root.children.push_back("blocks." + std::to_string(m) + ".mlp");
    run.modules = {root};
    for (int m = 0; m < 12; ++m) {
        ModuleInfo block;
        block.path = "blocks." + std::to_string(m) + ".mlp";
        block.typeName = "Mlp";
        run.modules.push_back(block);
    }
    const char* functions[] = {"linear", "layer_norm", "gelu", "softmax", "scaled_dot_product_attention"};
    run.records.reserve(kRecords + kRecords / 100);
    for (int i = 0; i < kRecords; ++i) {
        KernelRecord k;
        k.kind = "kernel";
        k.name = (candidate && i % 97 == 0 ? "other_library_gemm_" : "sm90_xmma_gemm_bf16_") + std::to_string(i % 40);
        k.modulePath = "blocks." + std::to_string(i % 12) + ".mlp";
        k.function = functions[i % 5];
        k.startNs = 1'000LL * i;
        k.durationNs = candidate ? 650 + i % 350 : 700 + i % 300;
        k.device = 0;
        k.iteration = i / (kRecords / kIterations);
        run.records.push_back(k);
        if (candidate && i % 101 == 0) { // an extra kernel the reference lacks
            k.name = "extra_reduction";
            k.startNs += 500;
            run.records.push_back(k);
        }
    }
    return run;
}

const ProfileRun& runA()
{
    static const ProfileRun run = syntheticRun(false);
    return run;
}
const ProfileRun& runB()
{
    static const ProfileRun run = syntheticRun(true);
    return run;
}

void BM_KernelTable(benchmark::State& state)
{
    runA();
    for (auto _ : state)
        benchmark::DoNotOptimize(statistics(runA().records, GroupBy::Kernel));
}

void BM_DiffTables(benchmark::State& state)
{
    runA();
    runB();
    for (auto _ : state)
        benchmark::DoNotOptimize(compare(runA(), runB()));
}

void BM_DiffPairing(benchmark::State& state)
{
    runA();
    runB();
    for (auto _ : state) {
        const RunPairing pairing = pairRuns(runA(), runB());
        benchmark::DoNotOptimize(pairing.paired.data());
        state.counters["paired_share_b"] = pairing.pairedShareB;
    }
}

BENCHMARK(BM_KernelTable)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DiffTables)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DiffPairing)->Unit(benchmark::kMillisecond)->UseRealTime();

void printSummary(kforge_bench::CollectingReporter& reporter)
{
    const auto* table = reporter.stats("BM_KernelTable/real_time");
    const auto* tables = reporter.stats("BM_DiffTables/real_time");
    const auto* pairing = reporter.stats("BM_DiffPairing/real_time");
    if (!table || !tables || !pairing)
        return;
    std::printf("\n=== kforge diff of two captures of %d records: mean of repetitions ===\n", kRecords);
    std::printf("one run's kernel table (baseline) %8.0f ms\n", table->mean / 1e6);
    std::printf("the comparison's tables            %8.0f ms  (%.2fx the baseline)\n", tables->mean / 1e6,
                tables->mean / table->mean);
    std::printf("the pairing item by item           %8.0f ms  (%.2fx the baseline)\n", pairing->mean / 1e6,
                pairing->mean / table->mean);
    std::printf("diff in all (tables + pairing)     %8.0f ms  (target: 2000 ms)\n",
                (tables->mean + pairing->mean) / 1e6);
}

} // namespace

int main(int argc, char** argv)
{
    return kforge_bench::runBenchmarks(argc, argv, {"--benchmark_repetitions=3"}, printSummary);
}
