// SPDX-License-Identifier: Apache-2.0
// A plan's provenance and its entries' measurements as JSON (docs/design/plan-format.md §5): strict on read, like
// the rest of the plan, so that a typo is an error naming its path rather than a provenance silently lost.
#include "common/json_text.h"
#include "plan/plan_json.h"

#include <utility>

namespace kforge::plan_detail {
namespace {

using StringField = std::pair<const char*, std::string*>;

// Reads the string members of `object` into `fields`; any other key, or a non-string, is a problem at its path.
void readStringFields(const nlohmann::json& object, const std::string& at, const std::vector<StringField>& fields,
                      std::vector<std::string>& problems, const std::vector<std::string>& otherKeys = {})
{
    if (!object.is_object()) {
        problems.push_back(at + ": expected an object, found " + jsonTypeName(object));
        return;
    }
    for (const auto& [key, item] : object.items()) {
        bool known = false;
        for (const auto& [name, target] : fields)
            if (key == name) {
                known = true;
                if (item.is_string())
                    *target = item.get<std::string>();
                else
                    problems.push_back(at + "/" + escapePointerToken(key) + ": expected a string, found " +
                                       jsonTypeName(item));
            }
        for (const std::string& other : otherKeys)
            known |= key == other;
        if (!known) {
            std::string names;
            for (const auto& [name, target] : fields)
                names += (names.empty() ? "" : ", ") + std::string(name);
            for (const std::string& other : otherKeys)
                names += ", " + other;
            problems.push_back(at + "/" + escapePointerToken(key) + ": unknown key '" + key + "' (known: " + names +
                               ")");
        }
    }
}

std::vector<StringField> machineFields(MachineFingerprint& m)
{
    return {{"device", &m.device},
            {"cpu_model", &m.cpuModel},
            {"cpu_isa", &m.cpuIsa},
            {"gpu", &m.gpuName},
            {"compute_capability", &m.computeCapability},
            {"driver", &m.driver},
            {"torch", &m.torch},
            {"cuda", &m.cuda},
            {"cudnn", &m.cudnn},
            {"kforge", &m.kforge}};
}

std::vector<StringField> originFields(ProviderOrigin& o)
{
    return {
        {"type", &o.type}, {"origin", &o.origin}, {"path", &o.path}, {"sha256", &o.sha256}, {"version", &o.version}};
}

void putIfSet(nlohmann::ordered_json& out, const char* key, const std::string& value)
{
    if (!value.empty())
        out[key] = value;
}

} // namespace

nlohmann::ordered_json provenanceJson(const Provenance& p)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    putIfSet(out, "written_by", p.writtenBy);
    putIfSet(out, "created", p.createdUtc);
    nlohmann::ordered_json machine = nlohmann::ordered_json::object();
    MachineFingerprint m = p.machine;
    for (const auto& [name, value] : machineFields(m))
        putIfSet(machine, name, *value);
    out["machine"] = std::move(machine);
    nlohmann::ordered_json providers = nlohmann::ordered_json::array();
    for (ProviderOrigin o : p.providers) {
        nlohmann::ordered_json provider = nlohmann::ordered_json::object();
        for (const auto& [name, value] : originFields(o))
            putIfSet(provider, name, *value);
        providers.push_back(std::move(provider));
    }
    out["providers"] = std::move(providers);
    return out;
}

Provenance readProvenanceJson(const nlohmann::json& value, const std::string& at, std::vector<std::string>& problems)
{
    Provenance p;
    readStringFields(value, at, {{"written_by", &p.writtenBy}, {"created", &p.createdUtc}}, problems,
                     {"machine", "providers", "entries"});
    if (!value.is_object())
        return p;
    if (value.contains("machine"))
        readStringFields(value["machine"], at + "/machine", machineFields(p.machine), problems);
    if (value.contains("providers")) {
        const auto& list = value["providers"];
        if (!list.is_array()) {
            problems.push_back(at + "/providers: expected an array, found " + jsonTypeName(list));
            return p;
        }
        for (size_t i = 0; i < list.size(); ++i) {
            ProviderOrigin o;
            readStringFields(list[i], at + "/providers/" + std::to_string(i), originFields(o), problems);
            p.providers.push_back(std::move(o));
        }
    }
    return p;
}

nlohmann::ordered_json measurementJson(const EntryMeasurement& m)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["signatures"] = m.signatures;
    if (m.measured()) {
        out["speedup"] = m.speedup;
        if (m.speedupHigh > 0)
            out["interval"] = {m.speedupLow, m.speedupHigh};
    }
    return out;
}

EntryMeasurement readMeasurementJson(const nlohmann::json& value, const std::string& at,
                                     std::vector<std::string>& problems)
{
    EntryMeasurement m;
    if (!value.is_object()) {
        problems.push_back(at + ": expected an object, found " + jsonTypeName(value));
        return m;
    }
    for (const auto& [key, item] : value.items()) {
        const std::string path = at + "/" + escapePointerToken(key);
        if (key == "signatures") {
            if (!item.is_array()) {
                problems.push_back(path + ": expected an array of strings, found " + jsonTypeName(item));
                continue;
            }
            for (size_t i = 0; i < item.size(); ++i) {
                if (item[i].is_string())
                    m.signatures.push_back(item[i].get<std::string>());
                else
                    problems.push_back(path + "/" + std::to_string(i) + ": expected a string, found " +
                                       jsonTypeName(item[i]));
            }
        } else if (key == "speedup") {
            if (isJsonNumber(item) && item.get<double>() > 0)
                m.speedup = item.get<double>();
            else
                problems.push_back(path + ": expected a positive number, found " + item.dump());
        } else if (key == "interval") {
            if (item.is_array() && item.size() == 2 && isJsonNumber(item[0]) && isJsonNumber(item[1]) &&
                item[0].get<double>() <= item[1].get<double>()) {
                m.speedupLow = item[0].get<double>();
                m.speedupHigh = item[1].get<double>();
            } else {
                problems.push_back(path + ": expected [low, high] with low <= high, found " + item.dump());
            }
        } else {
            problems.push_back(path + ": unknown key '" + key + "' (known: signatures, speedup, interval)");
        }
    }
    return m;
}

} // namespace kforge::plan_detail
