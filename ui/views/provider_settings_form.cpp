// SPDX-License-Identifier: Apache-2.0
#include "provider_settings_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <limits>

namespace kforge::ui {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// The value a field shows: the entry's own setting, else the schema's default.
nlohmann::json currentValue(const nlohmann::json& provider, const std::string& key, const nlohmann::json& schema)
{
    if (provider.is_object() && provider.contains(key))
        return provider[key];
    return schema.value("default", nlohmann::json());
}

} // namespace

ProviderSettingsForm::ProviderSettingsForm(QWidget* parent) : QWidget(parent), m_title(new QLabel(this))
{
    setObjectName(QStringLiteral("providerSettingsForm"));
    m_title->setWordWrap(true);
    m_title->setTextFormat(Qt::PlainText);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_title);
    layout->addStretch(1);
    setEntry(-1, nullptr, nullptr);
}

int ProviderSettingsForm::fieldCount() const { return m_form ? m_form->rowCount() : 0; }

void ProviderSettingsForm::setEntry(int row, const kforge::PlanEntry* entry,
                                    const kforge::ProviderCatalogEntry* provider)
{
    const std::string type = entry ? entry->providerType() : std::string();
    const bool sameForm = row == m_row && type == m_type && m_fields;
    m_row = entry ? row : -1;
    m_type = type;
    m_provider = entry ? entry->provider : nlohmann::json();
    if (!entry) {
        m_title->setText(tr("Select a plan entry to edit its provider's settings."));
        rebuild(nullptr);
        return;
    }
    if (!provider) {
        m_title->setText(
            tr("%1: not in the provider catalog of this build; its settings are kept as written.").arg(qs(type)));
        rebuild(nullptr);
        return;
    }
    m_title->setText(tr("%1 — %2").arg(qs(provider->typeName), qs(provider->description)));
    if (sameForm)
        updateValues();
    else
        rebuild(provider);
}

void ProviderSettingsForm::rebuild(const kforge::ProviderCatalogEntry* provider)
{
    // The old fields may be the sender of the edit that led here: delete them later.
    if (m_fields) {
        m_fields->hide();
        m_fields->deleteLater();
        m_fields = nullptr;
        m_form = nullptr;
    }
    m_schema = nlohmann::json::object();
    if (!provider)
        return;
    m_schema = nlohmann::json::parse(provider->settingsSchemaJson, nullptr, false);
    if (m_schema.is_discarded() || !m_schema.is_object())
        m_schema = nlohmann::json::object();

    m_fields = new QWidget(this);
    m_form = new QFormLayout(m_fields);
    m_form->setContentsMargins(0, 0, 0, 0);
    for (const auto& [key, field] : m_schema.items()) {
        const QString label = qs(key);
        const std::string type = field.value("type", std::string("string"));
        const QString help = qs(field.value("description", std::string()));
        QWidget* editor = nullptr;
        if (field.contains("enum") && field["enum"].is_array()) {
            auto* combo = new QComboBox(m_fields);
            for (const auto& option : field["enum"])
                combo->addItem(option.is_string() ? qs(option.get<std::string>()) : qs(option.dump()),
                               qs(option.dump()));
            connect(combo, &QComboBox::activated, this, [this, key, combo](int index) {
                commit(key, nlohmann::json::parse(combo->itemData(index).toString().toStdString(), nullptr, false));
            });
            editor = combo;
        } else if (type == "boolean") {
            auto* box = new QCheckBox(m_fields);
            connect(box, &QCheckBox::clicked, this, [this, key](bool checked) { commit(key, checked); });
            editor = box;
        } else if (type == "integer") {
            auto* spin = new QSpinBox(m_fields);
            spin->setRange(field.value("minimum", std::numeric_limits<int>::min()),
                           field.value("maximum", std::numeric_limits<int>::max()));
            connect(spin, &QSpinBox::editingFinished, this, [this, key, spin] { commit(key, spin->value()); });
            editor = spin;
        } else if (type == "number") {
            auto* spin = new QDoubleSpinBox(m_fields);
            spin->setDecimals(6);
            spin->setRange(field.value("minimum", -1e12), field.value("maximum", 1e12));
            connect(spin, &QDoubleSpinBox::editingFinished, this, [this, key, spin] { commit(key, spin->value()); });
            editor = spin;
        } else {
            auto* line = new QLineEdit(m_fields);
            connect(line, &QLineEdit::editingFinished, this,
                    [this, key, line] { commit(key, line->text().toStdString()); });
            editor = line;
        }
        editor->setObjectName(QStringLiteral("setting:%1").arg(label));
        editor->setToolTip(help);
        m_form->addRow(label, editor);
    }
    if (m_schema.empty()) {
        auto* none = new QLabel(tr("This provider has no settings."), m_fields);
        none->setEnabled(false);
        m_form->addRow(none);
    }
    static_cast<QVBoxLayout*>(layout())->insertWidget(1, m_fields);
    updateValues();
}

void ProviderSettingsForm::updateValues()
{
    if (!m_form)
        return;
    for (const auto& [key, field] : m_schema.items()) {
        QWidget* editor = m_fields->findChild<QWidget*>(QStringLiteral("setting:%1").arg(qs(key)));
        if (!editor)
            continue;
        const QSignalBlocker block(editor);
        const nlohmann::json value = currentValue(m_provider, key, field);
        if (auto* combo = qobject_cast<QComboBox*>(editor)) {
            combo->setCurrentIndex(combo->findData(qs(value.dump())));
        } else if (auto* box = qobject_cast<QCheckBox*>(editor)) {
            box->setChecked(value.is_boolean() && value.get<bool>());
        } else if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
            spin->setValue(value.is_number() ? value.get<int>() : 0);
        } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(editor)) {
            dspin->setValue(value.is_number() ? value.get<double>() : 0.0);
        } else if (auto* line = qobject_cast<QLineEdit*>(editor)) {
            line->setText(value.is_string() ? qs(value.get<std::string>()) : QString());
        }
    }
}

void ProviderSettingsForm::commit(const std::string& key, nlohmann::json value)
{
    if (m_row < 0 || value.is_discarded())
        return;
    nlohmann::json provider = m_provider.is_object() ? m_provider : nlohmann::json{{"type", m_type}};
    if (provider.contains(key) && provider[key] == value)
        return;
    if (!provider.contains(key) && m_schema.contains(key) && m_schema[key].value("default", nlohmann::json()) == value)
        return; // choosing the default that was already in effect changes nothing
    provider[key] = std::move(value);
    Q_EMIT settingsEdited(m_row, provider);
}

} // namespace kforge::ui
