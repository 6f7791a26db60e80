// SPDX-License-Identifier: Apache-2.0
#include "runtime/entry_resolver.h"

#include <kforge/error.h>

#include "common/clipped_text.h"

#include "runtime/normal_form.h"

namespace kforge::runtime {

const ProviderTypeInfo* EntryResolver::registration(const std::string& type)
{
    const auto it = m_registrations.find(type);
    if (it != m_registrations.end())
        return it->second;
    return m_registrations[type] = ProviderRegistry::instance().find(type);
}

std::string EntryResolver::settingsError(const PlanEntry& entry, EntryResolution& resolution)
{
    const auto attempt = [&]() -> std::string {
        try {
            resolution.provider = ProviderRegistry::instance().create(entry.provider);
            return {};
        } catch (const std::exception& e) {
            return e.what();
        }
    };
    if (m_makeProviders)
        return attempt();
    std::string key = entry.provider.dump();
    if (const auto it = m_settingsErrors.find(key); it != m_settingsErrors.end())
        return it->second;
    std::string error = attempt();
    resolution.provider.reset(); // (only the verdict was asked for)
    return m_settingsErrors[std::move(key)] = std::move(error);
}

EntryResolution EntryResolver::resolve(const PlanEntry& entry)
{
    EntryResolution r;
    const auto problem = [&](std::string field, std::string kind, std::string message) {
        r.problems.push_back({std::move(field), std::move(kind), std::move(message)});
    };
    r.function = functionFromName(entry.function);
    if (!r.function)
        problem("function", "unknown-function", "'" + entry.function + "' is not a replaceable function");

    const nlohmann::json& provider = entry.provider;
    if (provider.is_object() && provider.contains("type") && provider["type"].is_string())
        r.providerType = provider["type"].get<std::string>();
    r.info = r.providerType.empty() ? nullptr : registration(r.providerType);
    if (r.providerType.empty())
        problem("provider", "unknown-provider", "the entry has no provider type");
    else if (!r.info && isKnownAituneOnlyType(r.providerType))
        problem("provider/type", "unavailable-provider",
                "'" + r.providerType + "' is an AITune provider this build has no implementation of; it cannot run");
    else if (!r.info)
        problem("provider/type", "unknown-provider", "unknown provider type '" + r.providerType + "'");

    r.providerFunction = r.info ? std::string(functionName(r.info->function))
                                : (r.providerType.empty() ? std::string() : functionOfProviderType(r.providerType));
    if (r.function && !r.providerFunction.empty() && r.providerFunction != entry.function)
        problem("function", "wrong-function",
                "provider '" + r.providerType + "' replaces '" + r.providerFunction + "', not '" + entry.function +
                    "'");
    if (r.info)
        if (std::string error = settingsError(entry, r); !error.empty())
            problem("provider", "bad-settings", std::move(error));
    if (r.function && !normalOp(*r.function))
        problem("function", "unavailable-op",
                "this LibTorch lacks " + qualifiedOpName(functionInfo(*r.function).normalForm) +
                    ", the op its providers are called with");
    if (!r.ok())
        r.provider.reset();
    return r;
}

std::string unknownScopeMessage(const std::string& scope, const std::string& model)
{
    return "no module '" + clippedText(scope) + "' in " + model;
}

} // namespace kforge::runtime
