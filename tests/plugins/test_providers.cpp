// SPDX-License-Identifier: Apache-2.0
// TestMemoizedGeluProvider as a plugin, for suites that do not link the engine tests' helpers (the GUI's Optimize
// tests): every input is served from its memo, so on an observed sample it is faster than ATen on any machine;
// TestSleepyGeluProvider is slower than ATen on any machine (the CLI's bench tests).
#include "memoized_gelu_provider.h"

namespace {

void registerTestProviders(kforge::ProviderRegistry& registry)
{
    registry.add(
        {"TestMemoizedGeluProvider", kforge::Function::Gelu, {"cpu"}, "test: faster than ATen by construction", [] {
             return std::make_unique<kforge::test::MemoizedGeluProvider>(0);
         }});
    // Every call pays the memo's 50 ms sleep for small inputs: slower than ATen by construction (kforge bench's
    // "slower" verdict).
    registry.add(
        {"TestSleepyGeluProvider", kforge::Function::Gelu, {"cpu"}, "test: 50 ms slower per call than ATen", [] {
             return std::make_unique<kforge::test::MemoizedGeluProvider>(INT64_MAX);
         }});
}

} // namespace

KFORGE_PROVIDER_PLUGIN(registerTestProviders)
KFORGE_PROVIDER_PLUGIN_VERSION("test-providers 1.0")
