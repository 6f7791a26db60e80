// SPDX-License-Identifier: Apache-2.0
#include "settings_dialog.h"

#include "views/general_settings_page.h"
#include "views/plugin_settings_page.h"

#include <QDialogButtonBox>
#include <QTabWidget>
#include <QVBoxLayout>

namespace kforge::ui {

SettingsDialog::SettingsDialog(QWidget* parent)
    : QDialog(parent), m_pages(new QTabWidget(this)), m_general(new GeneralSettingsPage(this)),
      m_plugins(new PluginSettingsPage(providerPluginKind(), this)),
      m_opLibraries(new PluginSettingsPage(opLibraryKind(), this))
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Preferences"));
    m_pages->addTab(m_general, tr("General"));
    m_pages->addTab(m_plugins, tr("Provider Plugins"));
    m_pages->addTab(m_opLibraries, tr("Op Libraries"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_pages, 1);
    layout->addWidget(buttons);
    connect(m_plugins, &PluginSettingsPage::pluginsChanged, this, &SettingsDialog::pluginsChanged);
    resize(720, 480);
}

GeneralSettingsPage* SettingsDialog::generalPage() const { return m_general; }

PluginSettingsPage* SettingsDialog::pluginPage() const { return m_plugins; }

PluginSettingsPage* SettingsDialog::opLibraryPage() const { return m_opLibraries; }

QTabWidget* SettingsDialog::pages() const { return m_pages; }

} // namespace kforge::ui
