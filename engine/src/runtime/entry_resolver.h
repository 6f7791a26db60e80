// SPDX-License-Identifier: Apache-2.0
#pragma once
// One plan entry's function and provider, checked one way and in one wording for the runtime (which refuses a plan
// with any of these problems) and plan validation (which lists them, each with a fix). What validation adds on top
// (scopes that never run, functions never called there, devices) are warnings the runtime accepts.
#include <kforge/plan.h>
#include <kforge/provider_sdk.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::runtime {

struct EntryProblem {
    std::string field; // the entry's field it is about: "function", "provider" or "provider/type"
    std::string kind;  // PlanProblem::kind
    std::string message;
};

struct EntryResolution {
    std::optional<Function> function;         // the function the entry names, when it is a catalog function
    std::string providerType;                 // provider.type; "" when the entry has none
    const ProviderTypeInfo* info = nullptr;   // the type's registration, when this build has one
    std::string providerFunction;             // what the provider replaces (AITune-only types too); "" unknown
    std::shared_ptr<KernelProvider> provider; // the entry's provider, made when resolving with providers
    std::vector<EntryProblem> problems;
    bool ok() const { return problems.empty(); }
};

class EntryResolver {
public:
    // `makeProviders`: each entry gets its own provider (the runtime). Otherwise only the verdict on its settings,
    // asked once per distinct provider JSON (validating a plan of 100k entries).
    explicit EntryResolver(bool makeProviders) : m_makeProviders(makeProviders) {}
    EntryResolution resolve(const PlanEntry& entry);

private:
    const ProviderTypeInfo* registration(const std::string& type);
    std::string settingsError(const PlanEntry& entry, EntryResolution& resolution);

    bool m_makeProviders;
    std::unordered_map<std::string, const ProviderTypeInfo*> m_registrations;
    std::unordered_map<std::string, std::string> m_settingsErrors; // provider JSON -> error, "" = accepted
};

// The one wording of a scope that names no module of the model.
std::string unknownScopeMessage(const std::string& scope, const std::string& model);

} // namespace kforge::runtime
