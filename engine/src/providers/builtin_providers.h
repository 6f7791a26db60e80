#pragma once
#include <kforge/provider_sdk.h>

namespace kforge::providers {

void registerBuiltinProviders(ProviderRegistry& registry);
void registerAtenReferenceProviders(ProviderRegistry& registry);
void registerTorchSdpaProvider(ProviderRegistry& registry);

} // namespace kforge::providers
