// Plan files: reading both dialects (plan-format.md sections 1-2), writing the kforge dialect, atomic saving (4).
#include <kforge/atomic_file.h>
#include <kforge/error.h>
#include <kforge/plan.h>

#include "common/file_text.h"
#include "plan/plan_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <random>

namespace kforge {
namespace plan_detail {

std::string typeNameOf(const nlohmann::json& value)
{
    switch (value.type()) {
    case nlohmann::json::value_t::null:
        return "null";
    case nlohmann::json::value_t::object:
        return "an object";
    case nlohmann::json::value_t::array:
        return "an array";
    case nlohmann::json::value_t::string:
        return "a string";
    case nlohmann::json::value_t::boolean:
        return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
        return "an integer";
    case nlohmann::json::value_t::number_float:
        return "a number";
    default:
        return "binary data";
    }
}

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

namespace {

// nlohmann's DOM builder refusing nesting deeper than kMaxJsonDepth as it reads: writing, copying and comparing
// JSON values recurse once per level, so a hostile file nested 100,000 deep would overflow the stack long after
// it was read. Plans are a few levels deep. (nlohmann's parse callback could check the depth too, but it costs
// quadratic time on long arrays: minutes for a 100,000-entry plan.)
class DepthLimitedDomParser : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
public:
    DepthLimitedDomParser(nlohmann::json& root, const std::string& where) : json_sax_dom_parser(root), m_where(where) {}
    bool start_object(std::size_t size)
    {
        enter();
        return json_sax_dom_parser::start_object(size);
    }
    bool end_object()
    {
        --m_depth;
        return json_sax_dom_parser::end_object();
    }
    bool start_array(std::size_t size)
    {
        enter();
        return json_sax_dom_parser::start_array(size);
    }
    bool end_array()
    {
        --m_depth;
        return json_sax_dom_parser::end_array();
    }

private:
    void enter()
    {
        if (++m_depth > kMaxJsonDepth)
            throw Error(m_where,
                        "JSON nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels; a plan needs a few");
    }
    const std::string& m_where;
    int m_depth = 0;
};

} // namespace

namespace {

// nlohmann's message without its "[json.exception.KIND.N] " prefix.
std::string jsonErrorDetail(const nlohmann::json::exception& e)
{
    const std::string what = e.what();
    const auto bracket = what.find("] ");
    return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

} // namespace

nlohmann::json parseJsonText(const std::string& text, const std::string& where)
{
    try {
        nlohmann::json root;
        DepthLimitedDomParser builder(root, where);
        nlohmann::json::sax_parse(text, &builder);
        return root;
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is 1-based: the position of the last character read (size + 1 at an unexpected end).
        size_t index = std::min(e.byte == 0 ? size_t(0) : size_t(e.byte - 1), text.size());
        // An unexpected string is read whole before it is refused: point at its opening quote instead.
        if (index < text.size() && text[index] == '"' &&
            std::string_view(e.what()).find("unexpected string") != std::string_view::npos) {
            for (size_t i = index; i-- > 0;) {
                size_t backslashes = 0;
                while (backslashes < i && text[i - 1 - backslashes] == '\\')
                    ++backslashes;
                if (text[i] == '"' && backslashes % 2 == 0) {
                    index = i;
                    break;
                }
            }
        }
        size_t line = 1, lineStart = 0;
        for (size_t i = 0; i < index; ++i)
            if (text[i] == '\n') {
                ++line;
                lineStart = i + 1;
            }
        const size_t column = index - lineStart + 1;
        // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 2: <detail>".
        std::string detail = e.what();
        const auto column_at = detail.find("column ");
        const auto colon = column_at == std::string::npos ? std::string::npos : detail.find(": ", column_at);
        if (colon != std::string::npos)
            detail = detail.substr(colon + 2);
        else if (const auto bracket = detail.find("] "); bracket != std::string::npos)
            detail = detail.substr(bracket + 2);
        // The detail quotes the bytes last read, which may be invalid UTF-8: replace those (U+FFFD), so that the
        // message itself can go into JSON output and the GUI.
        detail =
            nlohmann::json::parse(nlohmann::json(detail).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                .get<std::string>();
        throw Error(where, "malformed JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
                               ": " + detail);
    } catch (const nlohmann::json::out_of_range& e) {
        // A number beyond a double ("1e999") is refused as out_of_range, not as a parse error.
        throw Error(where, "malformed JSON: " + jsonErrorDetail(e));
    }
}

} // namespace plan_detail

using namespace plan_detail;

namespace {

const char* const kFormatName = "kforge-plan";

void readEntry(const nlohmann::json& value, const std::string& path, std::vector<std::string>& problems,
               PlanEntry& entry)
{
    if (!value.is_object()) {
        problems.push_back(path + ": expected an object, found " + typeNameOf(value));
        return;
    }
    bool hasFunction = false;
    for (const auto& [key, item] : value.items()) {
        const std::string at = path + "/" + escapePointerToken(key);
        if (key == "scope" || key == "function" || key == "note") {
            if (!item.is_string()) {
                problems.push_back(at + ": expected a string, found " + typeNameOf(item));
                continue;
            }
            (key == "scope" ? entry.scope : key == "function" ? entry.function : entry.note) = item.get<std::string>();
            hasFunction |= key == "function";
        } else if (key == "enabled") {
            if (!item.is_boolean()) {
                problems.push_back(at + ": expected true or false, found " + typeNameOf(item));
                continue;
            }
            entry.enabled = item.get<bool>();
        } else if (key == "provider") {
            if (!item.is_object()) {
                problems.push_back(at + ": expected an object with the provider's \"type\" and settings, found " +
                                   typeNameOf(item));
                continue;
            }
            if (!item.contains("type")) {
                problems.push_back(at + ": missing \"type\" (the provider's class name, e.g. "
                                        "\"TorchSDPAKernelProvider\")");
                continue;
            }
            if (!item["type"].is_string()) {
                problems.push_back(at + "/type: expected a string, found " + typeNameOf(item["type"]));
                continue;
            }
            entry.provider = item;
        } else {
            problems.push_back(at + ": unknown key '" + key +
                               "' in a plan entry (known: scope, function, provider, enabled, note)");
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
    if (root.contains("version")) {
        const auto& v = root["version"];
        if (!v.is_number_integer() && !v.is_number_unsigned()) {
            problems.push_back("/version: expected an integer, found " + typeNameOf(v));
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
                problems.push_back("/model: expected an object, found " + typeNameOf(item));
                continue;
            }
            for (const auto& [mkey, mitem] : item.items()) {
                const std::string at = "/model/" + escapePointerToken(mkey);
                if (mkey != "name" && mkey != "sha256") {
                    problems.push_back(at + ": unknown key '" + mkey + "' (known: name, sha256)");
                } else if (!mitem.is_string()) {
                    problems.push_back(at + ": expected a string, found " + typeNameOf(mitem));
                } else {
                    (mkey == "name" ? plan.modelName : plan.modelSha256) = mitem.get<std::string>();
                }
            }
        } else if (key == "entries") {
            if (!item.is_array()) {
                problems.push_back("/entries: expected an array, found " + typeNameOf(item));
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
        throw Error(where, "not a plan: expected a JSON object, found " + typeNameOf(root));
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
            throw Error(where, "/format: expected the string \"kforge-plan\", found " + typeNameOf(f));
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
    const nlohmann::json root = parseJsonText(text, where);
    if (planDialectOf(root, where) == PlanDialect::Aitune)
        return importAituneJson(root, "", where);
    return parseKforge(root, where);
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

std::string toJson(const Plan& plan)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["format"] = kFormatName;
    out["version"] = kPlanFormatVersion;
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
            if (key != "format" && key != "version" && key != "model" && key != "entries")
                out[key] = toOrdered(item);
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    for (const PlanEntry& e : plan.entries) {
        nlohmann::ordered_json entry = nlohmann::ordered_json::object();
        entry["scope"] = e.scope;
        entry["function"] = e.function;
        entry["provider"] = e.provider.is_null() ? nlohmann::ordered_json::object() : providerToOrdered(e.provider);
        entry["enabled"] = e.enabled;
        if (!e.note.empty())
            entry["note"] = e.note;
        entries.push_back(std::move(entry));
    }
    out["entries"] = std::move(entries);
    try {
        return out.dump(2) + "\n";
    } catch (const nlohmann::json::exception& e) {
        throw Error("plan", std::string("cannot be written as JSON: ") + e.what());
    }
}

void savePlan(const Plan& plan, const std::string& path) { writeFileAtomically(path, toJson(plan)); }

} // namespace kforge
