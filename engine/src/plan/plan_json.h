// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the plan sources (not public API).
#include <kforge/plan.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kforge {

namespace plan_detail {
std::string escapePointerToken(const std::string& key); // JSON pointer escaping: ~ -> ~0, / -> ~1
nlohmann::ordered_json toOrdered(const nlohmann::json& value);
nlohmann::ordered_json providerToOrdered(const nlohmann::json& provider); // "type" first
std::string joinProblems(const std::vector<std::string>& problems);
inline bool isJsonNumber(const nlohmann::json& v) { return v.is_number() && !v.is_boolean(); } // true is no number
PlanDialect planDialectOf(const nlohmann::json& root, const std::string& where);
Plan importAituneJson(const nlohmann::json& root, const std::string& scope, const std::string& where);
std::string readTextFile(const std::string& path); // kforge::Error "not found", "is a directory", ...
// provenance_json.cpp: "provenance" of a kforge plan ("kforge_provenance" of an AITune export), "measured" of an entry.
nlohmann::ordered_json provenanceJson(const Provenance& provenance);
Provenance readProvenanceJson(const nlohmann::json& value, const std::string& at, std::vector<std::string>& problems);
nlohmann::ordered_json measurementJson(const EntryMeasurement& measurement);
EntryMeasurement readMeasurementJson(const nlohmann::json& value, const std::string& at,
                                     std::vector<std::string>& problems);
// verify_thresholds_json.cpp: "verify", a plan's own thresholds for kforge verify.
nlohmann::ordered_json verifyThresholdsJson(const VerifyThresholds& thresholds);
VerifyThresholds readVerifyThresholdsJson(const nlohmann::json& value, const std::string& at,
                                          std::vector<std::string>& problems);
// The lowest format version that holds `plan`: 2 once it carries provenance, measurements or verify thresholds, else 1,
// so that a plan without them stays readable by builds that read version 1 only.
int formatVersionFor(const Plan& plan);
} // namespace plan_detail

} // namespace kforge
