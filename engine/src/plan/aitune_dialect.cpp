// SPDX-License-Identifier: Apache-2.0
// The AITune dialect: KernelOptimizationPlan.to_dict() = {"providers": [{"type": ..., settings}]} (docs/design/
// plan-format.md, The AITune dialect).
#include <kforge/error.h>
#include <kforge/plan.h>
#include <kforge/provider_sdk.h>

#include "common/clipped_text.h"

#include "common/json_text.h"
#include "plan/plan_json.h"

#include <unordered_map>

namespace kforge {

using namespace plan_detail;

namespace {

// AITune's built-in providers (all replace scaled_dot_product_attention). TorchSDPAKernelProvider is also
// implemented here; the others are kept in plans, with their settings, and reported unavailable.
const char* const kAituneTypes[] = {"TorchSDPAKernelProvider", "FlashAttention4KernelProvider",
                                    "SageAttentionKernelProvider", "DiffusersAttentionKernelProvider"};

// Our provenance in an AITune export: a top-level key that KernelOptimizationPlan.from_dict never reads (it takes
// "providers" only), with each provider's measurement in "entries", parallel to "providers".
const char* const kProvenanceKey = "kforge_provenance";

void readExportedProvenance(const nlohmann::json& value, Plan& plan, std::vector<std::string>& problems)
{
    const std::string at = std::string("/") + kProvenanceKey;
    plan.provenance = readProvenanceJson(value, at, problems);
    if (!value.is_object() || !value.contains("entries"))
        return;
    const auto& entries = value["entries"];
    if (!entries.is_array() || entries.size() != plan.entries.size()) {
        problems.push_back(at + "/entries: expected an array with one item per provider (" +
                           std::to_string(plan.entries.size()) + "), found " + entries.dump());
        return;
    }
    for (size_t i = 0; i < entries.size(); ++i)
        if (!entries[i].is_null())
            plan.entries[i].measured = readMeasurementJson(entries[i], at + "/entries/" + std::to_string(i), problems);
}

} // namespace

bool isKnownAituneOnlyType(const std::string& type)
{
    for (const char* known : kAituneTypes)
        if (type == known)
            return ProviderRegistry::instance().find(type) == nullptr;
    return false;
}

std::string functionOfProviderType(const std::string& type)
{
    if (const ProviderTypeInfo* info = ProviderRegistry::instance().find(type))
        return std::string(functionName(info->function));
    for (const char* known : kAituneTypes)
        if (type == known)
            return std::string(functionName(Function::ScaledDotProductAttention));
    return {};
}

Plan plan_detail::importAituneJson(const nlohmann::json& root, const std::string& scope, const std::string& where)
{
    if (!root.is_object())
        throw Error(where, "not an AITune plan: expected a JSON object, found " + jsonTypeName(root));
    if (root.contains("format"))
        throw Error(where, "this is a kforge plan (\"format\": " + root["format"].dump() +
                               "), not an AITune plan ({\"providers\": [...]})");
    if (!root.contains("providers"))
        throw Error(where, "not an AITune plan: missing \"providers\"");
    const auto& providers = root["providers"];
    if (!providers.is_array())
        throw Error(where, "/providers: expected an array, found " + jsonTypeName(providers));
    Plan plan;
    plan.dialect = PlanDialect::Aitune;
    std::vector<std::string> problems;
    plan.entries.reserve(providers.size());
    for (size_t i = 0; i < providers.size(); ++i) {
        const std::string at = "/providers/" + std::to_string(i);
        const auto& p = providers[i];
        if (!p.is_object()) {
            problems.push_back(at + ": expected an object, found " + jsonTypeName(p));
            continue;
        }
        if (!p.contains("type")) {
            problems.push_back(at + ": missing \"type\" (the provider's class name)");
            continue;
        }
        if (!p["type"].is_string()) {
            problems.push_back(at + "/type: expected a string, found " + jsonTypeName(p["type"]));
            continue;
        }
        PlanEntry entry;
        entry.scope = scope;
        entry.provider = p;
        entry.function = functionOfProviderType(entry.providerType());
        plan.entries.push_back(std::move(entry));
    }
    if (problems.empty() && root.contains(kProvenanceKey))
        readExportedProvenance(root[kProvenanceKey], plan, problems);
    if (!problems.empty())
        throw Error(where, joinProblems(problems));
    for (const auto& [key, item] : root.items())
        if (key != "providers" && key != kProvenanceKey)
            plan.extra[key] = item;
    return plan;
}

Plan importAitune(const std::string& text, const std::string& scope)
{
    const std::string where = "AITune plan";
    return importAituneJson(parseJsonText(text, where), scope, where);
}

Plan readAitunePlan(const std::string& path, const std::string& scope)
{
    const std::string text = readTextFile(path);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw Error(path, "file is empty, not a plan");
    return importAituneJson(parseJsonText(text, path), scope, path);
}

std::string exportAitune(const Plan& plan)
{
    std::vector<std::string> reasons;
    std::unordered_map<std::string, size_t> byFunction;
    nlohmann::ordered_json providers = nlohmann::ordered_json::array();
    nlohmann::ordered_json measurements = nlohmann::ordered_json::array();
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        const PlanEntry& e = plan.entries[i];
        if (!e.enabled)
            continue;
        const std::string name = "entry " + std::to_string(i) + " (scope '" + clippedText(e.scope) + "', function '" +
                                 clippedText(e.function) + "')";
        if (!e.provider.is_object() || !e.provider.contains("type") || !e.provider["type"].is_string()) {
            reasons.push_back(name + " has no provider type");
            continue;
        }
        if (!e.scope.empty())
            reasons.push_back(name + " is scoped to '" + clippedText(e.scope) +
                              "': an AITune plan applies to the whole module its runtime is given (set the scope to "
                              "\"\", or disable the entry)");
        const std::string providerFunction = functionOfProviderType(e.providerType());
        if (!providerFunction.empty() && !e.function.empty() && providerFunction != e.function)
            reasons.push_back(name + ": provider '" + e.providerType() + "' replaces '" + providerFunction +
                              "'; AITune takes the function from the provider type");
        const std::string function = providerFunction.empty() ? e.function : providerFunction;
        if (!function.empty()) {
            const auto [it, inserted] = byFunction.emplace(function, i);
            if (!inserted)
                reasons.push_back("entries " + std::to_string(it->second) + " and " + std::to_string(i) +
                                  " both replace '" + function +
                                  "': an AITune plan holds at most one provider per function (disable one of them)");
        }
        providers.push_back(providerToOrdered(e.provider));
        measurements.push_back(e.measured ? measurementJson(*e.measured) : nlohmann::ordered_json());
    }
    if (!reasons.empty())
        throw Error("export to the AITune dialect", "refused: " + joinProblems(reasons));
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["providers"] = std::move(providers);
    if (plan.extra.is_object())
        for (const auto& [key, item] : plan.extra.items())
            if (key != "providers" && key != kProvenanceKey)
                out[key] = toOrdered(item);
    if (plan.provenance) {
        nlohmann::ordered_json provenance = provenanceJson(*plan.provenance);
        provenance["entries"] = std::move(measurements);
        out[kProvenanceKey] = std::move(provenance);
    }
    try {
        return out.dump(2) + "\n";
    } catch (const nlohmann::json::exception& err) {
        throw Error("export to the AITune dialect", std::string("cannot be written as JSON: ") + err.what());
    }
}

} // namespace kforge
