// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "application/dropped_files.h"
#include "application/program_choice.h"
#include "application/view_registry.h"
#include "controllers/plan_file_controller.h"
#include "window_actions.h"

#include <kforge/provider_catalog.h>

#include <QMainWindow>

#include <memory>

#include <vector>

class QDockWidget;
class QLabel;
class QTabWidget;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class ModelOpening;
class ModelWorkspace;
class ModuleScope;
class ModuleTreeView;
class OptimizeController;
class OptimizeWorkspace;
class PlanDocument;
class PlanWorkspace;
class PlanRunNotes;
class ProfileController;
class ProfilePage;
class ProfileWorkspace;
class RecentFiles;
class RunController;
class SessionOwner;
class StatusReporter;

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

    using Actions = WindowActions;

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // A file path or "builtin:NAME". Returns at once; modelLoaded() or loadFailed() follows.
    // A .pt2 package with several programs, or compiled code beside its program, asks what to run
    // (setProgramChooser); `choice` says it without asking.
    void openSource(const QString& source, const std::optional<ProgramChoice>& choice = std::nullopt);
    void restoreSettings();

    bool isLoading() const;
    const kforge::ModelSession* session() const;
    QString source() const;
    // Inputs of the forward, one "float32[1,8]" per argument (files have none until given). One line in
    // `error` on failure.
    bool setInputSpecs(const QStringList& specs, QString* error = nullptr);
    // Inputs from a torch.save file (a tensor, tuple, list or dict), as `kforge run --inputs-file`.
    bool loadInputsFile(const QString& path, QString* error = nullptr);

    // Its parts (the module tree view, the plan document, the run, profile, benchmark, verify and optimize
    // controllers, the profile page) by object name: parts_by_name.h.
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
    QStringList planWarnings() const;

    // Plan files. Each asks about unsaved changes first where it would replace the plan (see unsavedChanges).
    bool newPlan();
    bool openPlan(const QString& path);
    bool savePlanAs(const QString& path);
    bool exportAitunePlan(const QString& path);
    // Adds an entry (undoable) and shows it in the plan editor.
    void addPlanEntry(const QString& scope, const QString& function, const QString& providerType);

    // One forward with the current plan (F5); step (F10), continue (F8); Abort is its action.
    bool runForward();
    bool stepForward();
    void continueForward();

    // Profiles (ProfileWorkspace): a baseline (F6), a run with the plan's enabled entries (Shift+F6),
    // both and their comparison (Ctrl+F6), off the UI thread; profileFinished() follows. False, with
    // profileError(), when nothing started. Benchmark, Verify and Cancel are their actions (actions()).
    bool profileBaseline();
    bool profileWithPlan();
    bool profileCompare();
    // Optimize (OptimizeWorkspace, Ctrl+Shift+O): make_plan with providers and generators off the UI thread,
    // its candidates filling the Optimize dock; optimizeFinished() follows. False, with profileError(), when
    // nothing started. Apply is its action.
    bool optimize();
    void cancelOptimize();
    // .kfprof result files (open works without a model) and exports; false with profileError() on failure.
    static bool isProfileFile(const QString& path);
    bool openProfile(const QString& path);
    // A plan or profile from Open Recent: opened where it belongs; a file that is gone leaves the list.
    bool openDocument(const QString& path);
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
    void setProgramChooser(ProgramChooser chooser);
    // Whether a .kfprof dropped while a run is shown is compared with it or opened: a menu at the drop unless set.
    void setDropChooser(DropChooser chooser);
    bool isPersistent() const;
    void setPersistent(bool persistent);
    UnsavedChanges unsavedChanges() const;
    void setUnsavedChanges(UnsavedChanges choice);
    // Profile results nobody saved, asked about before another model opens or the window closes (Ask: a dialog).
    UnsavedChanges unsavedResults() const;
    void setUnsavedResults(UnsavedChanges choice);

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
    void unsavedResultsPrompted();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void rememberDocument(const QString& path); // a plan or profile opened or saved
    void createWorkspaces();
    void createMenus();
    void createStatusBar();
    void connectParts();
    void showAbout();
    void focusFilter();          // of the module tree or of the kernel table, whichever page is shown
    void reloadCatalog();        // after a plugin loaded: its provider types join the menus and the catalog
    void showSession();          // the owner's new session
    void sessionDeviceChanged(); // a capture or a CUDA profile moved the model: validation and the status follow
    void updateModelStatus();
    void updateTitle();

    SessionOwner* m_owner = nullptr; // the session and its one worker thread, first: the controllers use it
    RecentFiles* m_recent = nullptr;
    PlanDocument* m_document = nullptr;
    StatusReporter* m_status = nullptr;
    PlanRunNotes* m_notes = nullptr;
    ModuleScope* m_scope = nullptr; // the module the pages follow: the tree's current one
    ViewRegistry m_views;
    Actions m_actions;
    std::vector<kforge::ProviderCatalogEntry> m_catalog;
    QTabWidget* m_centralTabs = nullptr; // the workspaces' pages: Modules, Profile
    ModelOpening* m_opening = nullptr;
    PlanWorkspace* m_planSpace = nullptr;
    ModelWorkspace* m_modelSpace = nullptr;
    ProfileWorkspace* m_profileSpace = nullptr;
    OptimizeWorkspace* m_optimizeSpace = nullptr;
    QLabel* m_modelLabel = nullptr;
};

} // namespace kforge::ui
