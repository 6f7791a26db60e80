// SPDX-License-Identifier: Apache-2.0
// A plan's own verify thresholds, "verify" in the plan file (docs/design/plan-format.md §5), the names `kforge verify
// --json` reports them under.
#include "common/json_text.h"
#include "plan/plan_json.h"

namespace kforge::plan_detail {
nlohmann::ordered_json verifyThresholdsJson(const VerifyThresholds& t)
{
    nlohmann::ordered_json out{{"min_cosine", t.minCosine}, {"allow_new_non_finite", t.allowNewNonFinite}};
    if (t.absolute)
        out["atol"] = *t.absolute;
    if (t.relative)
        out["rtol"] = *t.relative;
    if (t.minTop1Agreement)
        out["min_top1_agreement"] = *t.minTop1Agreement;
    return out;
}

VerifyThresholds readVerifyThresholdsJson(const nlohmann::json& value, const std::string& at,
                                          std::vector<std::string>& problems)
{
    VerifyThresholds t;
    if (!value.is_object()) {
        problems.push_back(at + ": expected an object, found " + jsonTypeName(value));
        return t;
    }
    for (const auto& [key, item] : value.items()) {
        const std::string path = at + "/" + escapePointerToken(key);
        const auto number = [&](double low, double high) -> std::optional<double> {
            if (isJsonNumber(item) && item.get<double>() >= low && item.get<double>() <= high)
                return item.get<double>();
            problems.push_back(path + ": expected a number from " + nlohmann::json(low).dump() + " to " +
                               nlohmann::json(high).dump() + ", found " + item.dump());
            return std::nullopt;
        };
        if (key == "min_cosine") {
            t.minCosine = number(-1.0, 1.0).value_or(t.minCosine);
        } else if (key == "atol") {
            t.absolute = number(0.0, 1e300);
        } else if (key == "rtol") {
            t.relative = number(0.0, 1e300);
        } else if (key == "min_top1_agreement") {
            t.minTop1Agreement = number(0.0, 1.0);
        } else if (key == "allow_new_non_finite") {
            if (item.is_boolean())
                t.allowNewNonFinite = item.get<bool>();
            else
                problems.push_back(path + ": expected true or false, found " + jsonTypeName(item));
        } else {
            problems.push_back(path + ": unknown key '" + key +
                               "' (known: min_cosine, atol, rtol, allow_new_non_finite, min_top1_agreement)");
        }
    }
    return t;
}

} // namespace kforge::plan_detail
