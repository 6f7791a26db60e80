// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/plan.h>
#include <kforge/provider_catalog.h>

#include <QWidget>

class QFormLayout;
class QLabel;

namespace kforge::ui {

// An editable form of one plan entry's provider settings, built from the provider type's settings schema
// ({"backend": {"type": "string", "enum": [...], "default": "MATH"}}): a combo box for enums, a check box for
// booleans, spin boxes for numbers, a line for text. Each finished edit emits the provider's new settings.
class ProviderSettingsForm : public QWidget {
    Q_OBJECT
public:
    explicit ProviderSettingsForm(QWidget* parent = nullptr);

    // `entry` null clears the form; `provider` null means the type is not in the catalog.
    void setEntry(int row, const kforge::PlanEntry* entry, const kforge::ProviderCatalogEntry* provider);
    int row() const { return m_row; }
    int fieldCount() const; // settings shown as fields

Q_SIGNALS:
    // The provider object as the edit leaves it ("type" included).
    void settingsEdited(int row, const nlohmann::json& provider);

private:
    void rebuild(const kforge::ProviderCatalogEntry* provider);
    void updateValues();
    void commit(const std::string& key, nlohmann::json value);

    int m_row = -1;
    std::string m_type;
    nlohmann::json m_provider;
    nlohmann::json m_schema = nlohmann::json::object();
    QLabel* m_title;
    QWidget* m_fields = nullptr;
    QFormLayout* m_form = nullptr;
};

} // namespace kforge::ui
