// SPDX-License-Identifier: Apache-2.0
// The cost of a scope's hooks in the number of entries it holds: a forward of builtin:tiny-gpt with N entries for one
// function at one module (a plan with duplicates, or one generated per shape), N = 1k to 16k. The pre-hook pushes N
// providers and the post-hook pops them; each pop once scanned every entry left on the stack, so the forward grew as
// N^2 (320k entries: 128 s). Google Benchmark's complexity fit prints the exponent it sees (O(N) is the target) and
// the per-entry time; nothing passes or fails on time.
//
//   build/bin/bench_scope_entries [--benchmark_repetitions=3]
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/runtime.h>

#include <benchmark/benchmark.h>

#include <memory>

namespace {

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

} // namespace

BENCHMARK_MAIN();
