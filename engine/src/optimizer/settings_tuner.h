// SPDX-License-Identifier: Apache-2.0
#pragma once
// The search both built-in autotuning generators run (cpu_autotuner.cpp, cuda_autotuner.cpp): each configuration
// of one provider type's settings is prepared on the observed samples, checked for correctness against the
// original op, timed (the fastest of a few rounds over every sample, never while make_plan times a candidate), and
// the fastest correct one is emitted as the generated provider's settings.
#include <kforge/generator_sdk.h>

#include <functional>
#include <future>
#include <string>
#include <vector>

namespace kforge::optimizer {

struct SettingsSearch {
    Function function;
    std::vector<nlohmann::json> configurations; // the first is the provider's default configuration
    std::string device;                         // "cpu" or "cuda": a CUDA round waits for the device
};

GenerationResult searchSettings(const SettingsSearch& search, const std::vector<torch::jit::Stack>& samples);

// {"type": type} with what the call sites fix: GELU's `approximate` from the first sample.
nlohmann::json providerDefaults(const std::string& type, Function function,
                                const std::vector<torch::jit::Stack>& samples);

// Runs `work` on a detached thread of its own: make_plan may stop waiting, and the work owns what it touches.
std::future<GenerationResult> runDetached(std::function<GenerationResult()> work);

// Waits for the queued work of `device` ("cuda"); nothing for the CPU.
void synchronizeDevice(const std::string& device);

} // namespace kforge::optimizer
