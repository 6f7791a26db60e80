#pragma once
#include <kforge/provider_catalog.h>

#include <QMainWindow>

#include <memory>
#include <vector>

class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class EventLogView;
class FunctionStacksView;
class ModelLoader;
class ModuleTreeModel;
class ModuleTreePage;
class ModuleTreeView;
class PlanDocument;
class PlanEditorView;
class RecentFiles;
class RunController;

class MainWindow : public QMainWindow {
    Q_OBJECT
    // Off under test and in batch runs: errors are reported through loadFailed(), planError() and
    // runFinished() only.
    Q_PROPERTY(bool modalErrors READ modalErrors WRITE setModalErrors)
    // Off for batch runs (--screenshot): recent files and window geometry are left as the user had them.
    Q_PROPERTY(bool persistent READ isPersistent WRITE setPersistent)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    // What to do with unsaved plan edits before they would be lost: ask (the default), or answer without a
    // dialog (tests, batch runs).
    Q_PROPERTY(UnsavedChanges unsavedChanges READ unsavedChanges WRITE setUnsavedChanges)

public:
    enum class UnsavedChanges { Ask, Save, Discard, Cancel };
    Q_ENUM(UnsavedChanges)

    struct Actions {
        QAction* open = nullptr;
        QMenu* openBuiltin = nullptr;
        QMenu* openRecent = nullptr;
        QAction* clearRecent = nullptr;
        QAction* setInputs = nullptr;
        QAction* quit = nullptr;
        QAction* newPlan = nullptr;
        QAction* openPlan = nullptr;
        QAction* savePlan = nullptr;
        QAction* savePlanAs = nullptr;
        QAction* exportAitune = nullptr;
        QAction* undo = nullptr;
        QAction* redo = nullptr;
        QAction* filter = nullptr;
        QAction* expandAll = nullptr;
        QAction* collapseAll = nullptr;
        QAction* run = nullptr;
        QAction* step = nullptr;
        QAction* continueRun = nullptr;
        QAction* abort = nullptr;
        QAction* keepLeftovers = nullptr;
        QAction* unwind = nullptr;
        QAction* clearBreakpoints = nullptr;
        QAction* about = nullptr;
    };

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // A file path or "builtin:NAME". Returns at once; modelLoaded() or loadFailed() follows.
    void openSource(const QString& source);
    void restoreSettings();

    bool isLoading() const;
    const kforge::ModelSession* session() const;
    QString source() const;
    // Inputs of the forward, one "float32[1,8]" per argument (files have none until given). One line in
    // `error` on failure.
    bool setInputSpecs(const QStringList& specs, QString* error = nullptr);

    ModuleTreeModel* moduleModel() const;
    ModuleTreeView* moduleView() const;
    ModuleTreePage* modulePage() const;
    FunctionStacksView* stacksView() const;
    PlanEditorView* planEditor() const;
    EventLogView* eventLogView() const;
    PlanDocument* planDocument() const;
    RunController* runController() const;
    RecentFiles* recentFiles() const;
    const Actions& actions() const;
    // "tree", "stacks", "plan", "events": the page or dock contents of that name, or null.
    QWidget* viewNamed(const QString& name) const;
    QDockWidget* dockNamed(const QString& name) const;
    static QStringList viewNames();
    QString runStatusText() const; // what the status bar says about the forward: "paused at … (module enter)"

    // Plan files. Each asks about unsaved changes first where it would replace the plan (see unsavedChanges).
    bool newPlan();
    bool openPlan(const QString& path);
    bool savePlan(); // asks for a file name when the plan has none
    bool savePlanAs(const QString& path);
    bool exportAitunePlan(const QString& path);
    // Adds an entry (undoable) and shows it in the plan editor.
    void addPlanEntry(const QString& scope, const QString& function, const QString& providerType);

    // One forward with the current plan (F5); step (F10), continue (F8), abort.
    bool runForward();
    bool stepForward();
    void continueForward();
    void abortForward();

    bool modalErrors() const;
    void setModalErrors(bool modal);
    bool isPersistent() const;
    void setPersistent(bool persistent);
    UnsavedChanges unsavedChanges() const;
    void setUnsavedChanges(UnsavedChanges choice);

Q_SIGNALS:
    void modelLoaded(const QString& source);
    void loadFailed(const QString& message); // one line, naming the file or builtin
    void loadingChanged(bool loading);
    void planError(const QString& message); // one line: a plan file could not be read or written
    void runFinished(bool ok, const QString& message);
    void unsavedChangesPrompted();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createViews();
    void createActions();
    void createStatusBar();
    void connectRunController();
    void rebuildRecentMenu();
    void chooseFile();
    void chooseInputs();
    void choosePlanToOpen();
    bool choosePlanToSave();
    void choosePlanToExport();
    void showAbout();
    void setBusy(bool busy);
    void showSession(const QString& source, std::shared_ptr<kforge::ModelSession> session);
    void reportFailure(const QString& source, const QString& error);
    void reportPlanError(const QString& title, const QString& message);
    void updateModelStatus();
    void updateTitle();
    void updateRunActions();
    void updateRunStatus();
    bool maybeKeepPlanEdits(); // false: the user cancelled

    ModelLoader* m_loader = nullptr;
    RecentFiles* m_recent = nullptr;
    ModuleTreeModel* m_model = nullptr;
    ModuleTreePage* m_page = nullptr;
    PlanDocument* m_document = nullptr;
    RunController* m_run = nullptr;
    FunctionStacksView* m_stacksView = nullptr;
    PlanEditorView* m_planEditor = nullptr;
    EventLogView* m_eventView = nullptr;
    QDockWidget* m_stacksDock = nullptr;
    QDockWidget* m_planDock = nullptr;
    QDockWidget* m_eventsDock = nullptr;
    QStackedWidget* m_pages = nullptr;
    QLabel* m_placeholder = nullptr;
    QLabel* m_busyLabel = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QLabel* m_runLabel = nullptr;
    QLabel* m_leftoverLabel = nullptr;
    QLabel* m_runtimeLabel = nullptr;
    QLabel* m_deviceLabel = nullptr;
    QLabel* m_modelLabel = nullptr;
    Actions m_actions;
    std::vector<kforge::ProviderCatalogEntry> m_catalog;

    std::shared_ptr<kforge::ModelSession> m_session;
    QString m_source;
    bool m_modalErrors = true;
    bool m_persistent = true;
    UnsavedChanges m_unsavedChanges = UnsavedChanges::Ask;
};

} // namespace kforge::ui
