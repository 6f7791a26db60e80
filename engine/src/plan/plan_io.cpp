// SPDX-License-Identifier: Apache-2.0
// Plan files: reading both dialects (docs/design/plan-format.md), writing the kforge dialect, atomic saving.
#include <kforge/atomic_file.h>
#include <kforge/error.h>
#include <kforge/plan.h>

#include "common/file_text.h"
#include "common/json_text.h"
#include "plan/plan_json.h"

namespace kforge {
namespace plan_detail {

std::string escapePointerToken(const std::string& key)
{
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

nlohmann::ordered_json toOrdered(const nlohmann::json& value)
{
    if (value.is_object()) {
        nlohmann::ordered_json out = nlohmann::ordered_json::object();
        for (const auto& [key, item] : value.items())
            out[key] = toOrdered(item);
        return out;
    }
    if (value.is_array()) {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (const auto& item : value)
            out.push_back(toOrdered(item));
        return out;
    }
    switch (value.type()) {
    case nlohmann::json::value_t::string:
        return value.get<std::string>();
    case nlohmann::json::value_t::boolean:
        return value.get<bool>();
    case nlohmann::json::value_t::number_integer:
        return value.get<std::int64_t>();
    case nlohmann::json::value_t::number_unsigned:
        return value.get<std::uint64_t>();
    case nlohmann::json::value_t::number_float:
        return value.get<double>();
    default:
        return nullptr;
    }
}

nlohmann::ordered_json providerToOrdered(const nlohmann::json& provider)
{
    if (!provider.is_object())
        return toOrdered(provider);
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (provider.contains("type"))
        out["type"] = toOrdered(provider["type"]);
    for (const auto& [key, item] : provider.items())
        if (key != "type")
            out[key] = toOrdered(item);
    return out;
}

std::string joinProblems(const std::vector<std::string>& problems)
{
    std::string out;
    for (const auto& p : problems)
        out += (out.empty() ? "" : "; ") + p;
    return out;
}

} // namespace plan_detail

using namespace plan_detail;

namespace {

const char* const kFormatName = "kforge-plan";

void readEntry(const nlohmann::json& value, const std::string& path, std::vector<std::string>& problems,
               PlanEntry& entry)
{
    if (!value.is_object()) {
        problems.push_back(path + ": expected an object, found " + jsonTypeName(value));
        return;
    }
    bool hasFunction = false;
    for (const auto& [key, item] : value.items()) {
        const std::string at = path + "/" + escapePointerToken(key);
        if (key == "scope" || key == "function" || key == "note") {
            if (!item.is_string()) {
                problems.push_back(at + ": expected a string, found " + jsonTypeName(item));
                continue;
            }
            (key == "scope" ? entry.scope : key == "function" ? entry.function : entry.note) = item.get<std::string>();
            hasFunction |= key == "function";
        } else if (key == "enabled") {
            if (!item.is_boolean()) {
                problems.push_back(at + ": expected true or false, found " + jsonTypeName(item));
                continue;
            }
            entry.enabled = item.get<bool>();
        } else if (key == "measured") {
            entry.measured = readMeasurementJson(item, at, problems);
        } else if (key == "provider") {
            if (!item.is_object()) {
                problems.push_back(at + ": expected an object with the provider's \"type\" and settings, found " +
                                   jsonTypeName(item));
                continue;
            }
            if (!item.contains("type")) {
                problems.push_back(at + ": missing \"type\" (the provider's class name, e.g. "
                                        "\"TorchSDPAKernelProvider\")");
                continue;
            }
            if (!item["type"].is_string()) {
                problems.push_back(at + "/type: expected a string, found " + jsonTypeName(item["type"]));
                continue;
            }
            entry.provider = item;
        } else {
            problems.push_back(at + ": unknown key '" + key +
                               "' in a plan entry (known: scope, function, provider, enabled, note, measured)");
        }
    }
    if (!value.contains("provider"))
        problems.push_back(path + ": missing \"provider\"");
    if (!hasFunction && entry.provider.is_object())
        entry.function = functionOfProviderType(entry.providerType());
}

Plan parseKforge(const nlohmann::json& root, const std::string& where)
{
    Plan plan;
    std::vector<std::string> problems;
    plan.version = 1; // the format's default: a file without "version" is version 1
    if (root.contains("version")) {
        const auto& v = root["version"];
        if (!v.is_number_integer() && !v.is_number_unsigned()) {
            problems.push_back("/version: expected an integer, found " + jsonTypeName(v));
        } else if (v.is_number_unsigned() ? v.get<std::uint64_t>() > std::uint64_t(kPlanFormatVersion)
                                          : v.get<std::int64_t>() > kPlanFormatVersion) {
            // Nothing else is read: a newer format may mean anything.
            throw Error(where, "/version: plan format version " + v.dump() + " is newer than this build understands (" +
                                   std::to_string(kPlanFormatVersion) + "); update kforge to read it");
        } else if (v.get<std::int64_t>() < 1) {
            problems.push_back("/version: expected 1 or more, found " + v.dump());
        } else {
            plan.version = int(v.get<std::int64_t>());
        }
    }
    for (const auto& [key, item] : root.items()) {
        if (key == "format" || key == "version")
            continue;
        if (key == "model") {
            if (!item.is_object()) {
                problems.push_back("/model: expected an object, found " + jsonTypeName(item));
                continue;
            }
            for (const auto& [mkey, mitem] : item.items()) {
                const std::string at = "/model/" + escapePointerToken(mkey);
                if (mkey != "name" && mkey != "sha256") {
                    problems.push_back(at + ": unknown key '" + mkey + "' (known: name, sha256)");
                } else if (!mitem.is_string()) {
                    problems.push_back(at + ": expected a string, found " + jsonTypeName(mitem));
                } else {
                    (mkey == "name" ? plan.modelName : plan.modelSha256) = mitem.get<std::string>();
                }
            }
        } else if (key == "provenance") {
            plan.provenance = readProvenanceJson(item, "/provenance", problems);
        } else if (key == "verify") {
            plan.verifyThresholds = readVerifyThresholdsJson(item, "/verify", problems);
        } else if (key == "entries") {
            if (!item.is_array()) {
                problems.push_back("/entries: expected an array, found " + jsonTypeName(item));
                continue;
            }
            plan.entries.resize(item.size());
            for (size_t i = 0; i < item.size(); ++i)
                readEntry(item[i], "/entries/" + std::to_string(i), problems, plan.entries[i]);
        } else {
            plan.extra[key] = item;
        }
    }
    if (!problems.empty())
        throw Error(where, joinProblems(problems));
    return plan;
}

} // namespace

PlanDialect plan_detail::planDialectOf(const nlohmann::json& root, const std::string& where)
{
    if (!root.is_object())
        throw Error(where, "not a plan: expected a JSON object, found " + jsonTypeName(root));
    // A file with both dialects' lists would silently lose one of them on the next save.
    if (root.contains("format") && root.contains("providers"))
        throw Error(where, "/providers: a kforge plan (with \"format\") cannot also hold AITune's \"providers\" list; "
                           "move each provider into \"entries\", or remove \"format\" to read an AITune plan");
    if (!root.contains("format") && root.contains("providers") && root.contains("entries"))
        throw Error(where, "/entries: an AITune plan ({\"providers\": [...]}) cannot also hold kforge's \"entries\"; "
                           "add \"format\": \"kforge-plan\" and move each provider into \"entries\"");
    if (root.contains("format")) {
        const auto& f = root["format"];
        if (!f.is_string())
            throw Error(where, "/format: expected the string \"kforge-plan\", found " + jsonTypeName(f));
        if (f.get<std::string>() != kFormatName)
            throw Error(where,
                        "/format: unknown plan format '" + f.get<std::string>() + "' (expected \"kforge-plan\")");
        return PlanDialect::Kforge;
    }
    if (root.contains("providers"))
        return PlanDialect::Aitune;
    throw Error(where, "not a plan: expected {\"format\": \"kforge-plan\", ...} or AITune's {\"providers\": [...]}");
}

PlanDialect planDialect(const std::string& text, const std::string& where)
{
    return planDialectOf(parseJsonText(text, where), where);
}

Plan parsePlan(const std::string& text, const std::string& where)
{
    return parsePlanJson(parseJsonText(text, where), where);
}

Plan parsePlanJson(const nlohmann::json& root, const std::string& where)
{
    if (planDialectOf(root, where) == PlanDialect::Aitune)
        return importAituneJson(root, "", where);
    return parseKforge(root, where);
}

int plan_detail::formatVersionFor(const Plan& plan)
{
    bool measured = false;
    for (const PlanEntry& e : plan.entries)
        measured |= e.measured.has_value();
    return plan.provenance || measured || plan.verifyThresholds ? 2 : 1;
}

std::string plan_detail::readTextFile(const std::string& path)
{
    return kforge::readTextFile(path, "is a directory, not a plan file");
}

Plan readPlan(const std::string& path)
{
    const std::string text = readTextFile(path);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw Error(path, "file is empty, not a plan");
    return parsePlan(text, path);
}

void to_json(nlohmann::ordered_json& out, const Plan& plan)
{
    out = nlohmann::ordered_json::object();
    out["format"] = kFormatName;
    out["version"] = formatVersionFor(plan);
    if (!plan.modelName.empty() || !plan.modelSha256.empty()) {
        nlohmann::ordered_json model = nlohmann::ordered_json::object();
        if (!plan.modelName.empty())
            model["name"] = plan.modelName;
        if (!plan.modelSha256.empty())
            model["sha256"] = plan.modelSha256;
        out["model"] = model;
    }
    if (plan.extra.is_object())
        for (const auto& [key, item] : plan.extra.items())
            if (key != "format" && key != "version" && key != "model" && key != "entries" && key != "provenance" &&
                key != "verify")
                out[key] = toOrdered(item);
    if (plan.verifyThresholds)
        out["verify"] = verifyThresholdsJson(*plan.verifyThresholds);
    if (plan.provenance)
        out["provenance"] = provenanceJson(*plan.provenance);
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    for (const PlanEntry& e : plan.entries) {
        nlohmann::ordered_json entry = nlohmann::ordered_json::object();
        entry["scope"] = e.scope;
        entry["function"] = e.function;
        entry["provider"] = e.provider.is_null() ? nlohmann::ordered_json::object() : providerToOrdered(e.provider);
        entry["enabled"] = e.enabled;
        if (!e.note.empty())
            entry["note"] = e.note;
        if (e.measured)
            entry["measured"] = measurementJson(*e.measured);
        entries.push_back(std::move(entry));
    }
    out["entries"] = std::move(entries);
}

std::string toJson(const Plan& plan)
{
    try {
        return nlohmann::ordered_json(plan).dump(2) + "\n";
    } catch (const nlohmann::json::exception& e) {
        throw Error("plan", std::string("cannot be written as JSON: ") + e.what());
    }
}

void savePlan(const Plan& plan, const std::string& path) { writeFileAtomically(path, toJson(plan)); }

} // namespace kforge
