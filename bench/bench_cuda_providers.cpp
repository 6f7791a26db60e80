// SPDX-License-Identifier: Apache-2.0
// The Cuda*Providers (engine/src/providers/cuda) against the ATen ops they replace, on the same activation
// shapes as bench_providers (CPU), in float32, bfloat16 and float16:
//
//   layer_norm  [8,512,768] over 768, weight and bias      (BERT-base / GPT-2 small hidden states)
//   rms_norm    [8,512,768] over 768, weight, eps None
//   gelu        [8,512,768] (none and tanh), [32,128,4096] (none: an MLP up-projection)
//   silu        [8,512,768], [32,128,4096]
//   softmax     [8,12,512,512] over the last dim           (attention scores, 12 heads, 512 tokens)
//
// Both sides go through the boxed path the runtime uses (KernelProvider::call against OperatorHandle::callBoxed)
// and allocate their output, as in a forward. Device time: one benchmark iteration launches kBatch calls back to
// back between two CUDA events on the current stream (as a forward does: no host sync between calls), so the
// time per call includes the boxed call's host cost only where it exceeds the kernel's. Before timing, every
// case checks the provider's output against ATen's (max |diff|). The summary gives provider/ATen ratios of the
// means and medians of repetitions measured in this run; above 1 the provider is slower.
// Without a CUDA device (or a build without the toolkit) it says so and exits 0.
#include "bench_common.h"

#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <torch/cuda.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kBatch = 20; // calls between the two events of one iteration

struct Case {
    std::string label; // "layer_norm [8,512,768] bf16"
    c10::OperatorHandle op;
    std::unique_ptr<kforge::KernelProvider> provider;
    torch::jit::Stack args;
    double maxDiff = 0.0;
};
std::vector<std::unique_ptr<Case>> gCases;

const char* dtypeText(at::ScalarType t) { return t == at::kBFloat16 ? "bf16" : t == at::kHalf ? "f16" : "f32"; }

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

void BM_case(benchmark::State& state, Case* c, bool provider)
{
    at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
    for (auto _ : state) {
        const auto stream = at::cuda::getCurrentCUDAStream();
        start.record(stream);
        for (int i = 0; i < kBatch; ++i)
            benchmark::DoNotOptimize(runOnce(*c, provider).const_data_ptr());
        stop.record(stream);
        stop.synchronize();
        state.SetIterationTime(double(start.elapsed_time(stop)) / 1e3 / kBatch);
    }
}

c10::OperatorHandle opFor(const std::string& function)
{
    return c10::Dispatcher::singleton().findSchemaOrThrow(("aten::" + function).c_str(),
                                                          function == "softmax" ? "int" : "");
}

void addCase(const std::string& function, const std::string& variant, std::vector<int64_t> shape, at::ScalarType dtype)
{
    auto c = std::make_unique<Case>(Case{"", opFor(function), nullptr, {}, 0.0});
    at::manual_seed(42);
    const auto cuda = at::TensorOptions().device(at::kCUDA);
    const at::Tensor x = (at::randn(shape, cuda) * 2.0).to(dtype);
    const int64_t hidden = shape.back();
    const auto weight = [&] { return (at::randn({hidden}, cuda) * 0.1 + 1.0).to(dtype); };
    auto& registry = kforge::ProviderRegistry::instance();
    if (function == "layer_norm") {
        c->provider = registry.create({{"type", "CudaLayerNormProvider"}});
        c->args = {x, std::vector<int64_t>{hidden}, weight(), (at::randn({hidden}, cuda) * 0.1).to(dtype), 1e-5, true};
    } else if (function == "rms_norm") {
        c->provider = registry.create({{"type", "CudaRmsNormProvider"}});
        c->args = {x, std::vector<int64_t>{hidden}, weight(), c10::IValue()};
    } else if (function == "gelu") {
        const std::string form = variant.empty() ? "none" : variant;
        c->provider = registry.create({{"type", "CudaGeluProvider"}, {"approximate", form}});
        c->args = {x, form};
    } else if (function == "silu") {
        c->provider = registry.create({{"type", "CudaSiluProvider"}});
        c->args = {x};
    } else if (function == "softmax") {
        c->provider = registry.create({{"type", "CudaSoftmaxProvider"}});
        c->args = {x, int64_t{-1}, c10::IValue()};
    }
    c->label = function + (variant.empty() ? "" : "(" + variant + ")") + " " + kforge_bench::shapeText(shape) + " " +
               dtypeText(dtype);
    // Same answer as ATen (warms both paths up too).
    const at::Tensor mine = runOnce(*c, true), theirs = runOnce(*c, false);
    c->maxDiff = (mine.to(at::kFloat) - theirs.to(at::kFloat)).abs().max().item<double>();

    Case* p = c.get();
    for (const bool provider : {false, true})
        benchmark::RegisterBenchmark((c->label + (provider ? "/provider" : "/aten")).c_str(), BM_case, p, provider)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
    gCases.push_back(std::move(c));
}

// Google Benchmark names manual-time runs "NAME/manual_time".
const kforge_bench::Stats* manualTimeStats(kforge_bench::CollectingReporter& rep, const std::string& name)
{
    const auto* stats = rep.stats(name + "/manual_time");
    return stats ? stats : rep.stats(name);
}

void printSummary(kforge_bench::CollectingReporter& rep)
{
    std::printf("\n=== CUDA provider vs ATen: device time per call (%d calls between events), mean of repetitions "
                "[median]; ratio = provider / ATen (< 1: provider faster) ===\n",
                kBatch);
    std::printf("device: %s\n", at::cuda::getCurrentDeviceProperties()->name);
    std::printf("%-32s %10s %10s %7s %7s %9s  %s\n", "case", "ATen us", "prov us", "ratio", "[med]", "max|diff|",
                "verdict");
    int reps = 0;
    for (const auto& c : gCases) {
        const auto* a = manualTimeStats(rep, c->label + "/aten");
        const auto* p = manualTimeStats(rep, c->label + "/provider");
        if (!a || !p)
            continue;
        reps = a->reps;
        const double ratio = p->mean / a->mean, ratioMedian = p->median / a->median;
        const char* verdict = ratio < 1 && ratioMedian < 1   ? "provider faster"
                              : ratio > 1 && ratioMedian > 1 ? "provider SLOWER"
                                                             : "mixed (noise)";
        std::printf("%-32s %10.2f %10.2f %7.3f %7.3f %9.2e  %s\n", c->label.c_str(), a->mean / 1e3, p->mean / 1e3,
                    ratio, ratioMedian, c->maxDiff, verdict);
    }
    std::printf("(%d repetitions per row)\n", reps);
}

} // namespace

int main(int argc, char** argv)
{
    if (!torch::cuda::is_available()) {
        std::printf("bench_cuda_providers: no CUDA device is visible; nothing to measure\n");
        return 0;
    }
    if (!kforge::ProviderRegistry::instance().find("CudaLayerNormProvider")) {
        std::printf("bench_cuda_providers: the engine was built without the CUDA toolkit (no Cuda*Provider)\n");
        return 0;
    }
    for (at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf})
        for (const auto& c : kforge_bench::activationCases())
            addCase(c.function, c.variant, c.shape, dtype);
    std::printf("correctness before timing (provider vs ATen, max |diff|):\n");
    for (const auto& c : gCases)
        std::printf("  %-34s %.3e\n", c->label.c_str(), c->maxDiff);

    const int status = kforge_bench::runBenchmarks(
        argc, argv,
        {"--benchmark_repetitions=5", "--benchmark_min_time=0.02", "--benchmark_enable_random_interleaving=true"},
        printSummary);
    gCases.clear();
    return status;
}
