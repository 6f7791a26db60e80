#include <kforge/plugins.h>
#include <kforge/provider_catalog.h>
#include <kforge/provider_sdk.h>

#include <algorithm>

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

} // namespace kforge
