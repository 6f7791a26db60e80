// SPDX-License-Identifier: Apache-2.0
#pragma once
// The search both built-in autotuning generators run (cpu_autotuner.cpp, cuda_autotuner.cpp): each configuration
// of one provider type's settings is prepared on the observed samples, checked for correctness against the
// original op, timed (the fastest of a few rounds over every sample, never while make_plan times a candidate), and
// the fastest correct one is emitted as the generated provider's settings.
#include <kforge/generator_sdk.h>

#include <future>
#include <map>
#include <string>
#include <vector>

namespace kforge::optimizer {

// A generator that tunes one provider type per function by that provider's settings. It offers the functions of
// its type map on its device, accepts the samples its provider's default settings accept, and on submit searches the
// configurations the derived class lists on a detached thread (make_plan may stop waiting; the thread owns its data).
class SettingsAutotuner : public KernelGenerator {
public:
    SettingsAutotuner(std::string name, std::string device, std::map<Function, std::string> providerTypes);

    std::string name() const override { return m_name; }
    std::vector<std::string> devices() const override { return {m_device}; }
    std::vector<Function> functions() const override;
    bool prepare(Function function, const std::vector<torch::jit::Stack>& samples) override;
    std::future<GenerationResult> submit(Function function, std::vector<torch::jit::Stack> samples) override;

protected:
    // The settings to try; the first must be `defaults`, the provider's own (the tuner reports its gain over them).
    virtual std::vector<nlohmann::json> configurations(Function function, const nlohmann::json& defaults,
                                                       const std::vector<torch::jit::Stack>& samples) const = 0;

private:
    std::string m_name;
    std::string m_device;
    std::map<Function, std::string> m_providerTypes;
};

// Waits for the queued work of `device` ("cuda"); nothing for the CPU.
void synchronizeDevice(const std::string& device);

} // namespace kforge::optimizer
