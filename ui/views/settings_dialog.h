// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QDialog>

class QTabWidget;

namespace kforge::ui {

class GeneralSettingsPage;
class PluginSettingsPage;

// Edit › Preferences (Ctrl+,): the General, Provider plugins and Op libraries pages. Every change is saved as it is
// made, so the dialog has a Close button only.
class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit SettingsDialog(QWidget* parent = nullptr);

    GeneralSettingsPage* generalPage() const;
    PluginSettingsPage* pluginPage() const;
    PluginSettingsPage* opLibraryPage() const;
    QTabWidget* pages() const;

Q_SIGNALS:
    void pluginsChanged();

private:
    QTabWidget* m_pages;
    GeneralSettingsPage* m_general;
    PluginSettingsPage* m_plugins;
    PluginSettingsPage* m_opLibraries;
};

} // namespace kforge::ui
