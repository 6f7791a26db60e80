// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a command produced. Every command fills one Report and returns; main alone decides what reaches the user: the
// JSON form on stdout for --json, else the text form, and every diagnostic ("kforge: warning: ...") on stderr as it
// is raised, so a long run shows its warnings before it ends and an error later does not lose them.
#include <kforge/plan.h>
#include <kforge/revalidate.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace kforge::cli {

class Report {
public:
    using DiagnosticSink = std::function<void(const std::string& line)>;
    explicit Report(DiagnosticSink diagnostics) : m_diagnostics(std::move(diagnostics)) {}

    nlohmann::ordered_json json = nlohmann::ordered_json::object(); // the --json form
    std::ostringstream text;                                        // the human form
    int exitCode = 0;

    // "kforge: warning: MESSAGE".
    void warn(const std::string& message) { diagnostic("warning: " + message); }
    // "kforge: MESSAGE": notes, interruptions, problem counts.
    void diagnostic(const std::string& message) { m_diagnostics("kforge: " + message); }
    // The plan's entries that can never fire: each warned now, and listed as "warnings" in the JSON object.
    void setPlanWarnings(std::vector<PlanWarning> warnings);
    const std::optional<std::vector<PlanWarning>>& planWarnings() const { return m_planWarnings; }
    // What re-validating the plan where it landed found: listed as "revalidation" in the JSON object.
    void setRevalidation(RevalidationReport revalidation) { m_revalidation = std::move(revalidation); }
    const std::optional<RevalidationReport>& revalidation() const { return m_revalidation; }

private:
    DiagnosticSink m_diagnostics;
    std::optional<std::vector<PlanWarning>> m_planWarnings;
    std::optional<RevalidationReport> m_revalidation;
};

// The report as main prints it: the JSON form (with the plan warnings, when the command ran a plan) or the text.
std::string renderReport(const Report& report, bool json);

} // namespace kforge::cli
