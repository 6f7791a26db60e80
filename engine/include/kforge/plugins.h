// SPDX-License-Identifier: Apache-2.0
#pragma once
// Provider plugins: shared libraries built against kforge/provider_sdk.h that register provider types when
// loaded (`kforge --provider-plugin lib.so`, the GUI's settings, folders listed in KFORGE_PROVIDER_PATH).
#include <string>
#include <vector>

namespace kforge {

struct PluginInfo {
    std::string path;
    std::string abi;     // what the plugin was built against: "kforge-provider-abi-1 torch-2.11.0 cxx11-abi-1"
    std::string version; // its KFORGE_PROVIDER_PLUGIN_VERSION, "" when it declares none
    std::string sha256;  // of the file as loaded
    std::vector<std::string> providerTypes;
    std::vector<std::string> generators; // KFORGE_GENERATOR_PLUGIN's registrations (kforge/generator_sdk.h)
};

// The ABI string this build accepts; a plugin must report exactly this.
std::string providerPluginAbi();

// Loads one plugin. All or nothing: a file that is not a plugin, an ABI/version mismatch, a registration
// that throws or a duplicate provider type is a kforge::Error naming the file and the cause, and leaves the
// registry as it was. Loading the same path twice is an error too (its types are already registered).
PluginInfo loadProviderPlugin(const std::string& path);

// Loads every *.so in the folders of KFORGE_PROVIDER_PATH (':'-separated). Failures do not stop the others;
// their messages are appended to `errors`.
std::vector<PluginInfo> loadProviderPluginsFromEnvironment(std::vector<std::string>& errors);

std::vector<PluginInfo> loadedProviderPlugins();

} // namespace kforge
