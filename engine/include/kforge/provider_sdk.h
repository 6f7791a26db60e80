// SPDX-License-Identifier: Apache-2.0
#pragma once
// The provider SDK: the one public header that includes LibTorch, for people who write kernel providers
// (built in, or in a plugin .so). A provider replaces one torch.nn.functional function of the catalog
// (functions.h): it is called with the boxed stack of the function's normal form (FunctionInfo::normalForm:
// every form the function takes in a graph, in place or traced, arrives as that one schema) and leaves the
// normal form's outputs on it. For an in-place call (relu_) the runtime copies the result into the input.
// provider_args.h reads those stacks into one struct per function (parseLayerNorm, parseGelu, ...).
#include <kforge/functions.h>
#include <kforge/provider_args.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <nlohmann/json.hpp>

#include <torch/version.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kforge {

enum class ProviderState { Init, Ready };

// What a provider did with one call. Served: its outputs replace the arguments on the stack. Declined: the stack
// is untouched; the runtime runs the original and reports the call as the original's, with the reason, so that a
// provider is never credited with a call it did not serve (events, `kforge run`, profiles, the GUI).
struct CallResult {
    const char* declined = nullptr; // the reason; a string with static storage duration ("bfloat16 input")
    static CallResult served() { return {}; }
    static CallResult decline(const char* reason) { return {reason}; }
    bool wasServed() const { return declined == nullptr; }
};

// Threads (R12): the runtime installs one instance per plan entry and calls it from every thread that runs a
// forward, at the same time. call() and run() must be safe to run concurrently on one instance: they may read
// the provider's settings but not change any member (keep per-call data on the stack, or guard what must be
// shared, e.g. a cache, with a lock of your own). prepare(), restore() and loadSettings() run before the
// instance is installed, never concurrently with call().
class KernelProvider {
public:
    virtual ~KernelProvider() = default;

    virtual Function function() const = 0;
    // Registry key, unique: "TorchSDPAKernelProvider".
    virtual std::string typeName() const = 0;
    // Type plus settings: "TorchSDPAKernelProvider(backend=MATH)".
    virtual std::string displayName() const { return typeName(); }
    virtual std::vector<std::string> devices() const { return {"cpu"}; }

    // Eligibility on observed samples (each one a boxed argument stack): INIT -> READY. Idempotent; false
    // when some sample is unsupported (the state then stays INIT).
    bool prepare(const std::vector<torch::jit::Stack>& samples);
    ProviderState state() const { return m_state; }

    // Runs the provider: pops the arguments and pushes the outputs, or declines and leaves the stack as it was.
    // `op` is the normal form's op (for Variant forms, the variant's). The runtime has already excluded the
    // interposition key, so torch calls made here reach the real kernels. Throws when not READY.
    CallResult call(const c10::OperatorHandle& op, torch::jit::Stack& stack);

    // Settings as JSON, "type" included. Restoring settings makes the provider READY (as in AITune).
    virtual nlohmann::json settings() const { return {{"type", typeName()}}; }
    void restore(const nlohmann::json& settings);

protected:
    virtual bool supports(const torch::jit::Stack& sample) const { return true; }
    // Serve the call, or decline it (a dtype, shape or device the kernel does not handle) without touching the
    // stack: never run the original yourself, or the call would be credited to the provider.
    virtual CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) = 0;
    // Reads the keys other than "type"; throws kforge::Error naming an unknown key or a bad value.
    virtual void loadSettings(const nlohmann::json& settings);

private:
    ProviderState m_state = ProviderState::Init;
};

struct ProviderTypeInfo {
    std::string typeName;
    Function function;
    std::vector<std::string> devices;
    std::string description;
    std::function<std::unique_ptr<KernelProvider>()> create;
    // JSON-Schema-like description of the settings other than "type", for `kforge providers` and the GUI's
    // plan editor: {"backend": {"type": "string", "enum": [...], "default": "MATH"}}.
    nlohmann::json settingsSchema = nlohmann::json::object();
};

// Process-wide catalogue of provider types.
class ProviderRegistry {
public:
    static ProviderRegistry& instance();
    // Throws kforge::Error on a duplicate type name.
    void add(ProviderTypeInfo info);
    const ProviderTypeInfo* find(const std::string& typeName) const;
    std::vector<ProviderTypeInfo> list() const;
    // Creates a READY provider from its settings ({"type": ..., ...}); throws kforge::Error naming the
    // problem (unknown type, unknown key, bad value).
    std::unique_ptr<KernelProvider> create(const nlohmann::json& settings) const;

    // Adds every type or none: throws kforge::Error naming the first duplicate.
    void addAll(std::vector<ProviderTypeInfo> infos);

private:
    ProviderRegistry();
    friend class PluginStaging;
    struct State;
    std::shared_ptr<State> m_state;
};

// A plugin's registration runs against a staging registry; the loader commits it all at once.
class PluginStaging {
public:
    static ProviderRegistry makeStaging() { return ProviderRegistry(); }
};

} // namespace kforge

// What a plugin exports. Put KFORGE_PROVIDER_PLUGIN(myRegisterFunction) in one .cpp of the plugin, where
// `void myRegisterFunction(kforge::ProviderRegistry&)` calls registry.add(...) for each provider type.
#define KFORGE_PROVIDER_PLUGIN_ABI_VERSION 2 // 2: run() returns CallResult, normal forms
#define KFORGE_PROVIDER_PLUGIN_STRINGIFY2(x) #x
#define KFORGE_PROVIDER_PLUGIN_STRINGIFY(x) KFORGE_PROVIDER_PLUGIN_STRINGIFY2(x)
#define KFORGE_PROVIDER_PLUGIN_ABI_STRING                                                                              \
    "kforge-provider-abi-" KFORGE_PROVIDER_PLUGIN_STRINGIFY(                                                           \
        KFORGE_PROVIDER_PLUGIN_ABI_VERSION) " torch-" TORCH_VERSION                                                    \
                                            " cxx11-abi-" KFORGE_PROVIDER_PLUGIN_STRINGIFY(_GLIBCXX_USE_CXX11_ABI)
#define KFORGE_PROVIDER_PLUGIN(registerFunction)                                                                       \
    extern "C" __attribute__((visibility("default"))) const char* kforge_provider_plugin_abi()                         \
    {                                                                                                                  \
        return KFORGE_PROVIDER_PLUGIN_ABI_STRING;                                                                      \
    }                                                                                                                  \
    extern "C" __attribute__((visibility("default"))) void kforge_register_providers(kforge::ProviderRegistry& r)      \
    {                                                                                                                  \
        registerFunction(r);                                                                                           \
    }
// Optional, beside KFORGE_PROVIDER_PLUGIN: the plugin's own version ("1.4.2"), recorded in the provenance of every
// plan that uses its providers; a plan measured with another version is re-validated where it loads.
#define KFORGE_PROVIDER_PLUGIN_VERSION(text)                                                                           \
    extern "C" __attribute__((visibility("default"))) const char* kforge_provider_plugin_version() { return text; }
