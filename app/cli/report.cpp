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

namespace {

nlohmann::ordered_json revalidationJson(const RevalidationReport& r)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["had_provenance"] = r.hadProvenance;
    if (!r.note.empty())
        out["note"] = r.note;
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    for (const EntryRevalidation& e : r.entries)
        entries.push_back({{"entry", e.entry},
                           {"reasons", e.reasons},
                           {"kept", e.kept},
                           {"verdict", e.verdict},
                           {"signatures", e.signatures},
                           {"speedup", e.speedup},
                           {"seconds", e.seconds}});
    out["entries"] = std::move(entries);
    out["cancelled"] = r.cancelled;
    return out;
}

} // namespace

std::string renderReport(const Report& report, bool json)
{
    if (!json)
        return report.text.str();
    nlohmann::ordered_json out = report.json;
    if (report.planWarnings() && out.is_object())
        out["warnings"] = nlohmann::ordered_json(*report.planWarnings());
    if (report.revalidation() && out.is_object())
        out["revalidation"] = revalidationJson(*report.revalidation());
    // A model or file name need not be UTF-8; JSON must be.
    return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n';
}

} // namespace kforge::cli
