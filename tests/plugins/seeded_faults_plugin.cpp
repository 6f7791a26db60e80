// SPDX-License-Identifier: Apache-2.0
// The seeded faults (seeded_faults.h) as a plugin, for the CLI tests of kforge verify on the real-model corpus.
#include "seeded_faults.h"

namespace {

void registerSeededFaults(kforge::ProviderRegistry& registry)
{
    for (auto& info : kforge::test::seededFaultTypes())
        registry.add(std::move(info));
}

} // namespace

KFORGE_PROVIDER_PLUGIN(registerSeededFaults)
