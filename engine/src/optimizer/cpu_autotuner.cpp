// SPDX-License-Identifier: Apache-2.0
#include "optimizer/cpu_autotuner.h"

#include "optimizer/benchmark_lock.h"
#include "optimizer/correctness.h"
#include "providers/cpu/cpu_kernels.h"
#include "runtime/clock.h"
#include "runtime/mode_key.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

namespace kforge::optimizer {
namespace {

// The provider type the autotuner tunes per function.
const std::map<Function, std::string>& tunedTypes()
{
    static const std::map<Function, std::string> types{{Function::Gelu, "CpuGeluProvider"},
                                                       {Function::Silu, "CpuSiluProvider"},
                                                       {Function::LayerNorm, "CpuFusedLayerNormProvider"},
                                                       {Function::RmsNorm, "CpuRmsNormProvider"},
                                                       {Function::Softmax, "CpuOnlineSoftmaxProvider"}};
    return types;
}

// The configurations tried: every kernel set this CPU runs, three chunk sizes around ATen's, and (with more than one
// intra-op thread) one thread against all. The first is the provider's default configuration.
std::vector<nlohmann::json> configurations(const nlohmann::json& base)
{
    std::vector<nlohmann::json> out{base};
    const std::vector<int> threadCaps = at::get_num_threads() > 1 ? std::vector<int>{0, 1} : std::vector<int>{0};
    for (const providers::cpu::Isa isa : providers::cpu::availableIsas())
        for (const std::int64_t grain : {8192, 32768, 131072})
            for (const int threads : threadCaps) {
                nlohmann::json s = base;
                s["isa"] = std::string(providers::cpu::isaName(isa));
                if (grain != 32768)
                    s["grain_elements"] = grain;
                if (threads)
                    s["max_threads"] = threads;
                out.push_back(std::move(s));
            }
    return out;
}

// The fastest of `rounds` rounds over every sample, in µs (one untimed round first).
double bestRoundUs(KernelProvider& provider, const c10::OperatorHandle& op,
                   const std::vector<torch::jit::Stack>& samples, int rounds)
{
    double best = std::numeric_limits<double>::infinity();
    for (int round = -1; round < rounds; ++round) {
        std::vector<torch::jit::Stack> inputs = samples;
        const std::int64_t start = runtime::nowNs();
        for (auto& stack : inputs)
            provider.call(op, stack);
        if (round >= 0)
            best = std::min(best, double(runtime::nowNs() - start) / 1000.0);
    }
    return best;
}

std::string settingsText(const nlohmann::json& settings)
{
    std::string out;
    for (const auto& [key, value] : settings.items())
        if (key != "type")
            out +=
                (out.empty() ? "" : ", ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    return out.empty() ? "default settings" : out;
}

GenerationResult tune(Function function, const std::vector<torch::jit::Stack>& samples)
{
    at::NoGradGuard noGrad;
    c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
    const OpOverload& normal = functionInfo(function).normalForm;
    const auto op = c10::Dispatcher::singleton().findSchema({std::string(normal.name), std::string(normal.overload)});
    if (!op)
        return {{}, "the op " + qualifiedOpName(normal) + " is missing from this LibTorch", {}};
    nlohmann::json base{{"type", tunedTypes().at(function)}};
    if (function == Function::Gelu) { // the call sites' own GELU: the first sample's approximate decides
        const c10::IValue& approximate = samples.front().back();
        base["approximate"] = approximate.isString() ? approximate.toStringRef() : std::string("none");
    }
    nlohmann::json best;
    double bestUs = std::numeric_limits<double>::infinity(), defaultUs = 0;
    int tried = 0, correct = 0;
    for (const nlohmann::json& settings : configurations(base)) {
        auto provider = ProviderRegistry::instance().create(settings);
        if (!provider->prepare(samples))
            continue;
        ++tried;
        if (!checkProvider(*provider, *op, samples).passed)
            continue;
        ++correct;
        double us;
        {
            std::lock_guard timing(benchmarkMutex()); // never while make_plan times a candidate
            us = bestRoundUs(*provider, *op, samples, 5);
        }
        if (settings == base)
            defaultUs = us;
        if (us < bestUs) {
            bestUs = us;
            best = settings;
        }
    }
    if (best.is_null())
        return {{}, tried ? "no configuration was correct on the samples" : "no configuration accepts the samples", {}};
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: %.1f us per round over %zu samples, %.2fx the default settings (%d of %d "
                  "configurations correct)",
                  settingsText(best).c_str(), bestUs, samples.size(), defaultUs > 0 ? defaultUs / bestUs : 1.0, correct,
                  tried);
    return {best, {}, line};
}

class CpuAutotuner final : public KernelGenerator {
public:
    std::string name() const override { return "CpuAutotuner"; }
    std::vector<Function> functions() const override
    {
        std::vector<Function> out;
        for (const auto& [function, _] : tunedTypes())
            out.push_back(function);
        return out;
    }
    bool prepare(Function function, const std::vector<torch::jit::Stack>& samples) override
    {
        const auto type = tunedTypes().find(function);
        if (type == tunedTypes().end() || samples.empty())
            return false;
        nlohmann::json settings{{"type", type->second}};
        if (function == Function::Gelu && samples.front().back().isString())
            settings["approximate"] = samples.front().back().toStringRef();
        return ProviderRegistry::instance().create(settings)->prepare(samples);
    }
    std::future<GenerationResult> submit(Function function, std::vector<torch::jit::Stack> samples) override
    {
        // A thread of its own, detached: make_plan may stop waiting, and the work owns everything it touches.
        auto promise = std::make_shared<std::promise<GenerationResult>>();
        std::future<GenerationResult> result = promise->get_future();
        std::thread([promise, function, samples = std::move(samples)] {
            try {
                promise->set_value(tune(function, samples));
            } catch (...) {
                promise->set_exception(std::current_exception());
            }
        }).detach();
        return result;
    }
};

} // namespace

void registerCpuAutotuner(GeneratorRegistry& registry)
{
    registry.add({"CpuAutotuner",
                  "Tunes the KernelForge CPU providers (gelu, silu, layer_norm, rms_norm, softmax) on the observed "
                  "samples: kernel set (default, AVX2, AVX-512), work per parallel chunk and thread cap; emits the "
                  "fastest correct configuration as the provider's settings.",
                  [] { return std::make_unique<CpuAutotuner>(); }});
}

} // namespace kforge::optimizer
