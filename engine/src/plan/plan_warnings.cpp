// SPDX-License-Identifier: Apache-2.0
// Warnings for plan entries that can never fire, printed by every path that runs a plan (kforge run, profile,
// compare, optimize, capture and the GUI). They are validatePlan's problems of the kinds the runtime accepts.
#include <kforge/plan.h>

#include <array>
#include <string_view>

namespace kforge {
namespace {

constexpr std::array<std::string_view, 3> kNeverFires{"scope-not-called", "function-not-called", "device-unavailable"};

bool neverFires(const std::string& kind)
{
    for (const auto& k : kNeverFires)
        if (kind == k)
            return true;
    return false;
}

std::string providerTypeOf(const PlanEntry& e)
{
    const auto& p = e.provider;
    return p.is_object() && p.contains("type") && p["type"].is_string() ? p["type"].get<std::string>() : std::string();
}

} // namespace

std::string PlanWarning::text() const
{
    return "plan entry " + std::to_string(entry) + " (" +
           (scope.empty() ? std::string("root scope") : "scope '" + scope + "'") + ", " + function + " -> " +
           (providerType.empty() ? std::string("?") : providerType) + ") can never fire: " + reason;
}

std::vector<PlanWarning> planWarnings(const Plan& plan, const ModelSession& session, const std::string& device)
{
    std::vector<PlanWarning> warnings;
    for (PlanProblem& p : validatePlan(plan, session, device)) {
        if (p.entry < 0 || size_t(p.entry) >= plan.entries.size() || !neverFires(p.kind))
            continue;
        const PlanEntry& e = plan.entries[size_t(p.entry)];
        if (!e.enabled)
            continue;
        warnings.push_back({p.entry, e.scope, e.function, providerTypeOf(e), std::move(p.kind), std::move(p.message),
                            std::move(p.fix)});
    }
    return warnings;
}

} // namespace kforge
