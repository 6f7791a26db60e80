// SPDX-License-Identifier: Apache-2.0
// Loads provider plugins with dlopen. Registration runs against a staging registry and is committed all at
// once, so a failing plugin leaves the process registry as it was.
#include <kforge/error.h>
#include <kforge/generator_sdk.h>
#include <kforge/file_hash.h>
#include <kforge/plugins.h>
#include <kforge/provider_sdk.h>

#include "common/library_folders.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>

namespace kforge {
namespace {

std::mutex& loaderMutex()
{
    static auto* m = new std::mutex();
    return *m;
}
std::vector<PluginInfo>& loaded()
{
    static auto* l = new std::vector<PluginInfo>();
    return *l;
}

struct LibraryHandle {
    void* handle = nullptr;
    ~LibraryHandle()
    {
        if (handle)
            dlclose(handle);
    }
    void* release() { return std::exchange(handle, nullptr); }
};

} // namespace

std::string providerPluginAbi() { return KFORGE_PROVIDER_PLUGIN_ABI_STRING; }

PluginInfo loadProviderPlugin(const std::string& path)
{
    const std::string where = "provider plugin '" + path + "'";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error(where, std::filesystem::exists(path, ec) ? "is not a regular file" : "file not found");
    const std::string canonical = std::filesystem::canonical(path, ec).string();
    std::lock_guard lock(loaderMutex());
    for (const auto& p : loaded())
        if (p.path == canonical)
            throw Error(where, "is already loaded");

    LibraryHandle lib;
    lib.handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
        const char* why = dlerror();
        throw Error(where, std::string("cannot be loaded: ") + (why ? why : "unknown dlopen error"));
    }
    using AbiFn = const char* (*)();
    using RegisterFn = void (*)(ProviderRegistry&);
    auto abiFn = reinterpret_cast<AbiFn>(dlsym(lib.handle, "kforge_provider_plugin_abi"));
    auto registerFn = reinterpret_cast<RegisterFn>(dlsym(lib.handle, "kforge_register_providers"));
    if (!abiFn || !registerFn)
        throw Error(where, "is not a kforge provider plugin (no KFORGE_PROVIDER_PLUGIN entry points)");
    PluginInfo info;
    info.path = canonical;
    info.abi = abiFn();
    using VersionFn = const char* (*)();
    if (auto versionFn = reinterpret_cast<VersionFn>(dlsym(lib.handle, "kforge_provider_plugin_version")))
        info.version = versionFn();
    if (info.abi != providerPluginAbi())
        throw Error(where, "was built for '" + info.abi + "', this kforge needs '" + providerPluginAbi() +
                               "': rebuild the plugin against this kforge and LibTorch");

    ProviderRegistry staging = PluginStaging::makeStaging();
    GeneratorRegistry generatorStaging; // optional second entry point: KFORGE_GENERATOR_PLUGIN
    using RegisterGeneratorsFn = void (*)(GeneratorRegistry&);
    auto registerGeneratorsFn = reinterpret_cast<RegisterGeneratorsFn>(dlsym(lib.handle, "kforge_register_generators"));
    try {
        registerFn(staging);
        if (registerGeneratorsFn)
            registerGeneratorsFn(generatorStaging);
    } catch (const std::exception& e) {
        throw Error(where, std::string("registration failed: ") + e.what());
    }
    std::vector<ProviderTypeInfo> types = staging.list();
    std::vector<KernelGeneratorInfo> generators = generatorStaging.list();
    if (types.empty() && generators.empty())
        throw Error(where, "registered no provider types and no generators");
    for (const auto& t : types)
        info.providerTypes.push_back(t.typeName);
    for (const auto& g : generators) {
        if (GeneratorRegistry::instance().find(g.name))
            throw Error(where, "generator '" + g.name + "' is already registered");
        info.generators.push_back(g.name);
    }
    try {
        ProviderRegistry::instance().addAll(std::move(types));
    } catch (const Error& e) {
        throw Error(where, e.why());
    }
    for (auto& g : generators)
        GeneratorRegistry::instance().add(std::move(g));
    info.sha256 = fileSha256(canonical);
    lib.release(); // providers' code lives in the library: it stays loaded for the process's life
    loaded().push_back(info);
    return info;
}

std::vector<PluginInfo> loadProviderPluginsFromEnvironment(std::vector<std::string>& errors)
{
    std::vector<PluginInfo> out;
    forEachLibraryInFolders("KFORGE_PROVIDER_PATH", errors, [&](const std::string& library) {
        try {
            out.push_back(loadProviderPlugin(library));
        } catch (const Error& e) {
            errors.emplace_back(e.what());
        }
    });
    return out;
}

std::vector<PluginInfo> loadedProviderPlugins()
{
    std::lock_guard lock(loaderMutex());
    return loaded();
}

} // namespace kforge
