// SPDX-License-Identifier: Apache-2.0
// Warnings for plan entries that can never fire, printed by every path that runs a plan (kforge run, profile,
// compare, optimize, capture and the GUI). They are validatePlan's problems of the kinds the runtime accepts.
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>

#include "common/clipped_text.h"

#include <array>
#include <string_view>

namespace kforge {
namespace {

constexpr std::array<std::string_view, 4> kNeverFires{"scope-not-called", "function-not-called", "function-decomposed",
                                                      "device-unavailable"};

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
           (scope.empty() ? std::string("root scope") : "scope '" + clippedText(scope) + "'") + ", " + function +
           " -> " + (providerType.empty() ? std::string("?") : providerType) + ") can never fire: " + reason;
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

void stampModel(Plan& plan, const ModelSession& session)
{
    plan.modelName = session.displayName();
    plan.modelSha256 = session.fileSha256();
}

std::string otherModelOf(const Plan& plan, const ModelSession& session)
{
    const std::string here = session.displayName();
    const std::string made =
        "the plan was made for model '" + (plan.modelName.empty() ? std::string("?") : plan.modelName);
    if (!plan.modelSha256.empty() && !session.isBuiltin()) {
        std::string digest;
        try {
            digest = session.fileSha256();
        } catch (const Error&) {
            return ""; // a file that cannot be read again: the name alone would not decide it either
        }
        if (digest == plan.modelSha256)
            return "";
        return made + "' (SHA-256 " + plan.modelSha256.substr(0, 12) + "...), this is '" + here + "' (" +
               digest.substr(0, 12) + "...): its entries may not mean the same here";
    }
    if (plan.modelName.empty() || plan.modelName == here)
        return "";
    return made + "', this is '" + here + "': its entries may not mean the same here";
}

} // namespace kforge
