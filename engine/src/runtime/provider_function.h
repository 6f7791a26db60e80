#pragma once
#include <kforge/provider_sdk.h>

#include <memory>
#include <string>

namespace kforge::runtime {

// A provider exposed as a plain callable bearing the function's name (AITune's _create_provider_function):
// events, traces and errors show "gelu" and the provider, not an object.
struct ProviderFunction {
    Function function;
    const char* functionName; // interned
    const char* providerName; // interned display name
    std::shared_ptr<KernelProvider> provider;
};
using ProviderFunctionPtr = std::shared_ptr<const ProviderFunction>;

ProviderFunctionPtr makeProviderFunction(std::shared_ptr<KernelProvider> provider);
inline const char* nameOf(const ProviderFunction* fn) { return fn ? fn->providerName : "original"; }

} // namespace kforge::runtime
