// SPDX-License-Identifier: Apache-2.0
// TunedProviderBase (tuned_provider.h): the one settings loop of the built-in providers that take settings.
#include "providers/tuned_provider.h"

#include "providers/settings_text.h"

#include <kforge/error.h>

#include <algorithm>

namespace kforge::providers {

std::string TunedProviderBase::displayName() const
{
    const std::string inner = settingsText(settings());
    return inner.empty() ? typeName() : typeName() + "(" + inner + ")";
}

nlohmann::json TunedProviderBase::settings() const
{
    nlohmann::json s{{"type", typeName()}};
    for (const Setting& setting : m_settings)
        setting.save(s);
    return s;
}

void TunedProviderBase::declareSetting(Setting setting, Placement placement)
{
    m_settings.insert(placement == Placement::First ? m_settings.begin() : m_settings.end(), std::move(setting));
}

void TunedProviderBase::loadSettings(const nlohmann::json& settings)
{
    const std::string where = this->where();
    for (const auto& [key, value] : settings.items()) {
        if (key == "type")
            continue;
        const auto it =
            std::find_if(m_settings.begin(), m_settings.end(), [&](const Setting& s) { return s.key == key; });
        if (it == m_settings.end()) {
            std::string known;
            for (const Setting& s : m_settings)
                known += (known.empty() ? "" : ", ") + s.key;
            throw Error(where, "unknown setting '" + key + "' (known: " + known + ")");
        }
        it->load(where, value);
    }
    validateSettings(where);
}

} // namespace kforge::providers
