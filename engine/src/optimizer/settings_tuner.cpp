// SPDX-License-Identifier: Apache-2.0
#include "optimizer/settings_tuner.h"

#include "measure/benchmark_lock.h"
#include "measure/correctness.h"
#include "providers/settings_text.h"
#include "runtime/clock.h"
#include "runtime/mode_key.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#ifdef KFORGE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include <cstdio>
#include <limits>
#include <mutex>
#include <thread>

namespace kforge::optimizer {
namespace {

// The fastest of `rounds` rounds over every sample, in µs (one untimed round first).
double bestRoundUs(KernelProvider& provider, const c10::OperatorHandle& op,
                   const std::vector<torch::jit::Stack>& samples, const std::string& device, int rounds)
{
    double best = std::numeric_limits<double>::infinity();
    for (int round = -1; round < rounds; ++round) {
        std::vector<torch::jit::Stack> inputs = samples;
        synchronizeDevice(device);
        const std::int64_t start = runtime::nowNs();
        for (auto& stack : inputs)
            provider.call(op, stack);
        synchronizeDevice(device);
        if (round >= 0)
            best = std::min(best, double(runtime::nowNs() - start) / 1000.0);
    }
    return best;
}

std::string settingsText(const nlohmann::json& settings)
{
    const std::string text = providers::settingsText(settings);
    return text.empty() ? "default settings" : text;
}

struct SettingsSearch {
    Function function;
    std::vector<nlohmann::json> configurations; // the first is the provider's default configuration
    std::string device;                         // "cpu" or "cuda": a CUDA round waits for the device
};

// {"type": type} with what the call sites fix: GELU's `approximate` from the first sample.
nlohmann::json providerDefaults(const std::string& type, Function function,
                                const std::vector<torch::jit::Stack>& samples)
{
    nlohmann::json base{{"type", type}};
    if (function == Function::Gelu) { // the call sites' own GELU: the first sample's approximate decides
        const c10::IValue& approximate = samples.front().back();
        base["approximate"] = approximate.isString() ? approximate.toStringRef() : std::string("none");
    }
    return base;
}

GenerationResult searchSettings(const SettingsSearch& search, const std::vector<torch::jit::Stack>& samples)
{
    at::NoGradGuard noGrad;
    c10::impl::ExcludeDispatchKeyGuard noInterposer(runtime::kModeKey);
    const OpOverload& normal = functionInfo(search.function).normalForm;
    const auto op = c10::Dispatcher::singleton().findSchema({std::string(normal.name), std::string(normal.overload)});
    if (!op)
        return {{}, "the op " + qualifiedOpName(normal) + " is missing from this LibTorch", {}};
    nlohmann::json best;
    double bestUs = std::numeric_limits<double>::infinity(), defaultUs = 0;
    int tried = 0, correct = 0;
    std::string firstError;
    for (const nlohmann::json& settings : search.configurations) {
        try {
            auto provider = ProviderRegistry::instance().create(settings);
            if (!provider->prepare(samples))
                continue;
            ++tried;
            if (!measure::checkProvider(*provider, *op, samples).passed)
                continue;
            ++correct;
            double us;
            {
                std::lock_guard timing(measure::benchmarkMutex()); // never while make_plan times a candidate
                us = bestRoundUs(*provider, *op, samples, search.device, 5);
            }
            if (settings == search.configurations.front())
                defaultUs = us;
            if (us < bestUs) {
                bestUs = us;
                best = settings;
            }
        } catch (const std::exception& e) { // one configuration that cannot be built or run costs only itself
            if (firstError.empty())
                firstError = settingsText(settings) + ": " + e.what();
        }
    }
    if (best.is_null())
        return {{},
                (tried ? "no configuration was correct on the samples" : "no configuration accepts the samples") +
                    (firstError.empty() ? std::string() : " (first error: " + firstError + ")"),
                {}};
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: %.1f us per round over %zu samples, %.2fx the default settings (%d of %d "
                  "configurations correct)",
                  settingsText(best).c_str(), bestUs, samples.size(), defaultUs > 0 ? defaultUs / bestUs : 1.0, correct,
                  tried);
    return {best, {}, line};
}

} // namespace

void synchronizeDevice(const std::string& device)
{
#ifdef KFORGE_WITH_CUDA
    if (device == "cuda")
        cudaDeviceSynchronize();
#endif
}

SettingsAutotuner::SettingsAutotuner(std::string name, std::string device,
                                     std::map<Function, std::string> providerTypes)
    : m_name(std::move(name)), m_device(std::move(device)), m_providerTypes(std::move(providerTypes))
{
}

std::vector<Function> SettingsAutotuner::functions() const
{
    std::vector<Function> out;
    for (const auto& [function, _] : m_providerTypes)
        out.push_back(function);
    return out;
}

bool SettingsAutotuner::prepare(Function function, const std::vector<torch::jit::Stack>& samples)
{
    const auto type = m_providerTypes.find(function);
    if (type == m_providerTypes.end() || samples.empty() || !ProviderRegistry::instance().find(type->second))
        return false;
    return ProviderRegistry::instance().create(providerDefaults(type->second, function, samples))->prepare(samples);
}

std::future<GenerationResult> SettingsAutotuner::submit(Function function, std::vector<torch::jit::Stack> samples)
{
    SettingsSearch search{
        function, configurations(function, providerDefaults(m_providerTypes.at(function), function, samples), samples),
        m_device};
    auto promise = std::make_shared<std::promise<GenerationResult>>();
    std::future<GenerationResult> result = promise->get_future();
    std::thread([promise, search = std::move(search), samples = std::move(samples)] {
        try {
            promise->set_value(searchSettings(search, samples));
        } catch (...) {
            promise->set_exception(std::current_exception());
        }
    }).detach();
    return result;
}

} // namespace kforge::optimizer
