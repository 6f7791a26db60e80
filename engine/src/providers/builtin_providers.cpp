// SPDX-License-Identifier: Apache-2.0
#include "providers/builtin_providers.h"

namespace kforge::providers {

void registerBuiltinProviders(ProviderRegistry& registry)
{
    registerAtenReferenceProviders(registry);
    registerTorchSdpaProvider(registry);
    registerCpuProviders(registry);
    registerCudaProviders(registry);
}

} // namespace kforge::providers
