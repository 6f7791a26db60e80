// SPDX-License-Identifier: Apache-2.0
// Plan reading and validation at scale (docs/design/plan-format.md promises validation linear in the entries):
// plans of 1,000 and 100,000 entries for builtin:tiny-gpt (tests/engine/huge_plan.h: entries cycling over
// every valid (scope, function, provider), every 100th with a missing scope), timed for
//   validate  validatePlan on the plan in memory
//   read      readPlan of the saved file (JSON parse + type checks)
// The summary gives time per entry and the 100k / 1k ratio per entry from means measured in this run: about
// 1 means linear; well above 1 means something grows faster than the plan. Never pass/fail on time.
#include "bench_common.h"

#include "../tests/engine/huge_plan.h"

#include <kforge/model_session.h>
#include <kforge/plan.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <unistd.h>

namespace {

std::unique_ptr<kforge::ModelSession> gSession;
std::map<size_t, kforge::Plan> gPlans;
std::map<size_t, std::string> gFiles;
const size_t kSizes[] = {1000, 100000};

void BM_Validate(benchmark::State& state)
{
    const kforge::Plan& plan = gPlans.at(size_t(state.range(0)));
    for (auto _ : state)
        benchmark::DoNotOptimize(kforge::validatePlan(plan, *gSession, "cpu"));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Validate)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_Read(benchmark::State& state)
{
    const std::string& file = gFiles.at(size_t(state.range(0)));
    for (auto _ : state)
        benchmark::DoNotOptimize(kforge::readPlan(file));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Read)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

void printSummary(kforge_bench::CollectingReporter& reporter)
{
    std::printf("\n=== time per plan entry, mean of repetitions [median]; ratio = 100k / 1k per entry ===\n");
    for (const char* name : {"BM_Validate", "BM_Read"}) {
        const auto* small = reporter.stats(std::string(name) + "/1000");
        const auto* large = reporter.stats(std::string(name) + "/100000");
        if (!small || !large)
            continue;
        const double perSmall = small->mean / 1000, perLarge = large->mean / 100000;
        std::printf("%-12s 1k: %8.0f ns/entry [%8.0f]   100k: %8.0f ns/entry [%8.0f] (%.1f ms total)   ratio %.2f\n",
                    name + 3, perSmall, small->median / 1000, perLarge, large->median / 100000, large->mean / 1e6,
                    perLarge / perSmall);
    }
}

} // namespace

int main(int argc, char** argv)
{
    gSession = kforge::ModelSession::open("builtin:tiny-gpt");
    const auto dir = std::filesystem::temp_directory_path() / ("kforge-bench-plans-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (size_t size : kSizes) {
        gPlans[size] = kforge::test::hugePlan(*gSession, size);
        gFiles[size] = (dir / (std::to_string(size) + ".kfplan.json")).string();
        kforge::savePlan(gPlans[size], gFiles[size]);
    }
    const int status = kforge_bench::runBenchmarks(
        argc, argv, {"--benchmark_repetitions=5", "--benchmark_enable_random_interleaving=true"}, printSummary);
    std::filesystem::remove_all(dir);
    gSession.reset();
    return status;
}
