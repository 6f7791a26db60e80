// SPDX-License-Identifier: Apache-2.0
// kforge providers: the provider catalogue (built-in and plugin types).
#include "commands.h"
#include "output.h"

#include <kforge/provider_catalog.h>

namespace kforge::cli {

Command addProvidersCommand(CLI::App& app)
{
    auto* cmd = app.add_subcommand("providers", "List the kernel provider types: function, devices, settings");
    addJsonFlag(cmd);
    return {cmd, [](Report& report) {
                const auto providers = providerCatalog();
                report.json = nlohmann::ordered_json::array();
                for (const auto& p : providers)
                    report.json.push_back({{"type", p.typeName},
                                           {"function", p.function},
                                           {"devices", p.devices},
                                           {"description", p.description},
                                           {"settings_schema", nlohmann::ordered_json::parse(p.settingsSchemaJson)},
                                           {"plugin", p.plugin}});
                std::vector<std::vector<std::string>> rows;
                for (const auto& p : providers) {
                    std::string devices;
                    for (const auto& d : p.devices)
                        devices += (devices.empty() ? "" : ",") + d;
                    std::string settings;
                    const auto schemas = nlohmann::ordered_json::parse(p.settingsSchemaJson);
                    for (const auto& [key, schema] : schemas.items())
                        settings += (settings.empty() ? "" : " ") + key + "=" +
                                    (schema.contains("enum") ? schema["enum"].dump() : schema.value("type", "?"));
                    rows.push_back({p.typeName, p.function, devices, settings.empty() ? "-" : settings,
                                    p.plugin.empty() ? "built-in" : p.plugin});
                }
                report.text << formatTable({"TYPE", "FUNCTION", "DEVICES", "SETTINGS", "FROM"}, rows);
            }};
}

Command addGeneratorsCommand(CLI::App& app)
{
    auto* cmd = app.add_subcommand("generators", "List the kernel generators `optimize` asks for providers");
    addJsonFlag(cmd);
    return {cmd, [](Report& report) {
                const auto generators = generatorCatalog();
                report.json = nlohmann::ordered_json::array();
                for (const auto& g : generators)
                    report.json.push_back({{"name", g.name},
                                           {"functions", g.functions},
                                           {"devices", g.devices},
                                           {"description", g.description}});
                std::vector<std::vector<std::string>> rows;
                const auto joined = [](const std::vector<std::string>& items) {
                    std::string out;
                    for (const auto& item : items)
                        out += (out.empty() ? "" : ",") + item;
                    return out;
                };
                for (const auto& g : generators)
                    rows.push_back({g.name, joined(g.functions), joined(g.devices), g.description});
                report.text << formatTable({"NAME", "FUNCTIONS", "DEVICES", "DESCRIPTION"}, rows);
            }};
}

} // namespace kforge::cli
