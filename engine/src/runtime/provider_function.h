// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/functions.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace kforge {
class KernelProvider; // kforge/provider_sdk.h: its dispatcher headers stay out of what only stores providers
} // namespace kforge

namespace kforge::runtime {

// A provider exposed as a plain callable bearing the function's name (AITune's _create_provider_function):
// events, traces and errors show "gelu" and the provider, not an object.
struct ProviderFunction {
    Function function;
    const char* functionName; // interned
    const char* providerName; // interned display name
    std::shared_ptr<KernelProvider> provider;
    // Calls the provider declined (CallResult) and the latest reason, for KernelProviderRuntime::declines().
    mutable std::atomic<std::uint64_t> declines{0};
    mutable std::atomic<const char*> lastDecline{nullptr};
};
using ProviderFunctionPtr = std::shared_ptr<const ProviderFunction>;

ProviderFunctionPtr makeProviderFunction(std::shared_ptr<KernelProvider> provider);
inline const char* nameOf(const ProviderFunction* fn) { return fn ? fn->providerName : "original"; }

} // namespace kforge::runtime
