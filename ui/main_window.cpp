// SPDX-License-Identifier: Apache-2.0
#include "main_window.h"

#include "application/app_icons.h"

#include "views/semantic_text.h"
#include "application/app_settings.h"
#include "controllers/model_loader.h"
#include "models/capture_list_model.h"
#include "models/event_log_model.h"
#include "models/format.h"
#include "models/module_tree_model.h"
#include "models/plan_document.h"
#include "models/plan_model.h"
#include "application/recent_files.h"
#include "controllers/plan_file_controller.h"
#include "application/program_choice.h"
#include "controllers/profile_file_controller.h"
#include "controllers/optimize_controller.h"
#include "controllers/profile_controller.h"
#include "controllers/run_controller.h"
#include "controllers/session_owner.h"
#include "application/system_info.h"
#include "views/about_dialog.h"
#include "views/captures_view.h"
#include "views/inputs_view.h"
#include "views/event_log_view.h"
#include "views/function_stacks_view.h"
#include "views/module_tree_page.h"
#include "views/module_tree_view.h"
#include "views/optimize_view.h"
#include "views/plan_editor_view.h"
#include "views/profile_page.h"
#include "views/settings_dialog.h"

#include <kforge/model_session.h>
#include <kforge/module_info.h>
#include <kforge/plan.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QUndoStack>

#include <exception>
#include <utility>

// Q_INIT_RESOURCE must be used outside any namespace; the explicit call keeps the linker from dropping the
// resources object of this static library.
static void initKForgeResources()
{
    static const bool done = [] {
        Q_INIT_RESOURCE(resources);
        return true;
    }();
    Q_UNUSED(done);
}

namespace kforge::ui {
namespace {

const QString kBuiltinPrefix = QStringLiteral("builtin:");
const QString kModelFileFilter =
    QStringLiteral("Models (*.pt *.pth *.ts *.zip *.pt2);;TorchScript models (*.pt *.pth *.ts *.zip);;"
                   "torch.export packages (*.pt2);;All files (*)");
constexpr int kMessageTimeoutMs = 10'000;

bool isBuiltin(const QString& source) { return source.startsWith(kBuiltinPrefix); }

// Recent files and error messages need one spelling per model, whatever the user typed.
QString normalizedSource(const QString& source)
{
    return isBuiltin(source) ? source : QFileInfo(source).absoluteFilePath();
}

// What a message calls the model: the file name, or the builtin as the user writes it.
QString sourceLabel(const QString& source) { return isBuiltin(source) ? source : QFileInfo(source).fileName(); }

QString droppedFile(const QMimeData* mime)
{
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile())
            return url.toLocalFile();
    }
    return {};
}

QString oneLine(QString text) { return text.replace(QLatin1Char('\n'), QLatin1Char(' ')); }

std::vector<kforge::ProviderCatalogEntry> loadCatalog()
{
    try {
        return kforge::providerCatalog();
    } catch (const std::exception&) {
        return {}; // the menus then say there is no provider; the runtime reports the cause on use
    }
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_owner(new SessionOwner(this)), m_loader(new ModelLoader(this)),
      m_recent(new RecentFiles(this)), m_model(new ModuleTreeModel(this)), m_document(new PlanDocument(this)),
      m_planFiles(new PlanFileController(m_document, this,
                                         [this] {
                                             return m_owner->session()
                                                        ? QString::fromStdString(m_owner->session()->displayName())
                                                        : QString();
                                         })),
      m_run(new RunController(m_owner, this)), m_catalog(loadCatalog()), m_chooseProgram(programDialog(this))
{
    initKForgeResources();
    setObjectName(QStringLiteral("mainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/kforge.svg")));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);

    createViews();
    createActions();
    createStatusBar();
    connectRunController();
    connectProfileController();

    connect(m_loader, &ModelLoader::busyChanged, this, &MainWindow::setBusy);
    connect(m_loader, &ModelLoader::loaded, this,
            [this](const QString& source, std::shared_ptr<kforge::ModelSession> session) {
                m_planEditor->setSession(nullptr);
                m_owner->setSession(source, std::move(session)); // the controllers stop their work first
            });
    connect(m_owner, &SessionOwner::sessionChanged, this, &MainWindow::showSession);
    connect(m_owner, &SessionOwner::activityChanged, this, &MainWindow::updateRunActions);
    connect(m_loader, &ModelLoader::failed, this, &MainWindow::reportFailure);
    // Queued: the menu's own "Clear" action must not be deleted while it is being triggered.
    connect(m_recent, &RecentFiles::changed, this, &MainWindow::rebuildRecentMenu, Qt::QueuedConnection);
    connect(m_document, &PlanDocument::planChanged, this, [this] {
        m_model->setPlan(m_document->plan());
        m_captureModel->setPlan(m_document->plan());
    });
    connect(m_planFiles, &PlanFileController::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message, kMessageTimeoutMs); });
    connect(m_planFiles, &PlanFileController::error, this, &MainWindow::planError);
    connect(m_planFiles, &PlanFileController::unsavedChangesPrompted, this, &MainWindow::unsavedChangesPrompted);
    connect(m_document, &PlanDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_document, &PlanDocument::filePathChanged, this, &MainWindow::updateTitle);
    rebuildRecentMenu();
    updateTitle();
    updateRunActions();
    updateDeviceStatus();
    resize(1280, 800);
}

MainWindow::~MainWindow()
{
    // The children outlive this class's members: nothing they emit while being torn down (the last events
    // of a forward, the undo stack's clean state) may reach this half-destroyed window.
    m_owner->stopWork(); // a paused forward is aborted, a profile or an optimisation cancelled, before the thread goes
    for (QObject* child : children())
        disconnect(child, nullptr, this, nullptr);
}

void MainWindow::createViews()
{
    m_model->setIcons(icon("hooked"), icon("in-scope"), icon("inside"), icon("breakpoint"));
    m_model->setObjectName(QStringLiteral("moduleModel")); // object names: how tools and tests find the parts
    m_page = new ModuleTreePage(m_model, this);
    m_page->setObjectName(QStringLiteral("modulePage"));
    m_page->setCatalog(m_catalog);
    m_placeholder = new QLabel(tr("Open a TorchScript model (Ctrl+O) or drop a file here."), this);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setEnabled(false);
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(m_placeholder);
    m_pages->addWidget(m_page);
    m_profile = new ProfileController(m_owner, this);
    m_optimize = new OptimizeController(m_owner, this);
    m_profilePage = new ProfilePage(m_profile, this);
    m_profileFiles = new ProfileFileController(m_profile, m_profilePage, this);
    connect(m_profileFiles, &ProfileFileController::opened, this,
            [this] { m_centralTabs->setCurrentWidget(m_profilePage); });
    connect(m_profileFiles, &ProfileFileController::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message, kMessageTimeoutMs); });
    connect(m_profileFiles, &ProfileFileController::error, this, &MainWindow::profileError);
    m_centralTabs = new QTabWidget(this);
    m_centralTabs->setObjectName(QStringLiteral("centralTabs"));
    m_centralTabs->setDocumentMode(true);
    m_centralTabs->addTab(m_pages, icon("hooked"), tr("Modules"));
    m_centralTabs->addTab(m_profilePage, icon("profile"), tr("Profile"));
    setCentralWidget(m_centralTabs);

    m_stacksView = new FunctionStacksView(m_run->stacksModel(), this);
    m_planEditor = new PlanEditorView(m_document, this);
    m_planEditor->setCatalog(m_catalog);
    m_eventView = new EventLogView(m_run->eventLog(), this);
    m_captureModel = new CaptureListModel(this);
    m_captureModel->setObjectName(QStringLiteral("captureModel"));
    m_capturesView = new CapturesView(m_captureModel, this);
    m_capturesView->setCaptureAvailable(cudaDeviceVisible(), cudaUnavailableExplanation());

    auto makeDock = [this](const QString& title, const QString& name, QWidget* widget) {
        auto* dock = new QDockWidget(title, this);
        dock->setObjectName(name); // saveState() needs it
        dock->setWidget(widget);
        return dock;
    };
    m_stacksDock = makeDock(tr("Function Stacks"), QStringLiteral("stacksDock"), m_stacksView);
    m_planDock = makeDock(tr("Plan"), QStringLiteral("planDock"), m_planEditor);
    m_eventsDock = makeDock(tr("Event Log"), QStringLiteral("eventsDock"), m_eventView);
    m_capturesDock = makeDock(tr("Graph Captures"), QStringLiteral("capturesDock"), m_capturesView);
    m_inputsView = new InputsView(this);
    m_inputsDock = makeDock(tr("Inputs"), QStringLiteral("inputsDock"), m_inputsView);
    addDockWidget(Qt::RightDockWidgetArea, m_stacksDock);
    addDockWidget(Qt::BottomDockWidgetArea, m_planDock);
    addDockWidget(Qt::BottomDockWidgetArea, m_eventsDock);
    tabifyDockWidget(m_planDock, m_eventsDock);
    tabifyDockWidget(m_planDock, m_capturesDock);
    tabifyDockWidget(m_planDock, m_inputsDock);
    m_planDock->raise();
    resizeDocks({m_stacksDock}, {480}, Qt::Horizontal);
    resizeDocks({m_planDock}, {260}, Qt::Vertical);

    connect(m_page, &ModuleTreePage::addProviderRequested, this, &MainWindow::addPlanEntry);
    connect(m_page, &ModuleTreePage::moduleBreakpointToggled, m_run, &RunController::toggleModuleBreakpoint);
    connect(m_page, &ModuleTreePage::currentPathChanged, m_planEditor, &PlanEditorView::setDefaultScope);
    connect(m_stacksView, &FunctionStacksView::functionBreakpointToggled, m_run,
            &RunController::toggleFunctionBreakpoint);
    connect(m_stacksView, &FunctionStacksView::unwindRequested, this, [this] { m_actions.unwind->trigger(); });
    connect(m_model, &ModuleTreeModel::providerDropped, this, &MainWindow::addPlanEntry);
    connect(m_capturesView, &CapturesView::captureRequested, this, &MainWindow::captureGraph);
    connect(m_capturesView, &CapturesView::unwindRequested, this, [this] { m_actions.unwind->trigger(); });
}

void MainWindow::createActions()
{
    QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
    m_actions.open = fileMenu->addAction(icon("open"), tr("&Open Model…"), this, &MainWindow::chooseFile);
    m_actions.open->setShortcut(QKeySequence::Open);
    m_actions.open->setStatusTip(tr("Open a TorchScript model file"));

    m_actions.openBuiltin = fileMenu->addMenu(tr("Open &Built-in"));
    m_actions.openBuiltin->setObjectName(QStringLiteral("openBuiltinMenu"));
    for (const std::string& name : kforge::ModelSession::builtinModels()) {
        const QString source = QString::fromStdString(name);
        const QString label = isBuiltin(source) ? source.mid(kBuiltinPrefix.size()) : source;
        QAction* action = m_actions.openBuiltin->addAction(label, this, [this, source] { openSource(source); });
        action->setData(source);
    }
    m_actions.openBuiltin->setEnabled(!m_actions.openBuiltin->isEmpty());

    m_actions.openRecent = fileMenu->addMenu(tr("Open &Recent"));
    m_actions.openRecent->setObjectName(QStringLiteral("openRecentMenu"));
    m_actions.setInputs = fileMenu->addAction(tr("Set &Inputs…"), this, &MainWindow::chooseInputs);
    m_actions.setInputs->setStatusTip(tr("The forward's inputs, as dtype[shape] per argument"));
    m_actions.loadInputs = fileMenu->addAction(tr("&Load Inputs…"), this, &MainWindow::chooseInputsFile);
    m_actions.loadInputs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
    m_actions.loadInputs->setStatusTip(tr("Real inputs from a torch.save file (tensor, tuple, list or dict)"));
    m_inputsView->setActions(m_actions.setInputs, m_actions.loadInputs);

    fileMenu->addSeparator();
    m_actions.newPlan = fileMenu->addAction(icon("new-plan"), tr("&New Plan"), this, &MainWindow::newPlan);
    m_actions.newPlan->setShortcut(QKeySequence::New);
    m_actions.openPlan =
        fileMenu->addAction(icon("open"), tr("Open &Plan…"), m_planFiles, &PlanFileController::chooseToOpen);
    m_actions.openPlan->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_P)); // Ctrl+Shift+O is Optimize
    m_actions.savePlan = fileMenu->addAction(icon("save"), tr("&Save Plan"), this, &MainWindow::savePlan);
    m_actions.savePlan->setShortcut(QKeySequence::Save);
    m_actions.savePlanAs = fileMenu->addAction(tr("Save Plan &As…"), m_planFiles, &PlanFileController::chooseToSave);
    m_actions.savePlanAs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    m_actions.exportAitune = fileMenu->addAction(icon("export"), tr("&Export AITune Plan…"), m_planFiles,
                                                 &PlanFileController::chooseToExport);
    m_actions.exportAitune->setStatusTip(tr("Write the plan in AITune's {\"providers\": [...]} form"));

    createProfileFileActions(fileMenu);
    fileMenu->addSeparator();
    m_actions.quit = fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    m_actions.quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    m_actions.quit->setMenuRole(QAction::QuitRole);

    QMenu* editMenu = menuBar()->addMenu(tr("&Edit"));
    m_actions.undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    m_actions.undo->setIcon(icon("undo"));
    m_actions.undo->setShortcut(QKeySequence::Undo);
    m_actions.redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    m_actions.redo->setIcon(icon("redo"));
    m_actions.redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
    editMenu->addAction(m_actions.undo);
    editMenu->addAction(m_actions.redo);
    editMenu->addSeparator();
    m_actions.filter = editMenu->addAction(tr("&Filter"), this, &MainWindow::focusFilter);
    m_actions.filter->setStatusTip(tr("Filter the module tree, or the kernel table on the Profile page"));
    m_actions.filter->setShortcut(QKeySequence::Find);
    editMenu->addSeparator();
    m_actions.preferences =
        editMenu->addAction(icon("preferences"), tr("&Preferences…"), this, &MainWindow::showPreferences);
    m_actions.preferences->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    m_actions.preferences->setMenuRole(QAction::PreferencesRole);

    QMenu* runMenu = menuBar()->addMenu(tr("&Run"));
    m_actions.run = runMenu->addAction(icon("run"), tr("&Run"), this, &MainWindow::runForward);
    m_actions.run->setShortcut(QKeySequence(Qt::Key_F5));
    m_actions.run->setStatusTip(tr("One forward with the plan's enabled entries in effect"));
    m_actions.step = runMenu->addAction(icon("step"), tr("&Step"), this, &MainWindow::stepForward);
    m_actions.step->setShortcut(QKeySequence(Qt::Key_F10));
    m_actions.step->setStatusTip(tr("Pause at the next module entry or function call"));
    m_actions.continueRun = runMenu->addAction(icon("continue"), tr("&Continue"), this, &MainWindow::continueForward);
    m_actions.continueRun->setShortcut(QKeySequence(Qt::Key_F8));
    m_actions.abort = runMenu->addAction(icon("abort"), tr("&Abort"), this, &MainWindow::abortForward);
    m_actions.abort->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
    m_actions.abort->setStatusTip(tr("Make the paused forward throw; the call guard unwinds its patches"));
    runMenu->addSeparator();
    m_actions.keepLeftovers = runMenu->addAction(tr("&Keep Leftovers"));
    m_actions.keepLeftovers->setCheckable(true);
    m_actions.keepLeftovers->setStatusTip(
        tr("Debugging: leave the patches of a failed forward in effect, to see them in the stacks view"));
    connect(m_actions.keepLeftovers, &QAction::toggled, m_run, &RunController::setKeepLeftovers);
    m_actions.keepLeftovers->setChecked(AppSettings::keepLeftovers());
    m_actions.unwind = runMenu->addAction(icon("unwind"), tr("&Unwind Leftovers"), this, [this] {
        const int count = int(m_run->leftovers().size());
        m_run->unwind();
        statusBar()->showMessage(tr("Unwound %n leftover patch(es): the originals are back", nullptr, count),
                                 kMessageTimeoutMs);
    });
    m_actions.clearBreakpoints = runMenu->addAction(tr("Clear &Breakpoints"), m_run, &RunController::clearBreakpoints);
    runMenu->addSeparator();
    m_actions.capture = runMenu->addAction(icon("capture"), tr("Capture CUDA &Graph"), this, &MainWindow::captureGraph);
    m_actions.capture->setStatusTip(tr("Capture one forward with the plan in effect into a CUDA graph"));

    createProfileMenu();

    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    m_actions.expandAll = viewMenu->addAction(icon("expand"), tr("&Expand All"), m_page, &ModuleTreePage::expandAll);
    m_actions.collapseAll =
        viewMenu->addAction(icon("collapse"), tr("&Collapse All"), m_page, &ModuleTreePage::collapseAll);
    viewMenu->addSeparator();
    viewMenu->addAction(m_stacksDock->toggleViewAction());
    viewMenu->addAction(m_planDock->toggleViewAction());
    viewMenu->addAction(m_eventsDock->toggleViewAction());
    viewMenu->addAction(m_capturesDock->toggleViewAction());

    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
    m_actions.about = helpMenu->addAction(tr("&About KForge Studio"), this, &MainWindow::showAbout);
    m_actions.about->setMenuRole(QAction::AboutRole);

    QToolBar* toolBar = addToolBar(tr("Main"));
    toolBar->setObjectName(QStringLiteral("mainToolBar")); // saveState() needs it
    toolBar->addAction(m_actions.open);
    toolBar->addAction(m_actions.savePlan);
    toolBar->addSeparator();
    toolBar->addAction(m_actions.undo);
    toolBar->addAction(m_actions.redo);
    toolBar->addSeparator();
    toolBar->addAction(m_actions.run);
    toolBar->addAction(m_actions.step);
    toolBar->addAction(m_actions.continueRun);
    toolBar->addAction(m_actions.abort);
    toolBar->addAction(m_actions.unwind);
    toolBar->addAction(m_actions.capture);
    addProfileToolBarActions(toolBar);
}

void MainWindow::createStatusBar()
{
    m_busyLabel = new QLabel(this);
    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0); // indeterminate: torch::jit::load reports no progress
    m_busyBar->setMaximumWidth(120);
    m_busyBar->setTextVisible(false);
    m_runLabel = new QLabel(this);
    m_runLabel->setObjectName(QStringLiteral("runStatus"));
    m_leftoverLabel = new QLabel(this);
    m_leftoverLabel->setObjectName(QStringLiteral("leftoverStatus"));
    m_leftoverLabel->setText(tr("no leftovers"));
    m_leftoverLabel->setToolTip(tr("Patches a failed forward or capture left in effect (Run › Unwind restores)"));
    m_runtimeLabel = new QLabel(tr("runtime inactive"), this);
    m_runtimeLabel->setObjectName(QStringLiteral("runtimeStatus"));
    m_runtimeLabel->setToolTip(tr("Whether a plan's runtime is active: its providers are installed in scope"));
    m_deviceLabel = new QLabel(deviceDisplayName(QStringLiteral("cpu")), this);
    m_deviceLabel->setObjectName(QStringLiteral("deviceStatus"));
    m_deviceLabel->setToolTip(tr("Where forwards run"));
    m_modelLabel = new QLabel(tr("No model loaded"), this);
    statusBar()->addWidget(m_busyLabel);
    statusBar()->addWidget(m_busyBar);
    statusBar()->addPermanentWidget(m_runLabel);
    statusBar()->addPermanentWidget(m_leftoverLabel);
    statusBar()->addPermanentWidget(m_runtimeLabel);
    statusBar()->addPermanentWidget(m_deviceLabel);
    statusBar()->addPermanentWidget(m_modelLabel);
    m_busyLabel->hide();
    m_busyBar->hide();
}

void MainWindow::connectRunController()
{
    connect(m_run, &RunController::statisticsChanged, this,
            [this] { m_model->setRunStatistics(m_run->statistics().modules()); });
    connect(m_run, &RunController::breakpointsChanged, this,
            [this] { m_model->setBreakpoints(m_run->moduleBreakpoints()); });
    connect(m_run, &RunController::runningChanged, this, [this](bool running) {
        m_stacksView->setCaption(running ? tr("Live: a forward is running") : tr("After the last forward"));
        m_eventView->setStreamError(m_run->eventStreamError());
        updateRunActions();
        updateRunStatus();
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
        updateRunStatus();
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
    connect(m_run, &RunController::captureFinished, this, &MainWindow::captureDone);
    connect(m_run, &RunController::runFinished, this, [this](bool ok, const QString& message) {
        showDeclines(m_run->declines());
        statusBar()->showMessage(withPlanWarnings(message), kMessageTimeoutMs);
        Q_EMIT runFinished(ok, message);
        if (!ok && m_modalErrors)
            QMessageBox::warning(this, tr("Forward Failed"), message);
    });
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("mainWindow/state")).toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!m_planFiles->keepEdits()) {
        event->ignore();
        return;
    }
    if (m_persistent) {
        QSettings settings;
        settings.setValue(QStringLiteral("mainWindow/geometry"), saveGeometry());
        settings.setValue(QStringLiteral("mainWindow/state"), saveState());
    }
    m_owner->stopWork();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (!droppedFile(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString file = droppedFile(event->mimeData());
    if (file.isEmpty()) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    if (isProfileFile(file))
        openProfile(file);
    else
        openSource(file);
}

void MainWindow::openSource(const QString& source, const QString& program)
{
    const QString normalized = normalizedSource(source);
    const std::optional<QString> chosen = program.isEmpty() ? programToOpen(normalized, m_chooseProgram) : program;
    if (chosen)
        m_loader->load(normalized, *chosen);
}

void MainWindow::chooseFile()
{
    QSettings settings;
    const QString key = QStringLiteral("lastOpenDirectory");
    const QString file = QFileDialog::getOpenFileName(this, tr("Open TorchScript Model"),
                                                      settings.value(key).toString(), kModelFileFilter);
    if (file.isEmpty())
        return;
    if (m_persistent)
        settings.setValue(key, QFileInfo(file).absolutePath());
    openSource(file);
}

void MainWindow::chooseInputs()
{
    if (!m_owner->session())
        return;
    QStringList current;
    for (const std::string& input : m_owner->session()->describeInputs())
        current << QString::fromStdString(input);
    QStringList names;
    for (const std::string& name : m_owner->session()->forwardArgumentNames())
        names << QString::fromStdString(name);
    bool ok = false;
    const QString text = QInputDialog::getText(
        this, tr("Forward Inputs"),
        tr("One dtype[shape] per argument of forward(%1), separated by ';'\ne.g. float32[1,16]; int64[1,8]")
            .arg(names.join(QStringLiteral(", "))),
        QLineEdit::Normal, current.join(QStringLiteral("; ")), &ok);
    if (!ok)
        return;
    QStringList specs;
    for (const QString& part : text.split(QLatin1Char(';'), Qt::SkipEmptyParts))
        specs << part.trimmed();
    QString error;
    if (!setInputSpecs(specs, &error) && m_modalErrors)
        QMessageBox::warning(this, tr("Invalid Inputs"), error);
}

bool MainWindow::setInputSpecs(const QStringList& specs, QString* error)
{
    if (const QString busy = inputsRefusal(); !busy.isEmpty()) {
        if (error)
            *error = busy;
        return false;
    }
    std::vector<std::string> values;
    for (const QString& spec : specs)
        values.push_back(spec.toStdString());
    try {
        m_owner->session()->setInputSpecs(values);
    } catch (const std::exception& e) {
        if (error)
            *error = oneLine(QString::fromUtf8(e.what()));
        statusBar()->showMessage(oneLine(QString::fromUtf8(e.what())), kMessageTimeoutMs);
        return false;
    }
    statusBar()->showMessage(tr("Inputs: %1").arg(specs.join(QStringLiteral(", "))), kMessageTimeoutMs);
    inputsChanged(tr("Random tensors from the specs %1").arg(specs.join(QStringLiteral("; "))),
                  QStringLiteral("specs:") + specs.join(QLatin1Char(';')));
    return true;
}

bool MainWindow::loadInputsFile(const QString& path, QString* error)
{
    if (const QString busy = inputsRefusal(); !busy.isEmpty()) {
        if (error)
            *error = busy;
        return false;
    }
    const QString absolute = QFileInfo(path).absoluteFilePath();
    try {
        m_owner->session()->loadInputsFile(absolute.toStdString());
    } catch (const std::exception& e) {
        const QString message = oneLine(QString::fromUtf8(e.what()));
        if (error)
            *error = message;
        statusBar()->showMessage(message, kMessageTimeoutMs);
        return false;
    }
    QStringList described;
    for (const std::string& input : m_owner->session()->describeInputs())
        described << QString::fromStdString(input);
    statusBar()->showMessage(
        tr("Inputs from %1: %2").arg(QFileInfo(absolute).fileName(), described.join(QStringLiteral(", "))),
        kMessageTimeoutMs);
    inputsChanged(tr("From the file %1").arg(QDir::toNativeSeparators(absolute)), QStringLiteral("file:") + absolute);
    return true;
}

void MainWindow::chooseInputsFile()
{
    if (!m_owner->session())
        return;
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Load Inputs"), QFileInfo(m_owner->source()).absolutePath(),
                                     tr("torch.save files (*.pt *.pth *.pkl);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !loadInputsFile(path, &error) && m_modalErrors)
        QMessageBox::warning(this, tr("Invalid Inputs"), error);
}

// Inputs change only while nothing uses the session.
QString MainWindow::inputsRefusal() const
{
    if (!m_owner->session())
        return tr("No model is loaded.");
    return m_owner->isBusy() ? m_owner->refusal(SessionOwner::Activity::Forward) : QString();
}

// After the session's inputs changed: the panel shows them, and the recent-files list remembers them for the model.
void MainWindow::inputsChanged(const QString& source, const QString& remembered)
{
    QStringList arguments, described;
    if (m_owner->session()) {
        for (const std::string& name : m_owner->session()->forwardArgumentNames())
            arguments << QString::fromStdString(name);
        for (const std::string& input : m_owner->session()->describeInputs())
            described << QString::fromStdString(input);
    }
    m_inputsView->setInputs(arguments, described, source);
    if (m_persistent && !remembered.isEmpty() && !m_owner->source().isEmpty())
        m_recent->setInputsFor(m_owner->source(), remembered);
}

// The inputs last given to this model, if any: a file or specs; what cannot be applied any more is a warning.
void MainWindow::restoreRememberedInputs(QStringList& warnings)
{
    const QString remembered = m_persistent ? m_recent->inputsFor(m_owner->source()) : QString();
    QString error;
    bool ok = true;
    if (remembered.startsWith(QLatin1String("file:")))
        ok = loadInputsFile(remembered.mid(5), &error);
    else if (remembered.startsWith(QLatin1String("specs:")))
        ok = setInputSpecs(remembered.mid(6).split(QLatin1Char(';'), Qt::SkipEmptyParts), &error);
    if (!ok)
        warnings << tr("the inputs used last time could not be applied (%1)").arg(error);
}

void MainWindow::rebuildRecentMenu()
{
    QMenu* menu = m_actions.openRecent;
    menu->clear();
    const QStringList entries = m_recent->entries();
    for (int i = 0; i < entries.size(); ++i) {
        const QString source = entries[i];
        QString label = QDir::toNativeSeparators(source).replace(QLatin1Char('&'), QStringLiteral("&&"));
        if (i < 9)
            label = QStringLiteral("&%1  %2").arg(i + 1).arg(label);
        QAction* action = menu->addAction(label, this, [this, source] { openSource(source); });
        action->setData(source);
    }
    menu->addSeparator();
    m_actions.clearRecent = menu->addAction(tr("&Clear Recent Files"), m_recent, &RecentFiles::clear);
    menu->setEnabled(!entries.isEmpty());
}

void MainWindow::setBusy(bool busy)
{
    if (busy) {
        m_busyLabel->setText(tr("Loading %1…").arg(sourceLabel(m_loader->pendingSource())));
        statusBar()->clearMessage();
    }
    m_busyLabel->setVisible(busy);
    m_busyBar->setVisible(busy);
    Q_EMIT loadingChanged(busy);
}

void MainWindow::showSession()
{
    const QString source = m_owner->source();
    m_declinesRevision.reset();
    m_document->model()->clearDeclines(); // they were the previous model's
    const QString name = QString::fromStdString(m_owner->session()->displayName());
    m_model->setModules(m_owner->session()->modules(), name);
    m_model->setPausedPath({}, false);
    m_page->view()->expandAndFit();
    m_pages->setCurrentWidget(m_page);
    const QString device = QString::fromStdString(m_owner->session()->device());
    m_planEditor->setSession(m_owner->session().get(), device);
    m_captureModel->setCaptures(m_owner->session()->captures());
    updateTitle();
    updateModelStatus();
    updateRunActions();
    updateDeviceStatus();
    if (m_persistent)
        m_recent->add(source);

    QStringList warnings;
    for (const std::string& warning : m_owner->session()->warnings())
        warnings << QString::fromStdString(warning);
    inputsChanged(m_owner->session()->hasInputs() ? tr("The model's example inputs") : QString(), {});
    restoreRememberedInputs(warnings);
    if (!m_owner->session()->hasInputs())
        warnings << tr("no example inputs: set them with File › Set Inputs before running");
    if (!warnings.isEmpty())
        statusBar()->showMessage(warnings.join(QStringLiteral("; ")));
    Q_EMIT modelLoaded(source);
}

void MainWindow::reportFailure(const QString& source, const QString& error)
{
    QString message = oneLine(error);
    const QString label = sourceLabel(source);
    if (!message.contains(label))
        message = QStringLiteral("%1: %2").arg(label, message);

    const bool wasRecent = m_persistent && m_recent->contains(source);
    if (wasRecent)
        m_recent->remove(source);
    statusBar()->showMessage(tr("Could not open %1").arg(label), kMessageTimeoutMs);
    Q_EMIT loadFailed(message);

    if (m_modalErrors) {
        QMessageBox box(QMessageBox::Critical, tr("Cannot Open Model"), message, QMessageBox::Ok, this);
        if (wasRecent)
            box.setInformativeText(tr("It has been removed from the recent files."));
        box.exec();
    }
}

void MainWindow::updateModelStatus()
{
    const std::vector<kforge::ModuleInfo>& modules = m_owner->session()->modules();
    const std::int64_t parameters = modules.empty() ? 0 : modules.front().subtreeParameterCount;
    const std::int64_t bytes = modules.empty() ? 0 : modules.front().subtreeParameterBytes;
    m_modelLabel->setText(tr("%1 · %2 modules · %3 parameters")
                              .arg(QString::fromStdString(m_owner->session()->displayName()))
                              .arg(modules.size())
                              .arg(formatCompactCount(parameters)));
    m_modelLabel->setToolTip(
        tr("%1\n%2 parameters, %3")
            .arg(QDir::toNativeSeparators(m_owner->source()), formatCount(parameters), formatBytes(bytes)));
}

void MainWindow::updateTitle()
{
    const QString path = m_document->filePath();
    const QString plan = path.isEmpty() ? tr("Untitled plan") : QDir::toNativeSeparators(path);
    QStringList parts{plan + QStringLiteral("[*]")};
    if (m_owner->session())
        parts << QString::fromStdString(m_owner->session()->displayName());
    parts << tr("KForge Studio");
    setWindowTitle(parts.join(QStringLiteral(" — ")));
    setWindowModified(m_document->isModified());
}

void MainWindow::updateRunActions()
{
    const bool running = m_run->isRunning();
    const bool paused = m_run->isPaused();
    const bool canStart = m_owner->canStart(SessionOwner::Activity::Forward);
    m_actions.run->setEnabled(canStart);
    m_actions.step->setEnabled(canStart || paused);
    m_actions.continueRun->setEnabled(paused);
    m_actions.abort->setEnabled(paused);
    m_actions.unwind->setEnabled(!running && !m_run->leftovers().empty());
    m_actions.setInputs->setEnabled(canStart);
    m_actions.loadInputs->setEnabled(canStart);
    updateProfileActions();
    m_actions.capture->setEnabled(canStart && cudaDeviceVisible());
    QString busy;
    if (!m_owner->session())
        busy = tr("Open a model to capture its forward.");
    else if (!canStart)
        busy = tr("Waiting: %1").arg(m_owner->refusal(SessionOwner::Activity::Capture));
    m_capturesView->setBusy(!busy.isEmpty(), busy);
}

void MainWindow::updateRunStatus() { m_runLabel->setText(m_run->statusText()); }

QString MainWindow::runStatusText() const { return m_runLabel->text(); }

void MainWindow::notePlanWarnings(const kforge::Plan& plan, const QString& device)
{
    QStringList lines;
    if (m_owner->session()) {
        try {
            for (const kforge::PlanWarning& w : kforge::planWarnings(plan, *m_owner->session(), device.toStdString()))
                lines << QString::fromStdString(w.text());
        } catch (const std::exception&) {
            // An unknown device: validation in the plan editor says so; nothing to warn about here.
        }
    }
    m_planWarnings = lines;
    if (!lines.isEmpty())
        statusBar()->showMessage(withPlanWarnings(QString()), kMessageTimeoutMs);
    Q_EMIT planWarningsChanged(lines);
}

void MainWindow::clearPlanWarnings()
{
    m_planWarnings.clear();
    Q_EMIT planWarningsChanged({});
}

void MainWindow::planRunStarted()
{
    m_declinesRevision = m_document->model()->revision();
    m_document->model()->clearDeclines();
}

void MainWindow::showDeclines(const std::vector<kforge::EntryDeclines>& declines)
{
    const std::optional<std::uint64_t> revision = std::exchange(m_declinesRevision, std::nullopt);
    // Edited since the run started: the counts would land on other entries, or on entries that did not run.
    if (revision && *revision == m_document->model()->revision())
        m_document->model()->setDeclines(declines);
}

QString MainWindow::withPlanWarnings(const QString& message) const
{
    if (m_planWarnings.isEmpty())
        return message;
    QString warning = tr("Warning: %1").arg(m_planWarnings.first());
    if (m_planWarnings.size() > 1)
        warning += tr(" (and %n more; see the plan's Problems column)", nullptr, int(m_planWarnings.size() - 1));
    return message.isEmpty() ? warning : message + QStringLiteral(" — ") + warning;
}

bool MainWindow::runForward()
{
    QString error;
    if (m_owner->session() && !m_run->isRunning())
        notePlanWarnings(m_document->plan(), QString::fromStdString(m_owner->session()->device()));
    if (!m_run->run(m_document->plan(), &error)) {
        const QString message = tr("Cannot run: %1").arg(error);
        statusBar()->showMessage(message, kMessageTimeoutMs);
        Q_EMIT runFinished(false, message);
        if (m_modalErrors)
            QMessageBox::warning(this, tr("Cannot Run"), error);
        return false;
    }
    planRunStarted();
    return true;
}

bool MainWindow::stepForward()
{
    QString error;
    const bool fromIdle = !m_run->isRunning();
    if (m_owner->session() && fromIdle) // from idle: a forward starts (paused, it goes on with its plan)
        notePlanWarnings(m_document->plan(), QString::fromStdString(m_owner->session()->device()));
    if (!m_run->step(m_document->plan(), &error)) {
        const QString message = tr("Cannot step: %1").arg(error);
        statusBar()->showMessage(message, kMessageTimeoutMs);
        Q_EMIT runFinished(false, message);
        if (m_modalErrors)
            QMessageBox::warning(this, tr("Cannot Step"), error);
        return false;
    }
    if (fromIdle)
        planRunStarted();
    updateRunActions();
    return true;
}

void MainWindow::continueForward() { m_run->continueRun(); }

void MainWindow::abortForward() { m_run->abort(); }

// ---- Plan files (PlanFileController) ---------------------------------------------------------------------------

bool MainWindow::newPlan() { return m_planFiles->newPlan(); }
bool MainWindow::openPlan(const QString& path) { return m_planFiles->open(path); }
bool MainWindow::savePlan() { return m_planFiles->save(); }
bool MainWindow::savePlanAs(const QString& path) { return m_planFiles->saveAs(path); }
bool MainWindow::exportAitunePlan(const QString& path) { return m_planFiles->exportAitune(path); }

void MainWindow::addPlanEntry(const QString& scope, const QString& function, const QString& providerType)
{
    kforge::PlanEntry entry;
    entry.scope = scope.toStdString();
    entry.function = function.toStdString();
    entry.provider = nlohmann::json{{"type", providerType.toStdString()}};
    m_document->addEntry(entry);
    m_planDock->show();
    m_planDock->raise();
    m_planEditor->selectRow(int(m_document->plan().entries.size()) - 1);
    statusBar()->showMessage(
        tr("Plan: %1 runs %2 in %3").arg(function, providerType, scope.isEmpty() ? tr("the root") : scope),
        kMessageTimeoutMs);
}

// ---- Views by name (screenshots, tests) --------------------------------------------------------------------------

QStringList MainWindow::viewNames()
{
    return QStringList{QStringLiteral("tree"),   QStringLiteral("tree-time"), QStringLiteral("stacks"),
                       QStringLiteral("plan"),   QStringLiteral("events"),    QStringLiteral("captures"),
                       QStringLiteral("inputs"), QStringLiteral("optimize")} +
           profileViewNames();
}

QWidget* MainWindow::viewNamed(const QString& name) const
{
    if (name == QLatin1String("tree"))
        return m_page;
    if (name == QLatin1String("stacks"))
        return m_stacksView;
    if (name == QLatin1String("plan"))
        return m_planEditor;
    if (name == QLatin1String("events"))
        return m_eventView;
    if (name == QLatin1String("captures"))
        return m_capturesView;
    if (name == QLatin1String("inputs"))
        return m_inputsView;
    if (name == QLatin1String("optimize"))
        return m_optimizeView;
    return profileViewNamed(name);
}

QDockWidget* MainWindow::dockNamed(const QString& name) const
{
    if (name == QLatin1String("stacks"))
        return m_stacksDock;
    if (name == QLatin1String("plan"))
        return m_planDock;
    if (name == QLatin1String("events"))
        return m_eventsDock;
    if (name == QLatin1String("captures"))
        return m_capturesDock;
    if (name == QLatin1String("inputs"))
        return m_inputsDock;
    if (name == QLatin1String("optimize"))
        return m_optimizeDock;
    return nullptr;
}

void MainWindow::showAbout()
{
    AboutDialog dialog(this);
    dialog.exec();
}

void MainWindow::showPreferences()
{
    SettingsDialog dialog(this);
    connect(&dialog, &SettingsDialog::pluginsChanged, this, &MainWindow::reloadCatalog);
    dialog.exec();
}

void MainWindow::reloadCatalog()
{
    m_catalog = loadCatalog();
    m_page->setCatalog(m_catalog);
    m_planEditor->setCatalog(m_catalog);
    m_planEditor->validate(); // entries naming the new types may be valid now
}

// ---- Graph captures --------------------------------------------------------------------------------------------

bool MainWindow::captureGraph()
{
    QString error;
    if (!cudaDeviceVisible()) {
        error = cudaUnavailableExplanation();
    } else {
        notePlanWarnings(m_document->plan(), QStringLiteral("cuda"));
        if (m_run->capture(m_document->plan(), AppSettings::captureWarmupIterations(), &error)) {
            planRunStarted();
            m_capturesDock->show();
            m_capturesDock->raise();
            statusBar()->showMessage(withPlanWarnings(tr("Capturing a CUDA graph of one forward…")));
            return true;
        }
    }
    const QString message = tr("Cannot capture: %1").arg(error);
    statusBar()->showMessage(message, kMessageTimeoutMs);
    Q_EMIT captureFinished(false, message);
    if (m_modalErrors)
        QMessageBox::warning(this, tr("Cannot Capture"), error);
    return false;
}

void MainWindow::captureDone(bool ok, const QString& message)
{
    if (m_owner->session()) {
        // A capture moves the model to the CUDA device: validation follows it (the status bar too, through
        // updateDeviceStatus).
        m_planEditor->setSession(m_owner->session().get(), QString::fromStdString(m_owner->session()->device()));
        m_captureModel->setCaptures(m_owner->session()->captures());
    }
    m_captureModel->setLiveLeftovers(m_run->leftovers());
    showDeclines(m_run->declines());
    statusBar()->showMessage(withPlanWarnings(message), kMessageTimeoutMs);
    Q_EMIT captureFinished(ok, message);
    if (!ok && m_modalErrors)
        QMessageBox::warning(this, tr("Graph Capture Failed"), message);
}

bool MainWindow::isLoading() const { return m_loader->isBusy(); }

const kforge::ModelSession* MainWindow::session() const { return m_owner->session().get(); }

QString MainWindow::source() const { return m_owner->source(); }

ModuleTreeView* MainWindow::moduleView() const { return m_page->view(); }

PlanDocument* MainWindow::planDocument() const { return m_document; }

RunController* MainWindow::runController() const { return m_run; }

RecentFiles* MainWindow::recentFiles() const { return m_recent; }

const MainWindow::Actions& MainWindow::actions() const { return m_actions; }

bool MainWindow::modalErrors() const { return m_modalErrors; }

void MainWindow::setModalErrors(bool modal)
{
    m_modalErrors = modal;
    m_planFiles->setModalErrors(modal);
    m_profileFiles->setModalErrors(modal);
}

bool MainWindow::isPersistent() const { return m_persistent; }

void MainWindow::setPersistent(bool persistent)
{
    m_persistent = persistent;
    m_profilePage->setPersistent(persistent);
    m_planFiles->setPersistent(persistent);
    m_profileFiles->setPersistent(persistent);
}

MainWindow::UnsavedChanges MainWindow::unsavedChanges() const { return m_planFiles->unsavedChanges(); }

void MainWindow::setUnsavedChanges(UnsavedChanges choice) { m_planFiles->setUnsavedChanges(choice); }

} // namespace kforge::ui
