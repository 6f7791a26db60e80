// SPDX-License-Identifier: Apache-2.0
#include <kforge/generator_sdk.h>
#include <kforge/plugins.h>
#include <kforge/provider_catalog.h>
#include <kforge/provider_sdk.h>

#include <algorithm>
#include <cctype>

namespace kforge {

std::vector<ProviderCatalogEntry> providerCatalog()
{
    const auto plugins = loadedProviderPlugins();
    std::vector<ProviderCatalogEntry> out;
    for (const auto& info : ProviderRegistry::instance().list()) {
        ProviderCatalogEntry e{info.typeName,
                               std::string(functionName(info.function)),
                               info.devices,
                               info.description,
                               info.settingsSchema.dump(),
                               {}};
        for (const auto& plugin : plugins)
            if (std::count(plugin.providerTypes.begin(), plugin.providerTypes.end(), info.typeName))
                e.plugin = plugin.path;
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<GeneratorCatalogEntry> generatorCatalog()
{
    std::vector<GeneratorCatalogEntry> out;
    for (const auto& info : GeneratorRegistry::instance().list()) {
        GeneratorCatalogEntry e{info.name, {}, {}, info.description};
        const auto generator = info.create();
        for (const Function f : generator->functions())
            e.functions.emplace_back(functionName(f));
        e.devices = generator->devices();
        out.push_back(std::move(e));
    }
    return out;
}

std::string referenceProviderType(Function function)
{
    std::string out = "Aten";
    bool upper = true;
    for (char c : functionName(function)) {
        if (c == '_') {
            upper = true;
            continue;
        }
        out += upper ? char(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return out + "Provider";
}

} // namespace kforge
