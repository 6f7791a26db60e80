// SPDX-License-Identifier: Apache-2.0
// The cost of a scope's hooks in the number of entries it holds: a forward of builtin:tiny-gpt with N entries for one
// function at one module (a plan with duplicates, or one generated per shape), N = 1k to 16k. The pre-hook pushes N
// providers and the post-hook pops them; each pop once scanned every entry left on the stack, so the forward grew as
// N^2 (320k entries: 128 s). Google Benchmark's complexity fit prints the exponent it sees (O(N) is the target) and
// the per-entry time; nothing passes or fails on time.
//
// BM_unwindAfterAProviderError: the same scope's N entries (N = 10k, 40k, 80k) all name a provider that throws, so the
// forward fails inside the scope and its call guard unwinds the N entries. Each unwound entry was found by a scan from
// the bottom of its stack, so this too grew as N^2 (40k entries 4.65 s, 80k 14.7 s). The x10k counter is the mean
// time of a failed forward over that of 10k entries, measured in the same run: 4x and 8x is linear.
//
//   build/bin/bench_scope_entries [--benchmark_repetitions=3]
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>

#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace {

class ThrowingGeluBenchProvider final : public kforge::KernelProvider {
public:
    kforge::Function function() const override { return kforge::Function::Gelu; }
    std::string typeName() const override { return "BenchThrowingGeluProvider"; }

protected:
    kforge::CallResult run(const c10::OperatorHandle&, torch::jit::Stack&) override
    {
        throw std::runtime_error("planted failure");
    }
};

void registerThrowingProvider()
{
    static std::once_flag once;
    std::call_once(once, [] {
        kforge::ProviderRegistry::instance().add(
            {"BenchThrowingGeluProvider", kforge::Function::Gelu, {"cpu"}, "bench: throws", [] {
                 return std::make_unique<ThrowingGeluBenchProvider>();
             }});
    });
}

void BM_forwardWithEntriesInOneScope(benchmark::State& state)
{
    auto session = kforge::ModelSession::open("builtin:tiny-gpt");
    kforge::Plan plan;
    for (int i = 0; i < state.range(0); ++i)
        plan.entries.push_back(kforge::parseProvideSpec("blocks.0.mlp:gelu:AtenGeluProvider"));
    kforge::KernelProviderRuntime runtime(*session, plan);
    runtime.activate();
    for (auto _ : state)
        session->forwardDiscardingOutputs();
    runtime.deactivate();
    state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_forwardWithEntriesInOneScope)
    ->RangeMultiplier(2)
    ->Range(1 << 10, 1 << 14)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

void BM_unwindAfterAProviderError(benchmark::State& state)
{
    static double secondsAt10k = 0; // the 10k row runs first (Arg order)
    registerThrowingProvider();
    auto session = kforge::ModelSession::open("builtin:tiny-gpt");
    kforge::Plan plan;
    for (int i = 0; i < state.range(0); ++i)
        plan.entries.push_back(kforge::parseProvideSpec("blocks.0.mlp:gelu:BenchThrowingGeluProvider"));
    kforge::KernelProviderRuntime runtime(*session, plan);
    runtime.activate();
    double seconds = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        try {
            session->forwardDiscardingOutputs();
            state.SkipWithError("the planted provider failure did not surface");
        } catch (const kforge::Error&) {
        }
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        state.PauseTiming();
        runtime.clearLeftoverReports(); // one report per entry per forward: not what is measured
        state.ResumeTiming();
    }
    runtime.deactivate();
    const double perForward = seconds / double(state.iterations());
    if (state.range(0) == 10000)
        secondsAt10k = perForward;
    if (secondsAt10k > 0)
        state.counters["x10k"] = perForward / secondsAt10k;
}
BENCHMARK(BM_unwindAfterAProviderError)->Arg(10000)->Arg(40000)->Arg(80000)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
