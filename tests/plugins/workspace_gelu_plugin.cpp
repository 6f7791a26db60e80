// SPDX-License-Identifier: Apache-2.0
// TestWorkspaceGeluProvider as a plugin of its own, for suites that do not link the engine tests' helpers (the GUI's
// Memory view): an 8 MiB workspace in every call, as the engine tests' (kWorkspaceGeluBytes). Apart from the
// test_providers plugin, whose suites optimize with every gelu provider loaded: this one's lookup is wrong on a model
// calling gelu on more than one tensor.
#include "workspace_gelu_provider.h"

namespace {

void registerWorkspaceGelu(kforge::ProviderRegistry& registry)
{
    registry.add(
        {"TestWorkspaceGeluProvider", kforge::Function::Gelu, {"cpu"}, "test: an 8 MiB workspace per call", [] {
             return std::make_unique<kforge::test::WorkspaceGeluProvider>(std::int64_t(8) << 20);
         }});
}

} // namespace

KFORGE_PROVIDER_PLUGIN(registerWorkspaceGelu)
KFORGE_PROVIDER_PLUGIN_VERSION("workspace-gelu 1.0")
