// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;
class QTreeWidget;

namespace kforge::ui {

// Preferences › Provider plugins: the plugins loaded in this process (path, provider types, ABI) and the
// list of plugins to load at every start (QSettings). Add loads the plugin at once and shows the engine's
// reason inline when it is refused; Remove takes effect on restart, since a loaded plugin cannot be unloaded.
class PluginSettingsPage : public QWidget {
    Q_OBJECT
public:
    explicit PluginSettingsPage(QWidget* parent = nullptr);

    // Loads `path` and, when it loads (or was loaded already), adds it to the start-up list.
    bool addPlugin(const QString& path);
    // Drops the start-up list's row `row`; the plugin stays loaded until the application restarts.
    void removePlugin(int row);

    QTreeWidget* loadedPlugins() const;
    QListWidget* startupPlugins() const;
    QString errorText() const; // the last refusal, "" after a successful Add
    QString noteText() const;

Q_SIGNALS:
    void pluginsChanged(); // a plugin was loaded: the provider catalog has new types

private:
    void chooseAndAdd();
    void refresh();

    QTreeWidget* m_loaded;
    QListWidget* m_paths;
    QPushButton* m_add;
    QPushButton* m_remove;
    QLabel* m_error;
    QLabel* m_note;
};

} // namespace kforge::ui
