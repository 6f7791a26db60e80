// SPDX-License-Identifier: Apache-2.0
// The Cpu*Providers (engine/src/providers/cpu) against the ATen ops they replace, on activation shapes from
// real models, float32 and bfloat16, with one intra-op thread and with ATen's default thread count:
//
//   layer_norm  [8,512,768] over 768, weight and bias      (BERT-base / GPT-2 small hidden states)
//   rms_norm    [8,512,768] over 768, weight, eps None
//   gelu        [8,512,768] (none and tanh), [32,128,4096] (none: an MLP up-projection)
//   silu        [8,512,768], [32,128,4096]
//   softmax     [8,12,512,512] over the last dim           (attention scores, 12 heads, 512 tokens)
//
// Both sides go through the boxed path the runtime uses: `provider` is KernelProvider::call, `aten` is the
// op's own kernel through OperatorHandle::callBoxed (what AtenReferenceProvider runs). Each allocates its
// output, as in a forward. Before timing, every case checks the provider's output against ATen's (max |diff|).
// The summary after the run gives provider/ATen time ratios from the means (and medians) of repetitions
// measured in this run, interleaved at random; a ratio above 1 means the provider is slower. The verdict
// column says "faster" or "SLOWER" only when the mean, median and (one thread) CPU-time ratios agree.
#include "bench_common.h"

#include "providers/cpu/cpu_kernels.h"

#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace cpu = kforge::providers::cpu;

struct Case {
    std::string function; // "layer_norm"
    std::string variant;  // "" or "tanh"
    std::vector<int64_t> shape;
    at::ScalarType dtype;
    c10::OperatorHandle op;
    std::unique_ptr<kforge::KernelProvider> provider;
    torch::jit::Stack args;
    std::string label; // "layer_norm [8,512,768] bf16"
    double maxDiff = 0.0;
};
std::vector<std::unique_ptr<Case>> gCases;
std::vector<int> gThreadCounts;

const char* dtypeText(at::ScalarType t) { return t == at::kBFloat16 ? "bf16" : "f32"; }

at::Tensor runOnce(Case& c, bool provider)
{
    at::NoGradGuard noGrad;
    torch::jit::Stack stack = c.args;
    if (provider)
        c.provider->call(c.op, stack);
    else
        c.op.callBoxed(stack);
    return stack.back().toTensor();
}

void BM_case(benchmark::State& state, Case* c, bool provider, int threads)
{
    const int before = at::get_num_threads();
    at::set_num_threads(threads);
    for (auto _ : state) {
        at::Tensor out = runOnce(*c, provider);
        benchmark::DoNotOptimize(out.const_data_ptr());
    }
    at::set_num_threads(before);
}

void addCase(const std::string& function, const std::string& variant, std::vector<int64_t> shape, at::ScalarType dtype)
{
    auto c = std::make_unique<Case>(Case{function,
                                         variant,
                                         shape,
                                         dtype,
                                         c10::Dispatcher::singleton().findSchemaOrThrow(
                                             function == "softmax" ? "aten::softmax" : ("aten::" + function).c_str(),
                                             function == "softmax" ? "int" : ""),
                                         nullptr,
                                         {},
                                         "",
                                         0.0});
    at::manual_seed(42);
    const at::Tensor x = (at::randn(shape) * 2.0).to(dtype);
    const int64_t hidden = shape.back();
    if (function == "layer_norm") {
        c->provider = kforge::ProviderRegistry::instance().create({{"type", "CpuFusedLayerNormProvider"}});
        c->args = {x,
                   std::vector<int64_t>{hidden},
                   (at::randn({hidden}) * 0.1 + 1.0).to(dtype),
                   (at::randn({hidden}) * 0.1).to(dtype),
                   1e-5,
                   true};
    } else if (function == "rms_norm") {
        c->provider = kforge::ProviderRegistry::instance().create({{"type", "CpuRmsNormProvider"}});
        c->args = {x, std::vector<int64_t>{hidden}, (at::randn({hidden}) * 0.1 + 1.0).to(dtype), c10::IValue()};
    } else if (function == "gelu") {
        const std::string form = variant.empty() ? "none" : variant;
        c->provider = kforge::ProviderRegistry::instance().create({{"type", "CpuGeluProvider"}, {"approximate", form}});
        c->args = {x, form};
    } else if (function == "silu") {
        c->provider = kforge::ProviderRegistry::instance().create({{"type", "CpuSiluProvider"}});
        c->args = {x};
    } else if (function == "softmax") {
        c->provider = kforge::ProviderRegistry::instance().create({{"type", "CpuOnlineSoftmaxProvider"}});
        c->args = {x, int64_t{-1}, c10::IValue()};
    }
    c->label = function + (variant.empty() ? "" : "(" + variant + ")") + " " + kforge_bench::shapeText(shape) + " " +
               dtypeText(dtype);
    // Same answer as ATen (warms both paths up too).
    const at::Tensor mine = runOnce(*c, true), theirs = runOnce(*c, false);
    c->maxDiff = (mine.to(at::kFloat) - theirs.to(at::kFloat)).abs().max().item<double>();

    Case* p = c.get();
    for (int threads : gThreadCounts) {
        const std::string base = c->label + " t" + std::to_string(threads) + "/";
        benchmark::RegisterBenchmark((base + "aten").c_str(), BM_case, p, false, threads)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark((base + "provider").c_str(), BM_case, p, true, threads)
            ->Unit(benchmark::kMillisecond);
    }
    gCases.push_back(std::move(c));
}

void printSummary(kforge_bench::CollectingReporter& rep)
{
    std::printf("\n=== provider vs ATen: time per call, mean of repetitions [median]; ratio = provider / ATen "
                "(< 1: provider faster, > 1: provider slower) ===\n");
    std::printf("kernels: %s (ATen: %s); threads: 1 and ATen's default %d\n", cpu::kernels().name,
                at::get_cpu_capability().c_str(), gThreadCounts.back());
    std::printf("wall: real time. cpu: CPU time of the calling thread, less disturbed by other load on the machine "
                "but, with more than one thread, blind to the worker threads (so shown for 1 thread only).\n");
    std::printf("%-30s %3s %10s %10s %7s %7s %10s %10s %7s %9s\n", "case", "thr", "ATen ms", "prov ms", "wall", "[med]",
                "ATen cpu", "prov cpu", "cpu", "max|diff|");
    int reps = 0;
    for (const auto& c : gCases) {
        for (int threads : gThreadCounts) {
            const std::string base = c->label + " t" + std::to_string(threads) + "/";
            const auto* a = rep.stats(base + "aten");
            const auto* p = rep.stats(base + "provider");
            if (!a || !p)
                continue;
            reps = a->reps;
            const double ratio = p->mean / a->mean, ratioMedian = p->median / a->median;
            std::printf("%-30s %3d %10.3f %10.3f %7.3f %7.3f", c->label.c_str(), threads, a->mean / 1e6, p->mean / 1e6,
                        ratio, ratioMedian);
            const auto* ac = rep.stats(base + "aten", true);
            const auto* pc = rep.stats(base + "provider", true);
            const bool haveCpu = threads == 1 && ac && pc;
            const double ratioCpu = haveCpu ? pc->mean / ac->mean : ratio;
            if (haveCpu)
                std::printf(" %10.3f %10.3f %7.3f", ac->mean / 1e6, pc->mean / 1e6, ratioCpu);
            else
                std::printf(" %10s %10s %7s", "-", "-", "-");
            // A verdict only where every measure agrees; a loaded machine makes them disagree.
            const char* verdict = ratio < 1 && ratioMedian < 1 && ratioCpu < 1   ? "provider faster"
                                  : ratio > 1 && ratioMedian > 1 && ratioCpu > 1 ? "provider SLOWER"
                                                                                 : "mixed (noise)";
            std::printf(" %9.2e  %s\n", c->maxDiff, verdict);
        }
    }
    std::printf("(%d repetitions per row; the aggregate rows above give sd and cv)\n", reps);
}

} // namespace

int main(int argc, char** argv)
{
    const int defaultThreads = at::get_num_threads();
    gThreadCounts = {1};
    if (defaultThreads > 1)
        gThreadCounts.push_back(defaultThreads);

    for (at::ScalarType dtype : {at::kFloat, at::kBFloat16})
        for (const auto& c : kforge_bench::activationCases())
            addCase(c.function, c.variant, c.shape, dtype);
    std::printf("correctness before timing (provider vs ATen, max |diff|):\n");
    for (const auto& c : gCases)
        std::printf("  %-34s %.3e\n", c->label.c_str(), c->maxDiff);

    const int status = kforge_bench::runBenchmarks(
        argc, argv,
        {"--benchmark_repetitions=5", "--benchmark_min_time=0.2", "--benchmark_enable_random_interleaving=true"},
        printSummary);
    gCases.clear();
    return status;
}
