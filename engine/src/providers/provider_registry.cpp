// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>
#include <kforge/provider_sdk.h>

#include "providers/builtin_providers.h"
#include "runtime/provider_function.h"
#include "runtime/string_pool.h"

#include <map>
#include <set>
#include <mutex>

namespace kforge {

bool KernelProvider::prepare(const std::vector<torch::jit::Stack>& samples)
{
    for (const auto& sample : samples)
        if (!supports(sample))
            return false;
    m_state = ProviderState::Ready;
    return true;
}

CallResult KernelProvider::call(const c10::OperatorHandle& op, torch::jit::Stack& stack)
{
    if (m_state != ProviderState::Ready)
        throw Error("provider '" + displayName() + "'", "called before prepare() made it READY");
    return run(op, stack);
}

void KernelProvider::restore(const nlohmann::json& settings)
{
    loadSettings(settings);
    m_state = ProviderState::Ready;
}

void KernelProvider::loadSettings(const nlohmann::json& settings)
{
    for (const auto& [key, value] : settings.items())
        if (key != "type")
            throw Error("provider '" + typeName() + "'", "unknown setting '" + key + "'");
}

struct ProviderRegistry::State {
    mutable std::mutex mutex;
    std::map<std::string, ProviderTypeInfo> types;
};

ProviderRegistry::ProviderRegistry() : m_state(std::make_shared<State>()) {}

ProviderRegistry& ProviderRegistry::instance()
{
    static ProviderRegistry* registry = [] {
        auto* r = new ProviderRegistry();
        providers::registerBuiltinProviders(*r);
        return r;
    }();
    return *registry;
}

void ProviderRegistry::add(ProviderTypeInfo info)
{
    std::lock_guard lock(m_state->mutex);
    if (m_state->types.count(info.typeName))
        throw Error("provider registry", "provider type '" + info.typeName + "' is already registered");
    const std::string name = info.typeName;
    m_state->types.emplace(name, std::move(info));
}

void ProviderRegistry::addAll(std::vector<ProviderTypeInfo> infos)
{
    std::lock_guard lock(m_state->mutex);
    std::set<std::string> names;
    for (const auto& info : infos)
        if (m_state->types.count(info.typeName) || !names.insert(info.typeName).second)
            throw Error("provider registry", "provider type '" + info.typeName + "' is already registered");
    for (auto& info : infos) {
        const std::string name = info.typeName;
        m_state->types.emplace(name, std::move(info));
    }
}

const ProviderTypeInfo* ProviderRegistry::find(const std::string& typeName) const
{
    std::lock_guard lock(m_state->mutex);
    const auto it = m_state->types.find(typeName);
    return it == m_state->types.end() ? nullptr : &it->second;
}

std::vector<ProviderTypeInfo> ProviderRegistry::list() const
{
    std::lock_guard lock(m_state->mutex);
    std::vector<ProviderTypeInfo> out;
    for (const auto& [_, info] : m_state->types)
        out.push_back(info);
    return out;
}

std::unique_ptr<KernelProvider> ProviderRegistry::create(const nlohmann::json& settings) const
{
    if (!settings.is_object() || !settings.contains("type") || !settings["type"].is_string())
        throw Error("provider settings", "expected an object with a string \"type\"");
    const std::string type = settings["type"].get<std::string>();
    const ProviderTypeInfo* info = find(type);
    if (!info)
        throw Error("provider '" + type + "'", "unknown provider type (see `kforge providers`)");
    auto provider = info->create();
    provider->restore(settings);
    return provider;
}

namespace runtime {

ProviderFunctionPtr makeProviderFunction(std::shared_ptr<KernelProvider> provider)
{
    auto fn = std::make_shared<ProviderFunction>();
    fn->function = provider->function();
    fn->functionName = functionName(fn->function).data();
    fn->providerName = intern(provider->displayName());
    fn->provider = std::move(provider);
    return fn;
}

} // namespace runtime
} // namespace kforge
