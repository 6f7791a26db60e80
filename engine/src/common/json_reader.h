// SPDX-License-Identifier: Apache-2.0
#pragma once
// Typed reads from a parsed JSON document that fail with kforge::Error(file, "JSON/path: what is wrong"): the first
// problem ends the read (a profile file is a machine's output, not a user's edit). Plan files, which a user writes
// by hand, list every problem at once instead (plan/plan_io.cpp).
#include "common/json_text.h"

#include <kforge/error.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace kforge {

// Paths are JSON pointers ("/runs/0/records/12"); "" is the document's root.
class JsonReader {
public:
    explicit JsonReader(std::string where) : m_where(std::move(where)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& why) const
    {
        throw Error(m_where, (path.empty() ? std::string("/") : path) + ": " + why);
    }
    const nlohmann::json* find(const nlohmann::json& object, const std::string& path, const char* key,
                               bool required) const
    {
        if (!object.is_object())
            fail(path, "expected an object, found " + jsonTypeName(object));
        const auto it = object.find(key);
        if (it == object.end()) {
            if (required)
                fail(path + "/" + key, "missing");
            return nullptr;
        }
        return &*it;
    }
    std::string string(const nlohmann::json& object, const std::string& path, const char* key,
                       bool required = false) const
    {
        const nlohmann::json* v = find(object, path, key, required);
        if (!v)
            return {};
        if (!v->is_string())
            fail(path + "/" + key, "expected a string, found " + jsonTypeName(*v));
        return v->get<std::string>();
    }
    template <typename T> T integer(const nlohmann::json& v, const std::string& path) const
    {
        if (!v.is_number_integer())
            fail(path, "expected an integer, found " + jsonTypeName(v));
        if (v.is_number_unsigned()) {
            const auto u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
                fail(path, "out of range");
            return static_cast<T>(u);
        }
        const auto s = v.get<std::int64_t>();
        if constexpr (std::is_unsigned_v<T>) {
            if (s < 0)
                fail(path, "expected a non-negative integer");
        } else {
            if (s < std::int64_t(std::numeric_limits<T>::min()) || s > std::int64_t(std::numeric_limits<T>::max()))
                fail(path, "out of range");
        }
        return static_cast<T>(s);
    }
    template <typename T>
    T integer(const nlohmann::json& object, const std::string& path, const char* key, T fallback) const
    {
        const nlohmann::json* v = find(object, path, key, false);
        return v ? integer<T>(*v, path + "/" + key) : fallback;
    }
    bool boolean(const nlohmann::json& object, const std::string& path, const char* key, bool missing = false) const
    {
        const nlohmann::json* v = find(object, path, key, false);
        if (!v)
            return missing;
        if (v->is_boolean())
            return v->get<bool>();
        if (v->is_number_integer())
            return v->get<std::int64_t>() != 0;
        fail(path + "/" + key, "expected a boolean, found " + jsonTypeName(*v));
    }
    double real(const nlohmann::json& v, const std::string& path) const
    {
        if (v.is_number())
            return v.get<double>();
        if (v.is_string()) {
            const auto s = v.get<std::string>();
            if (s == "NaN")
                return std::numeric_limits<double>::quiet_NaN();
            if (s == "Infinity")
                return std::numeric_limits<double>::infinity();
            if (s == "-Infinity")
                return -std::numeric_limits<double>::infinity();
        }
        if (v.is_null())
            return std::numeric_limits<double>::quiet_NaN();
        fail(path, "expected a number, found " + jsonTypeName(v));
    }
    const nlohmann::json& array(const nlohmann::json& object, const std::string& path, const char* key,
                                bool required = false) const
    {
        static const nlohmann::json empty = nlohmann::json::array();
        const nlohmann::json* v = find(object, path, key, required);
        if (!v)
            return empty;
        if (!v->is_array())
            fail(path + "/" + key, "expected an array, found " + jsonTypeName(*v));
        return *v;
    }
    std::vector<std::string> strings(const nlohmann::json& object, const std::string& path, const char* key) const
    {
        std::vector<std::string> out;
        const nlohmann::json& a = array(object, path, key);
        for (size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_string())
                fail(path + "/" + key + "/" + std::to_string(i), "expected a string, found " + jsonTypeName(a[i]));
            out.push_back(a[i].get<std::string>());
        }
        return out;
    }
    std::map<std::string, int> counts(const nlohmann::json& object, const std::string& path, const char* key) const
    {
        std::map<std::string, int> out;
        const nlohmann::json* v = find(object, path, key, false);
        if (!v)
            return out;
        if (!v->is_object())
            fail(path + "/" + key, "expected an object, found " + jsonTypeName(*v));
        for (const auto& [name, n] : v->items())
            out[name] = integer<int>(n, path + "/" + key + "/" + name);
        return out;
    }
    const std::string& where() const { return m_where; }

private:
    std::string m_where;
};

} // namespace kforge
