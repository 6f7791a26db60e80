// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernel generators, as AITune's KernelOptimizer takes them beside providers: given a function and the samples
// observed for it, a generator produces a provider asynchronously. make_plan submits generation while it evaluates
// the ready-made providers, waits at most a timeout for each result, and judges what comes back like any provider
// (correct on the samples, faster than the original). A generated provider is a registered provider type with the
// settings the generator chose, so a saved plan replays it from the file alone, without generating again.
//
// Generators register in GeneratorRegistry: built-in ones at start-up (the CPU autotuner), plugins from their
// KFORGE_GENERATOR_PLUGIN entry point (provider_sdk.h's plugins may have both).
#include <kforge/provider_sdk.h>

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace kforge {

struct GenerationResult {
    // {"type": <registered provider type>, ...settings}: what the plan entry stores. Empty when generation failed.
    nlohmann::json settings;
    std::string error;       // why it failed ("" on success)
    std::string description; // what was generated and why, for the candidate table
};

class KernelGenerator {
public:
    virtual ~KernelGenerator() = default;
    virtual std::string name() const = 0;                // "CpuAutotuner"
    virtual std::vector<Function> functions() const = 0; // the functions it generates providers for
    virtual std::vector<std::string> devices() const { return {"cpu"}; }
    // Whether it can serve every observed sample (boxed argument stacks, as KernelProvider::prepare sees them).
    virtual bool prepare(Function function, const std::vector<torch::jit::Stack>& samples) = 0;
    // Starts generating. The caller may stop waiting (timeout) and forget the future: the work must own what it
    // uses (its copy of the samples, shared state), never the generator object itself. Throwing here, or an
    // exception in the future, counts as a failed generation.
    virtual std::future<GenerationResult> submit(Function function, std::vector<torch::jit::Stack> samples) = 0;
};

struct KernelGeneratorInfo {
    std::string name;
    std::string description;
    std::function<std::unique_ptr<KernelGenerator>()> create;
};

class GeneratorRegistry {
public:
    static GeneratorRegistry& instance();
    // Throws kforge::Error on a duplicate name.
    void add(KernelGeneratorInfo info);
    std::vector<KernelGeneratorInfo> list() const;
    const KernelGeneratorInfo* find(const std::string& name) const;
    // Removes a generator (tests); false when there was none of that name.
    bool remove(const std::string& name);

    GeneratorRegistry();
    struct State;

private:
    std::shared_ptr<State> m_state;
};

} // namespace kforge

// A plugin that also (or only) generates: put KFORGE_GENERATOR_PLUGIN(myRegisterGenerators) in one .cpp, where
// `void myRegisterGenerators(kforge::GeneratorRegistry&)` adds each generator. The plugin still exports
// KFORGE_PROVIDER_PLUGIN (its registration may add no provider type when it has generators).
#define KFORGE_GENERATOR_PLUGIN(registerFunction)                                                                      \
    extern "C" __attribute__((visibility("default"))) void kforge_register_generators(kforge::GeneratorRegistry& r)    \
    {                                                                                                                  \
        registerFunction(r);                                                                                           \
    }
