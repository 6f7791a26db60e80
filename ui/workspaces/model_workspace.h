// SPDX-License-Identifier: Apache-2.0
#pragma once
// The model workspace: the module tree (Modules tab) and the docks about forwards — function stacks, event log,
// graph captures, inputs — with the Run menu (run, step, continue, abort, unwind, capture) and the inputs actions.
// It runs the forwards (RunController) and captures, and shows profile times in the tree's Time columns.
#include "item_models/profile_results.h"
#include "workspaces/workspace_context.h"

#include <kforge/profiling.h>
#include <kforge/provider_catalog.h>

#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

class QDockWidget;
class QLabel;
class QMenu;
class QMenuBar;
class QStackedWidget;
class QStatusBar;
class QTabWidget;
class QToolBar;

namespace kforge {
struct VerifyReport;
}

namespace kforge::ui {

class StartPage;

class CaptureListModel;
class CapturesView;
class EventLogView;
class FunctionStacksView;
class InputsController;
class InputsView;
class ModuleTreeModel;
class ModuleTreePage;
class RecentFiles;
class RunController;

class ModelWorkspace : public QObject {
    Q_OBJECT
public:
    StartPage* startPage() const { return m_placeholder; }
    ModelWorkspace(const WorkspaceContext& context, RecentFiles* recent, QTabWidget* tabs);
    ~ModelWorkspace() override;

    static QStringList viewNames();
    void addFileActions(QMenu* fileMenu); // Set Inputs, Load Inputs
    void addRunMenu(QMenuBar* menuBar);
    void addViewActions(QMenu* viewMenu); // expand, collapse, the docks
    void addToolBarActions(QToolBar* toolBar);
    void addStatusWidgets(QStatusBar* statusBar);

    RunController* runController() const { return m_run; }
    InputsController* inputs() const { return m_inputs; }
    ModuleTreePage* page() const { return m_page; }
    QDockWidget* stacksDock() const { return m_stacksDock; }

    // One forward with the plan (F5); step (F10), continue (F8), abort. False with runFinished(false, why) when
    // nothing started.
    bool runForward();
    bool stepForward();
    void continueForward();
    void abortForward();
    // R15: a CUDA graph capture of one forward with the plan; false with captureFinished(false, why).
    bool captureGraph();
    QString runStatusText() const;

    void showSession(QStringList& warnings); // the owner's new session: its tree, captures and inputs
    void setCatalog(const std::vector<kforge::ProviderCatalogEntry>& catalog);
    // The Time columns: the run the page's choice names (the plan's when both exist, with Δ against the baseline),
    // of the results the Profile tab shows.
    void setProfileResults(ResultsPtr results);
    // The Error column: the verification's comparison of each module's outputs (cleared by a new session).
    void showVerification(const kforge::VerifyReport& report);
    void focusFilter();
    void chooseInputs();
    void chooseInputsFile();

Q_SIGNALS:
    void runFinished(bool ok, const QString& message);
    void captureFinished(bool ok, const QString& message);
    void addProviderRequested(const QString& scope, const QString& function, const QString& providerType);
    void sessionDeviceChanged(); // a capture moved the model to the CUDA device

private:
    void createViews();
    void createActions();
    void connectRunController();
    void updateRunActions();
    QString otherModelNotice() const; // why the profile runs are not shown on the tree; "" when they are
    void updateModuleTimes();
    void captureDone(bool ok, const QString& message);
    void showCentral();

    WorkspaceContext m_context;
    QTabWidget* m_tabs;
    RunController* m_run;
    InputsController* m_inputs;
    ModuleTreeModel* m_model = nullptr;
    ModuleTreePage* m_page = nullptr;
    QStackedWidget* m_pages = nullptr;
    StartPage* m_placeholder = nullptr; // before a model is open
    RecentFiles* m_recent;
    void showRecent(); // on the start page
    FunctionStacksView* m_stacksView = nullptr;
    EventLogView* m_eventView = nullptr;
    CaptureListModel* m_captureModel = nullptr;
    CapturesView* m_capturesView = nullptr;
    InputsView* m_inputsView = nullptr;
    QDockWidget* m_stacksDock = nullptr;
    QDockWidget* m_eventsDock = nullptr;
    QDockWidget* m_capturesDock = nullptr;
    QDockWidget* m_inputsDock = nullptr;
    QLabel* m_runLabel = nullptr;
    QLabel* m_leftoverLabel = nullptr;
    QLabel* m_runtimeLabel = nullptr;
    ResultsPtr m_profileResults; // the Profile tab's
};

} // namespace kforge::ui
