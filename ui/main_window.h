// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "controllers/plan_file_controller.h"
#include "application/program_choice.h"

#include <kforge/provider_catalog.h>

#include <QMainWindow>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;
class QTabWidget;
class QToolBar;

namespace kforge {
class ModelSession;
struct EntryDeclines;
struct Plan;
} // namespace kforge

namespace kforge::ui {

class CaptureListModel;
class CapturesView;
class InputsView;
class EventLogView;
class FunctionStacksView;
class ModelLoader;
class ModuleTreeModel;
class ModuleTreePage;
class ModuleTreeView;
class OptimizeController;
class OptimizeView;
class PlanDocument;
class PlanEditorView;
class ProfileController;
class ProfileFileController;
class ProfilePage;
class RecentFiles;
class RunController;
class SessionOwner;

class MainWindow : public QMainWindow {
    Q_OBJECT
    // Off under test and in batch runs: errors are reported through loadFailed(), planError() and
    // runFinished() only.
    Q_PROPERTY(bool modalErrors READ modalErrors WRITE setModalErrors)
    // Off for batch runs (--screenshot): recent files and window geometry are left as the user had them.
    Q_PROPERTY(bool persistent READ isPersistent WRITE setPersistent)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)

public:
    // What to do with unsaved plan edits before they would be lost: ask (the default), or answer without a
    // dialog (tests, batch runs).
    using UnsavedChanges = PlanFileController::UnsavedChanges;

    struct Actions {
        QAction* open = nullptr;
        QMenu* openBuiltin = nullptr;
        QMenu* openRecent = nullptr;
        QAction* clearRecent = nullptr;
        QAction* setInputs = nullptr;
        QAction* loadInputs = nullptr;
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
        QAction* capture = nullptr;
        QAction* preferences = nullptr;
        QAction* about = nullptr;
        QAction* openProfile = nullptr;
        QAction* saveProfile = nullptr;
        QAction* exportTrace = nullptr;
        QAction* exportCsv = nullptr;
        QAction* exportChart = nullptr;
        QAction* exportTimeline = nullptr;
        QAction* profileBaseline = nullptr;
        QAction* profileWithPlan = nullptr;
        QAction* profileCompare = nullptr;
        QAction* profileBenchmark = nullptr;
        QAction* cancelProfile = nullptr;
        QAction* optimize = nullptr;
        QAction* cancelOptimize = nullptr;
        QAction* applyOptimized = nullptr;
    };

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // A file path or "builtin:NAME". Returns at once; modelLoaded() or loadFailed() follows.
    // A .pt2 package with several programs asks which (setProgramChooser); `program` names one without asking.
    void openSource(const QString& source, const QString& program = {});
    void restoreSettings();

    bool isLoading() const;
    const kforge::ModelSession* session() const;
    QString source() const;
    // Inputs of the forward, one "float32[1,8]" per argument (files have none until given). One line in
    // `error` on failure.
    bool setInputSpecs(const QStringList& specs, QString* error = nullptr);
    // Inputs from a torch.save file (a tensor, tuple, list or dict), as `kforge run --inputs-file`.
    bool loadInputsFile(const QString& path, QString* error = nullptr);

    ModuleTreeView* moduleView() const;
    PlanDocument* planDocument() const;
    RunController* runController() const;
    ProfileController* profileController() const;
    ProfilePage* profilePage() const;
    RecentFiles* recentFiles() const;
    const Actions& actions() const;
    // "tree", "stacks", "plan", "events", "captures", ...: the page or dock contents of that name, or null.
    QWidget* viewNamed(const QString& name) const;
    QDockWidget* dockNamed(const QString& name) const;
    static QStringList viewNames();
    // Brings the view of that name to the front: the central page or profile tab it is on, or its dock.
    bool showView(const QString& name);
    QString runStatusText() const; // what the status bar says about the forward: "paused at … (module enter)"
    // The plan entries that can never fire in the last forward, capture or profile started with a plan
    // (kforge::planWarnings, one "plan entry N (…) can never fire: reason" each); empty after a baseline.
    QStringList planWarnings() const { return m_planWarnings; }

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

    // Profiles (main_window_profile.cpp): a baseline (F6), a run with the plan's enabled entries (Shift+F6),
    // both and their comparison (Ctrl+F6), off the UI thread; profileFinished() follows. False, with
    // profileError(), when nothing started.
    bool profileBaseline();
    bool profileWithPlan();
    bool profileCompare();
    bool profileBenchmark();
    void updateModuleTimes();
    void cancelProfile();
    // Optimize (main_window_optimize.cpp, Ctrl+Shift+O): make_plan with providers and generators off the UI thread,
    // its candidates filling the Optimize dock; optimizeFinished() follows. False, with profileError(), when
    // nothing started. applyOptimizedPlan() puts its plan in the plan editor as one undoable step.
    bool optimize();
    void cancelOptimize();
    bool applyOptimizedPlan();
    OptimizeController* optimizeController() const { return m_optimize; }
    SessionOwner* sessionOwner() const { return m_owner; }
    // .kfprof result files (open works without a model) and exports; false with profileError() on failure.
    static bool isProfileFile(const QString& path);
    bool openProfile(const QString& path);
    bool saveProfile(const QString& path); // the baseline and the plan run, whichever exist
    bool exportChromeTrace(const QString& path);
    bool exportCsv(const QString& path); // the run shown
    bool exportChartPng(const QString& path);
    bool exportTimelinePng(const QString& path);
    // R15: a CUDA graph capture of one forward with the plan in effect, off the UI thread; captureFinished()
    // follows. False (with captureFinished(false, why)) when it cannot start: no CUDA device, no model, a
    // forward or a profile running.
    bool captureGraph();
    void showPreferences(); // Edit › Preferences (Ctrl+,)

    bool modalErrors() const;
    void setModalErrors(bool modal);
    void setProgramChooser(ProgramChooser chooser) { m_chooseProgram = std::move(chooser); }
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
    void profileFinished(bool ok, const QString& message);  // ok: all iterations measured
    void profileError(const QString& message);              // one line: a profile or a profile file failed
    void optimizeFinished(bool ok, const QString& message); // ok: every function tried
    void captureFinished(bool ok, const QString& message);
    // A forward, capture or profile with a plan is starting: its entries that can never fire (often none).
    void planWarningsChanged(const QStringList& warnings);
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
    void chooseInputsFile();
    void inputsChanged(const QString& source, const QString& remembered);
    void restoreRememberedInputs(QStringList& warnings);
    QString inputsRefusal() const; // why the inputs cannot change now; empty when they can
    void showAbout();
    void createProfileFileActions(QMenu* fileMenu);
    void createProfileMenu();
    void addProfileToolBarActions(QToolBar* toolBar);
    void connectProfileController();
    void createOptimizeDock(QMenu* profileMenu);
    void updateOptimizeActions();
    void updateProfileActions();
    void updateDeviceStatus(); // which device forwards and profiles use
    void focusFilter();        // of the module tree or of the kernel table, whichever page is shown
    bool startProfile(const std::function<bool(QString*)>& start);
    // A profile that runs the plan (with plan, compare, benchmark): notes the plan's warnings, clears its declines.
    bool startPlanProfile(bool (ProfileController::*start)(const kforge::Plan&, QString*));
    void reportProfileError(const QString& title, const QString& message);
    static QStringList profileViewNames();
    QWidget* profileViewNamed(const QString& name) const;
    void reloadCatalog(); // after a plugin loaded: its provider types join the menus and the catalog
    void captureDone(bool ok, const QString& message);
    void setBusy(bool busy);
    void showSession(); // the owner's new session
    void reportFailure(const QString& source, const QString& error);
    void updateModelStatus();
    void updateTitle();
    void updateRunActions();
    void updateRunStatus();
    // Before a forward, capture or profile with `plan` on `device` ("cpu", "cuda[:N]"): keeps its entries that can
    // never fire, shows them in the status bar and emits planWarningsChanged().
    void notePlanWarnings(const kforge::Plan& plan, const QString& device);
    void clearPlanWarnings();
    QString withPlanWarnings(const QString& message) const; // a status bar line, the plan warnings after it
    // A forward, capture or profile with the plan started: the plan editor's Declined column is cleared, and is
    // filled by showDeclines() when it ends, if the plan is still the one it ran.
    void planRunStarted();
    void showDeclines(const std::vector<kforge::EntryDeclines>& declines);

    SessionOwner* m_owner = nullptr; // the session and its one worker thread, first: the controllers use it
    ModelLoader* m_loader = nullptr;
    RecentFiles* m_recent = nullptr;
    ModuleTreeModel* m_model = nullptr;
    ModuleTreePage* m_page = nullptr;
    PlanDocument* m_document = nullptr;
    PlanFileController* m_planFiles = nullptr;       // new, open, save, export of m_document
    ProfileFileController* m_profileFiles = nullptr; // .kfprof files and exports of the profile side
    RunController* m_run = nullptr;
    FunctionStacksView* m_stacksView = nullptr;
    PlanEditorView* m_planEditor = nullptr;
    EventLogView* m_eventView = nullptr;
    CaptureListModel* m_captureModel = nullptr;
    CapturesView* m_capturesView = nullptr;
    QDockWidget* m_capturesDock = nullptr;
    InputsView* m_inputsView = nullptr;
    QDockWidget* m_inputsDock = nullptr;
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
    ProfileController* m_profile = nullptr;
    ProfilePage* m_profilePage = nullptr;
    OptimizeController* m_optimize = nullptr;
    OptimizeView* m_optimizeView = nullptr;
    QDockWidget* m_optimizeDock = nullptr;
    QTabWidget* m_centralTabs = nullptr; // the module tree page and the profile page
    Actions m_actions;
    std::vector<kforge::ProviderCatalogEntry> m_catalog;

    QStringList m_planWarnings;
    std::optional<std::uint64_t> m_declinesRevision; // the plan revision (PlanModel) a running plan run started with
    bool m_modalErrors = true;
    ProgramChooser m_chooseProgram; // which program of a package with several; a dialog unless a test sets one
    bool m_persistent = true;
};

} // namespace kforge::ui
