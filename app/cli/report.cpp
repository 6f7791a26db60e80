// SPDX-License-Identifier: Apache-2.0
#include "report.h"

#include <kforge/json_shapes.h>

namespace kforge::cli {

void Report::setPlanWarnings(std::vector<PlanWarning> warnings)
{
    for (const PlanWarning& w : warnings)
        warn(w.text());
    m_planWarnings = std::move(warnings);
}

std::string renderReport(const Report& report, bool json)
{
    if (!json)
        return report.text.str();
    nlohmann::ordered_json out = report.json;
    if (report.planWarnings() && out.is_object())
        out["warnings"] = nlohmann::ordered_json(*report.planWarnings());
    // A model or file name need not be UTF-8; JSON must be.
    return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n';
}

} // namespace kforge::cli
