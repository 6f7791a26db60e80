// SPDX-License-Identifier: Apache-2.0
#pragma once
// Opening models: File › Open, Open Built-in and Open Recent, the program of a package with several, the loader off
// the UI thread with its busy line in the status bar, and a failure's message (the recent entry of a file that no
// longer opens is dropped). A loaded session goes to the window (loaded()), which hands it to the session owner.
#include "application/program_choice.h"
#include "workspaces/workspace_context.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>

class QLabel;
class QMenu;
class QProgressBar;
class QStatusBar;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class ModelLoader;
class RecentFiles;

class ModelOpening : public QObject {
    Q_OBJECT
public:
    ModelOpening(const WorkspaceContext& context, RecentFiles* recent);

    // A file path or "builtin:NAME"; `choice` says what to run of a .pt2 package without asking.
    void openSource(const QString& source, const std::optional<ProgramChoice>& choice = std::nullopt);
    void chooseFile(); // File › Open (Ctrl+O), from the folder last opened from
    bool isLoading() const;
    void setProgramChooser(ProgramChooser chooser) { m_chooseProgram = std::move(chooser); }
    // Asked before any model is opened (the results on screen would go): false cancels the open.
    void setMayReplace(std::function<bool()> mayReplace) { m_mayReplace = std::move(mayReplace); }
    // A session opened from `source` is in use: it heads the recent files (when the window remembers them).
    void remember(const QString& source);

    void addFileActions(QMenu* menu); // Open…, Open Built-in, Open Recent
    void addStatusWidgets(QStatusBar* bar);

Q_SIGNALS:
    void loaded(const QString& source, std::shared_ptr<kforge::ModelSession> session);
    void loadFailed(const QString& message); // one line, naming the file or builtin
    void loadingChanged(bool loading);
    // Open Recent's entry for a plan or a profile was chosen (the window opens it where it belongs).
    void documentRequested(const QString& path);

private:
    void rebuildRecentMenu();
    void setBusy(bool busy);
    void reportFailure(const QString& source, const QString& error);

    WorkspaceContext m_context;
    RecentFiles* m_recent;
    ModelLoader* m_loader;
    ProgramChooser m_chooseProgram; // a dialog unless a test sets one
    std::function<bool()> m_mayReplace;
    QLabel* m_busyLabel = nullptr;
    QProgressBar* m_busyBar = nullptr;
};

} // namespace kforge::ui
