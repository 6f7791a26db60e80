// SPDX-License-Identifier: Apache-2.0
// TestMemoizedGeluProvider as a plugin, for suites that do not link the engine tests' helpers (the GUI's Optimize
// tests): every input is served from its memo, so on an observed sample it is faster than ATen on any machine.
#include "memoized_gelu_provider.h"

namespace {

void registerTestProviders(kforge::ProviderRegistry& registry)
{
    registry.add(
        {"TestMemoizedGeluProvider", kforge::Function::Gelu, {"cpu"}, "test: faster than ATen by construction", [] {
             return std::make_unique<kforge::test::MemoizedGeluProvider>(0);
         }});
}

} // namespace

KFORGE_PROVIDER_PLUGIN(registerTestProviders)
KFORGE_PROVIDER_PLUGIN_VERSION("test-providers 1.0")
