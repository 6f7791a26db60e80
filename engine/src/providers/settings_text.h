// SPDX-License-Identifier: Apache-2.0
#pragma once
// A provider's settings as one line for display names and reports: "isa=avx2, grain_elements=65536" ("type" left
// out; strings unquoted).
#include <nlohmann/json.hpp>

#include <string>

namespace kforge::providers {

inline std::string settingsText(const nlohmann::json& settings)
{
    std::string out;
    for (const auto& [key, value] : settings.items())
        if (key != "type")
            out +=
                (out.empty() ? "" : ", ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    return out;
}

} // namespace kforge::providers
