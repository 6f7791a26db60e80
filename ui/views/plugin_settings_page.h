// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QStringList>
#include <QWidget>

#include <functional>

class QLabel;
class QListWidget;
class QPushButton;
class QTreeWidget;

namespace kforge::ui {

// What a library page lists and loads: provider plugins, or op libraries (TORCH_LIBRARY custom ops).
struct LibraryKind {
    QString objectPrefix; // "plugin", "opLibrary": the page's widgets are named from it ("pluginError", ...)
    QString startupLabel; // above the start-up list: where else such libraries come from
    QString addTitle;     // the file dialog's
    QString fileFilter;
    QStringList loadedHeaders; // the loaded list's columns, the path first
    QString noneLoaded;
    std::function<QString(const QString&)> ensureLoaded; // "" when loaded, else the engine's reason
    std::function<bool(const QString&)> isLoaded;
    std::function<QList<QStringList>()> loadedRows; // per loaded library, one text per column
    std::function<QStringList()> storedPaths;
    std::function<void(const QStringList&)> setStoredPaths;
};
LibraryKind providerPluginKind();
LibraryKind opLibraryKind();

// Preferences › Provider plugins (and › Op libraries): the libraries loaded in this process and the list of those to
// load at every start (QSettings). Add loads the library at once and shows the engine's reason inline when it is
// refused; Remove takes effect on restart, since a loaded library cannot be unloaded.
class PluginSettingsPage : public QWidget {
    Q_OBJECT
public:
    explicit PluginSettingsPage(LibraryKind kind, QWidget* parent = nullptr);

    // Loads `path` and, when it loads (or was loaded already), adds it to the start-up list.
    bool addPlugin(const QString& path);
    // Drops the start-up list's row `row`; the library stays loaded until the application restarts.
    void removePlugin(int row);

    QTreeWidget* loadedPlugins() const;
    QListWidget* startupPlugins() const;
    QString errorText() const; // the last refusal, "" after a successful Add
    QString noteText() const;

Q_SIGNALS:
    void pluginsChanged(); // a library was loaded: providers (or ops) are new

private:
    void chooseAndAdd();
    void refresh();

    LibraryKind m_kind;
    QTreeWidget* m_loaded;
    QListWidget* m_paths;
    QPushButton* m_add;
    QPushButton* m_remove;
    QLabel* m_error;
    QLabel* m_note;
};

} // namespace kforge::ui
