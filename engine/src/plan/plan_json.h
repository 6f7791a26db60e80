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
PlanDialect planDialectOf(const nlohmann::json& root, const std::string& where);
Plan importAituneJson(const nlohmann::json& root, const std::string& scope, const std::string& where);
std::string readTextFile(const std::string& path); // kforge::Error "not found", "is a directory", ...
} // namespace plan_detail

} // namespace kforge
