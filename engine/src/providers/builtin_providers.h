// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/provider_sdk.h>

namespace kforge::providers {

void registerBuiltinProviders(ProviderRegistry& registry);
void registerAtenReferenceProviders(ProviderRegistry& registry);
void registerTorchSdpaProvider(ProviderRegistry& registry);
void registerCpuProviders(ProviderRegistry& registry);
// Cuda*Provider types (providers/cuda); registers nothing in a build without the CUDA toolkit.
void registerCudaProviders(ProviderRegistry& registry);

} // namespace kforge::providers
