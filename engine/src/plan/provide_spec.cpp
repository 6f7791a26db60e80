// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>
#include <kforge/plan.h>

#include "common/json_text.h"

namespace kforge {

PlanEntry parseProvideSpec(const std::string& spec)
{
    const std::string where = "--provide '" + spec + "'";
    // SCOPE may be empty (the root); settings JSON may contain ':' so split at the first three colons only.
    const auto first = spec.find(':');
    const auto second = first == std::string::npos ? first : spec.find(':', first + 1);
    if (second == std::string::npos)
        throw Error(where, "expected SCOPE:FUNCTION:PROVIDER (SCOPE may be empty for the root)");
    const auto third = spec.find(':', second + 1);
    PlanEntry entry;
    entry.scope = spec.substr(0, first);
    entry.function = spec.substr(first + 1, second - first - 1);
    const std::string type =
        spec.substr(second + 1, third == std::string::npos ? std::string::npos : third - second - 1);
    if (entry.function.empty() || type.empty())
        throw Error(where, "FUNCTION and PROVIDER must not be empty");
    entry.provider = nlohmann::json::object();
    if (third != std::string::npos) {
        try {
            entry.provider = parseJsonText(spec.substr(third + 1), "settings");
        } catch (const Error& e) {
            throw Error(where, "provider settings are not valid JSON: " + e.why());
        }
        if (!entry.provider.is_object())
            throw Error(where, "provider settings must be a JSON object");
    }
    entry.provider["type"] = type;
    return entry;
}

} // namespace kforge
