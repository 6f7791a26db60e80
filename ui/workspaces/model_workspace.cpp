// SPDX-License-Identifier: Apache-2.0
#include "workspaces/model_workspace.h"

#include "application/app_icons.h"
#include "application/app_settings.h"
#include "application/status_reporter.h"
#include "application/system_info.h"
#include "application/view_registry.h"
#include "controllers/inputs_controller.h"
#include "controllers/plan_run_notes.h"
#include "controllers/run_controller.h"
#include "controllers/session_owner.h"
#include "item_models/capture_list_model.h"
#include "item_models/module_scope.h"
#include "item_models/module_tree_model.h"
#include "item_models/plan_document.h"
#include "views/captures_view.h"
#include "views/event_log_view.h"
#include "views/function_stacks_view.h"
#include "views/inputs_view.h"
#include "views/module_tree_page.h"
#include "views/start_page.h"
#include "application/recent_files.h"
#include "views/module_tree_view.h"
#include "views/semantic_text.h"
#include "window_actions.h"

#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/verify.h>

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

namespace kforge::ui {

ModelWorkspace::ModelWorkspace(const WorkspaceContext& context, RecentFiles* recent, QTabWidget* tabs)
    : QObject(context.window), m_context(context), m_tabs(tabs), m_run(new RunController(context.owner, this)),
      m_inputs(new InputsController(context.owner, recent, this)), m_recent(recent)
{
    m_run->setObjectName(QStringLiteral("runController"));
    createViews();
    connect(m_recent, &RecentFiles::changed, this, &ModelWorkspace::showRecent);
    showRecent();
    createActions();
    connectRunController();
    connect(m_context.owner, &SessionOwner::activityChanged, this, &ModelWorkspace::updateRunActions);
    connect(m_context.document, &PlanDocument::planChanged, this, [this] {
        m_model->setPlan(m_context.document->plan());
        m_captureModel->setPlan(m_context.document->plan());
    });
    connect(m_inputs, &InputsController::changed, m_inputsView, &InputsView::setInputs);
    connect(m_inputs, &InputsController::statusMessage, m_context.status,
            [this](const QString& message) { m_context.status->show(message); });
    updateRunActions();
}

ModelWorkspace::~ModelWorkspace() = default;

void ModelWorkspace::showRecent() { m_placeholder->setRecent(m_recent->entries(), m_recent->documents()); }

QStringList ModelWorkspace::viewNames()
{
    return {QStringLiteral("tree"),   QStringLiteral("tree-time"), QStringLiteral("stacks"),
            QStringLiteral("events"), QStringLiteral("captures"),  QStringLiteral("inputs")};
}

void ModelWorkspace::createViews()
{
    QMainWindow* window = m_context.window;
    m_model = new ModuleTreeModel(this);
    m_model->setIcons(icon("hooked"), icon("in-scope"), icon("inside"), icon("breakpoint"));
    m_model->setObjectName(QStringLiteral("moduleModel")); // object names: how tools and tests find the parts
    m_page = new ModuleTreePage(m_model, window);
    m_page->setObjectName(QStringLiteral("modulePage"));
    m_placeholder = new StartPage(window);
    QStringList builtins;
    for (const std::string& name : kforge::ModelSession::builtinModels())
        builtins << QString::fromStdString(name);
    m_placeholder->setBuiltins(builtins);
    m_pages = new QStackedWidget(window);
    m_pages->addWidget(m_placeholder);
    m_pages->addWidget(m_page);
    m_tabs->addTab(m_pages, icon("hooked"), tr("Modules"));

    m_stacksView = new FunctionStacksView(m_run->stacksModel(), window);
    m_eventView = new EventLogView(m_run->eventLog(), window);
    m_captureModel = new CaptureListModel(this);
    m_captureModel->setObjectName(QStringLiteral("captureModel"));
    m_capturesView = new CapturesView(m_captureModel, window);
    m_capturesView->setCaptureAvailable(cudaDeviceVisible(), cudaUnavailableExplanation());
    m_inputsView = new InputsView(window);

    auto makeDock = [window](const QString& title, const QString& name, QWidget* widget) {
        auto* dock = new QDockWidget(title, window);
        dock->setObjectName(name); // saveState() needs it
        dock->setWidget(widget);
        return dock;
    };
    m_stacksDock = makeDock(tr("Function Stacks"), QStringLiteral("stacksDock"), m_stacksView);
    m_eventsDock = makeDock(tr("Event Log"), QStringLiteral("eventsDock"), m_eventView);
    m_capturesDock = makeDock(tr("Graph Captures"), QStringLiteral("capturesDock"), m_capturesView);
    m_inputsDock = makeDock(tr("Inputs"), QStringLiteral("inputsDock"), m_inputsView);
    window->addDockWidget(Qt::RightDockWidgetArea, m_stacksDock);
    window->addDockWidget(Qt::BottomDockWidgetArea, m_eventsDock);
    for (QDockWidget* dock : {m_eventsDock, m_capturesDock, m_inputsDock})
        window->tabifyDockWidget(m_context.bottomDock, dock);
    window->resizeDocks({m_stacksDock}, {480}, Qt::Horizontal);

    ViewRegistry& views = *m_context.views;
    views.add(QStringLiteral("tree"), m_page, nullptr, [this] { showCentral(); });
    views.add(QStringLiteral("tree-time"), m_page, nullptr, [this] {
        showCentral(); // the module tree with its time columns, widest first once a profile ran
        m_page->sortByTime();
    });
    views.add(QStringLiteral("stacks"), m_stacksView, m_stacksDock);
    views.add(QStringLiteral("events"), m_eventView, m_eventsDock);
    views.add(QStringLiteral("captures"), m_capturesView, m_capturesDock);
    views.add(QStringLiteral("inputs"), m_inputsView, m_inputsDock);

    connect(m_page, &ModuleTreePage::addProviderRequested, this, &ModelWorkspace::addProviderRequested);
    connect(m_model, &ModuleTreeModel::providerDropped, this, &ModelWorkspace::addProviderRequested);
    connect(m_page, &ModuleTreePage::moduleBreakpointToggled, m_run, &RunController::toggleModuleBreakpoint);
    connect(m_page, &ModuleTreePage::currentPathChanged, m_context.scope, &ModuleScope::setPath);
    // A scope cleared elsewhere (the Profile page's scope chip) selects the root here too.
    connect(m_context.scope, &ModuleScope::changed, m_page, [this](const QString& path) {
        if (m_page->currentPath() != path)
            m_page->revealPath(path);
    });
    connect(m_page, &ModuleTreePage::timeRunChanged, this, &ModelWorkspace::updateModuleTimes);
    connect(m_stacksView, &FunctionStacksView::functionBreakpointToggled, m_run,
            &RunController::toggleFunctionBreakpoint);
    connect(m_stacksView, &FunctionStacksView::unwindRequested, this, [this] { m_context.actions->unwind->trigger(); });
    connect(m_capturesView, &CapturesView::captureRequested, this, &ModelWorkspace::captureGraph);
    connect(m_capturesView, &CapturesView::unwindRequested, this, [this] { m_context.actions->unwind->trigger(); });
}

void ModelWorkspace::createActions()
{
    WindowActions& a = *m_context.actions;
    a.setInputs = new QAction(tr("Set &Inputs…"), this);
    a.setInputs->setStatusTip(tr("The forward's inputs, as dtype[shape] per argument"));
    connect(a.setInputs, &QAction::triggered, this, &ModelWorkspace::chooseInputs);
    a.loadInputs = new QAction(tr("&Load Inputs…"), this);
    a.loadInputs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
    a.loadInputs->setStatusTip(tr("Real inputs from a torch.save file (tensor, tuple, list or dict)"));
    connect(a.loadInputs, &QAction::triggered, this, &ModelWorkspace::chooseInputsFile);
    m_inputsView->setActions(a.setInputs, a.loadInputs);

    auto make = [this](const char* iconName, const QString& text, auto slot) {
        auto* action = new QAction(iconName ? icon(iconName) : QIcon(), text, this);
        connect(action, &QAction::triggered, this, slot);
        return action;
    };
    a.run = make("run", tr("&Run"), [this] { runForward(); });
    a.run->setShortcut(QKeySequence(Qt::Key_F5));
    a.run->setStatusTip(tr("One forward with the plan's enabled entries in effect"));
    a.step = make("step", tr("&Step"), [this] { stepForward(); });
    a.step->setShortcut(QKeySequence(Qt::Key_F10));
    a.step->setStatusTip(tr("Pause at the next module entry or function call"));
    a.continueRun = make("continue", tr("&Continue"), [this] { continueForward(); });
    a.continueRun->setShortcut(QKeySequence(Qt::Key_F8));
    a.abort = make("abort", tr("&Abort"), [this] { abortForward(); });
    a.abort->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
    a.abort->setStatusTip(tr("Make the paused forward throw; the call guard unwinds its patches"));
    a.keepLeftovers = new QAction(tr("&Keep Leftovers"), this);
    a.keepLeftovers->setCheckable(true);
    a.keepLeftovers->setStatusTip(
        tr("Debugging: leave the patches of a failed forward in effect, to see them in the stacks view"));
    connect(a.keepLeftovers, &QAction::toggled, m_run, &RunController::setKeepLeftovers);
    a.keepLeftovers->setChecked(AppSettings::keepLeftovers());
    a.unwind = make("unwind", tr("&Unwind Leftovers"), [this] {
        const int count = int(m_run->leftovers().size());
        m_run->unwind();
        m_context.status->show(tr("Unwound %n leftover patch(es): the originals are back", nullptr, count));
    });
    a.clearBreakpoints = make(nullptr, tr("Clear &Breakpoints"), [this] { m_run->clearBreakpoints(); });
    a.capture = make("capture", tr("Capture CUDA &Graph"), [this] { captureGraph(); });
    a.capture->setStatusTip(tr("Capture one forward with the plan in effect into a CUDA graph"));
    a.expandAll = make("expand", tr("&Expand All"), [this] { m_page->expandAll(); });
    a.collapseAll = make("collapse", tr("&Collapse All"), [this] { m_page->collapseAll(); });
}

void ModelWorkspace::addFileActions(QMenu* fileMenu)
{
    fileMenu->addAction(m_context.actions->setInputs);
    fileMenu->addAction(m_context.actions->loadInputs);
}

void ModelWorkspace::addRunMenu(QMenuBar* menuBar)
{
    const WindowActions& a = *m_context.actions;
    QMenu* menu = menuBar->addMenu(tr("&Run"));
    menu->addActions({a.run, a.step, a.continueRun, a.abort});
    menu->addSeparator();
    menu->addActions({a.keepLeftovers, a.unwind, a.clearBreakpoints});
    menu->addSeparator();
    menu->addAction(a.capture);
}

void ModelWorkspace::addViewActions(QMenu* viewMenu)
{
    viewMenu->addAction(m_context.actions->expandAll);
    viewMenu->addAction(m_context.actions->collapseAll);
    viewMenu->addSeparator();
    for (QDockWidget* dock : {m_stacksDock, m_eventsDock, m_capturesDock, m_inputsDock})
        viewMenu->addAction(dock->toggleViewAction());
}

void ModelWorkspace::addToolBarActions(QToolBar* toolBar)
{
    const WindowActions& a = *m_context.actions;
    toolBar->addActions({a.run, a.step, a.continueRun, a.abort, a.unwind, a.capture});
}

void ModelWorkspace::addStatusWidgets(QStatusBar* statusBar)
{
    m_runLabel = new QLabel(statusBar);
    m_runLabel->setObjectName(QStringLiteral("runStatus"));
    m_leftoverLabel = new QLabel(tr("no leftovers"), statusBar);
    m_leftoverLabel->setObjectName(QStringLiteral("leftoverStatus"));
    m_leftoverLabel->setToolTip(tr("Patches a failed forward or capture left in effect (Run › Unwind restores)"));
    m_runtimeLabel = new QLabel(tr("runtime inactive"), statusBar);
    m_runtimeLabel->setObjectName(QStringLiteral("runtimeStatus"));
    m_runtimeLabel->setToolTip(tr("Whether a plan's runtime is active: its providers are installed in scope"));
    for (QLabel* label : {m_runLabel, m_leftoverLabel, m_runtimeLabel})
        statusBar->addPermanentWidget(label);
}

void ModelWorkspace::connectRunController()
{
    connect(m_run, &RunController::statisticsChanged, this,
            [this] { m_model->setRunStatistics(m_run->statistics().modules()); });
    connect(m_run, &RunController::breakpointsChanged, this,
            [this] { m_model->setBreakpoints(m_run->moduleBreakpoints()); });
    connect(m_run, &RunController::runningChanged, this, [this](bool running) {
        m_stacksView->setCaption(running ? tr("Live: a forward is running") : tr("After the last forward"));
        m_eventView->setStreamError(m_run->eventStreamError());
        updateRunActions();
    });
    connect(m_run, &RunController::pausedChanged, this, [this](bool paused) {
        const QString path = m_run->pausedModulePath();
        m_model->setPausedPath(path, paused);
        if (paused) {
            m_page->revealPath(path);
            QString caption = m_run->statusText();
            if (!caption.isEmpty())
                caption[0] = caption[0].toUpper();
            m_stacksView->setCaption(caption);
        } else if (m_run->isRunning()) {
            m_stacksView->setCaption(tr("Live: a forward is running"));
        }
        updateRunActions();
    });
    connect(m_run, &RunController::leftoversChanged, this, [this](int count) {
        m_leftoverLabel->setText(count > 0 ? tr("%n leftover(s)", nullptr, count) : tr("no leftovers"));
        setSemanticText(m_leftoverLabel, count > 0 ? std::optional(Semantic::Leftover) : std::nullopt, true);
        m_captureModel->setLiveLeftovers(m_run->leftovers());
        if (count > 0)
            m_stacksDock->raise();
        updateRunActions();
    });
    connect(m_run, &RunController::runtimeActiveChanged, this,
            [this](bool active) { m_runtimeLabel->setText(active ? tr("runtime active") : tr("runtime inactive")); });
    connect(m_run, &RunController::captureFinished, this, &ModelWorkspace::captureDone);
    connect(m_run, &RunController::runFinished, this, [this](bool ok, const QString& message) {
        m_context.notes->declinesArrived(m_run->declines());
        m_context.status->show(m_context.notes->withWarnings(message));
        Q_EMIT runFinished(ok, message);
        if (!ok && !m_run->wasAborted()) // an abort the user asked for is reported in the status bar only
            m_context.status->warningDialog(tr("Forward Failed"), message);
    });
}

void ModelWorkspace::updateRunActions()
{
    const WindowActions& a = *m_context.actions;
    const bool running = m_run->isRunning();
    const bool paused = m_run->isPaused();
    const bool canStart = m_context.owner->canStart(SessionOwner::Activity::Forward);
    a.run->setEnabled(canStart);
    a.step->setEnabled(canStart || paused);
    a.continueRun->setEnabled(paused);
    a.abort->setEnabled(paused);
    a.unwind->setEnabled(!running && !m_run->leftovers().empty());
    a.setInputs->setEnabled(canStart);
    a.loadInputs->setEnabled(canStart);
    a.capture->setEnabled(canStart && cudaDeviceVisible());
    QString busy;
    if (!m_context.owner->session())
        busy = tr("Open a model to capture its forward.");
    else if (!canStart)
        busy = tr("Waiting: %1").arg(m_context.owner->refusal(SessionOwner::Activity::Capture));
    m_capturesView->setBusy(!busy.isEmpty(), busy);
    if (m_runLabel)
        m_runLabel->setText(m_run->statusText());
}

QString ModelWorkspace::runStatusText() const { return m_runLabel->text(); }

bool ModelWorkspace::runForward()
{
    const auto& session = m_context.owner->session();
    if (session && !m_run->isRunning())
        m_context.notes->noteWarnings(QString::fromStdString(session->device()));
    QString error;
    if (!m_run->run(m_context.document->plan(), &error)) {
        const QString message = tr("Cannot run: %1").arg(error);
        m_context.status->show(message);
        Q_EMIT runFinished(false, message);
        m_context.status->warningDialog(tr("Cannot Run"), error);
        return false;
    }
    m_context.notes->runStarted();
    return true;
}

bool ModelWorkspace::stepForward()
{
    const auto& session = m_context.owner->session();
    const bool fromIdle = !m_run->isRunning();
    if (session && fromIdle) // from idle: a forward starts (paused, it goes on with its plan)
        m_context.notes->noteWarnings(QString::fromStdString(session->device()));
    QString error;
    if (!m_run->step(m_context.document->plan(), &error)) {
        const QString message = tr("Cannot step: %1").arg(error);
        m_context.status->show(message);
        Q_EMIT runFinished(false, message);
        m_context.status->warningDialog(tr("Cannot Step"), error);
        return false;
    }
    if (fromIdle)
        m_context.notes->runStarted();
    updateRunActions();
    return true;
}

void ModelWorkspace::continueForward() { m_run->continueRun(); }

void ModelWorkspace::abortForward() { m_run->abort(); }

bool ModelWorkspace::captureGraph()
{
    QString error;
    if (!cudaDeviceVisible()) {
        error = cudaUnavailableExplanation();
    } else {
        m_context.notes->noteWarnings(QStringLiteral("cuda"));
        if (m_run->capture(m_context.document->plan(), AppSettings::captureWarmupIterations(), &error)) {
            m_context.notes->runStarted();
            m_capturesDock->show();
            m_capturesDock->raise();
            m_context.status->show(m_context.notes->withWarnings(tr("Capturing a CUDA graph of one forward…")), 0);
            return true;
        }
    }
    const QString message = tr("Cannot capture: %1").arg(error);
    m_context.status->show(message);
    Q_EMIT captureFinished(false, message);
    m_context.status->warningDialog(tr("Cannot Capture"), error);
    return false;
}

void ModelWorkspace::captureDone(bool ok, const QString& message)
{
    if (const auto& session = m_context.owner->session()) {
        m_captureModel->setCaptures(session->captures());
        Q_EMIT sessionDeviceChanged(); // a capture moves the model to the CUDA device: validation follows it
    }
    m_captureModel->setLiveLeftovers(m_run->leftovers());
    m_context.notes->declinesArrived(m_run->declines());
    m_context.status->show(m_context.notes->withWarnings(message));
    Q_EMIT captureFinished(ok, message);
    if (!ok)
        m_context.status->warningDialog(tr("Graph Capture Failed"), message);
}

void ModelWorkspace::showSession(QStringList& warnings)
{
    const kforge::ModelSession& session = *m_context.owner->session();
    m_model->setModules(session.modules(), QString::fromStdString(session.displayName()));
    m_model->setPausedPath({}, false);
    m_model->setModuleAgreement({}, {}, false); // the last verification was of another session
    updateModuleTimes();                        // the profile shown may be of the model that was loaded before
    m_page->view()->expandAndFit();
    m_pages->setCurrentWidget(m_page);
    m_captureModel->setCaptures(session.captures());
    updateRunActions();
    m_inputs->sessionOpened(warnings);
    if (!session.hasInputs())
        warnings << tr("no example inputs: set them with File › Set Inputs before running");
}

void ModelWorkspace::setCatalog(const std::vector<kforge::ProviderCatalogEntry>& catalog)
{
    m_page->setCatalog(catalog);
}

void ModelWorkspace::setProfileResults(ResultsPtr results)
{
    m_profileResults = std::move(results);
    updateModuleTimes();
}

// A run's times go on the tree only when the run is of the loaded model (the same module tree): an opened .kfprof
// of another model keeps its own tables on the Profile tab, and the tree says why it shows no times.
QString ModelWorkspace::otherModelNotice() const
{
    const auto& session = m_context.owner->session();
    if (!m_profileResults)
        return {};
    for (const auto* run : {m_profileResults->baseline.run.get(), m_profileResults->plan.run.get()})
        if (run && session && !kforge::sameModuleTree(run->modules, session->modules()))
            return tr("The profile shown is of %1 (%n module(s)), not of the loaded model %2: its times are not shown "
                      "on this tree. Profile this model, or open its own profile.",
                      nullptr, int(run->modules.size()))
                .arg(QString::fromStdString(run->model), QString::fromStdString(session->displayName()));
    return {};
}

void ModelWorkspace::updateModuleTimes()
{
    const QString notice = otherModelNotice();
    m_page->setTimeNotice(notice);
    if (!notice.isEmpty()) {
        m_model->setModuleTimes({}, {});
        m_page->setTimeRuns(false, false);
        return;
    }
    m_page->showRunTimes(m_profileResults);
}

void ModelWorkspace::showVerification(const kforge::VerifyReport& report)
{
    m_model->setModuleAgreement(report.modules, report.divergence ? report.divergence->module : std::string(),
                                bool(report.divergence));
    m_page->setTimeRuns(m_profileResults && m_profileResults->baseline,
                        m_profileResults && m_profileResults->plan); // shows the Error column
}

void ModelWorkspace::showCentral() { m_tabs->setCurrentWidget(m_pages); }

void ModelWorkspace::focusFilter()
{
    showCentral();
    m_page->focusFilter();
}

void ModelWorkspace::chooseInputs()
{
    const auto& session = m_context.owner->session();
    if (!session)
        return;
    // One dialog until the specs apply or the user cancels: a refused spec is explained inside it and what was
    // typed stays there to be corrected.
    QInputDialog dialog(m_context.window);
    dialog.setObjectName(QStringLiteral("inputsDialog"));
    dialog.setWindowTitle(tr("Forward Inputs"));
    const QString prompt =
        tr("One dtype[shape] per argument of forward(%1), separated by ';'\ne.g. float32[1,16]; int64[1,8]")
            .arg(m_inputs->argumentNames().join(QStringLiteral(", ")));
    dialog.setLabelText(prompt);
    dialog.setTextValue(m_inputs->described().join(QStringLiteral("; ")));
    while (dialog.exec() == QDialog::Accepted) {
        QStringList specs;
        for (const QString& part : dialog.textValue().split(QLatin1Char(';'), Qt::SkipEmptyParts))
            specs << part.trimmed();
        QString error;
        if (m_inputs->setSpecs(specs, &error))
            return;
        dialog.setLabelText(tr("%1\n\nNot applied: %2").arg(prompt, error));
    }
}

void ModelWorkspace::chooseInputsFile()
{
    if (!m_context.owner->session())
        return;
    const QString path = QFileDialog::getOpenFileName(m_context.window, tr("Load Inputs"),
                                                      QFileInfo(m_context.owner->source()).absolutePath(),
                                                      tr("torch.save files (*.pt *.pth *.pkl);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !m_inputs->loadFile(path, &error))
        m_context.status->warningDialog(tr("Invalid Inputs"), error);
}

} // namespace kforge::ui
