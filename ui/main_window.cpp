// SPDX-License-Identifier: Apache-2.0
// The window is a shell: the workspaces (plan, model, profile, optimize) and the model opening own their views,
// actions and menus; the window holds what they share (the session owner, the plan document, the status bar, the
// views by name), arranges the menus, and routes dropped files.
#include "main_window.h"

#include "application/app_icons.h"
#include "application/recent_files.h"
#include "application/status_reporter.h"
#include "controllers/inputs_controller.h"
#include "controllers/plan_run_notes.h"
#include "controllers/profile_controller.h"
#include "controllers/plan_file_controller.h"
#include "controllers/profile_file_controller.h"
#include "controllers/profile_results_source.h"
#include "controllers/session_owner.h"
#include "item_models/format.h"
#include "item_models/module_scope.h"
#include "item_models/plan_document.h"
#include "views/about_dialog.h"
#include "views/module_tree_page.h"
#include "views/module_tree_view.h"
#include "views/optimize_view.h"
#include "views/profile_page.h"
#include "views/settings_dialog.h"
#include "workspaces/model_opening.h"
#include "workspaces/model_workspace.h"
#include "views/start_page.h"
#include "workspaces/optimize_workspace.h"
#include "workspaces/plan_workspace.h"
#include "workspaces/profile_workspace.h"

#include <kforge/model_session.h>
#include <kforge/module_info.h>
#include <kforge/plan.h>

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QFileInfo>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

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

DroppedFiles droppedFiles(const QMimeData* mime)
{
    return mime && mime->hasUrls() ? sortDroppedFiles(mime->urls()) : DroppedFiles{};
}

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
    : QMainWindow(parent), m_owner(new SessionOwner(this)), m_recent(new RecentFiles(this)),
      m_document(new PlanDocument(this)), m_status(new StatusReporter(this)),
      m_notes(new PlanRunNotes(m_owner, m_document, this)), m_scope(new ModuleScope(this)), m_catalog(loadCatalog())
{
    initKForgeResources();
    setObjectName(QStringLiteral("mainWindow"));
    m_document->setObjectName(QStringLiteral("planDocument"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/kforge.svg")));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);

    createWorkspaces();
    createMenus();
    createStatusBar();
    connectParts();
    updateTitle();
    resize(1280, 800);
}

MainWindow::~MainWindow()
{
    m_owner->stopWork(); // a paused forward is aborted, a profile or an optimisation cancelled, before the thread goes
    // The children outlive this class's members: nothing they emit while being torn down (the last events
    // of a forward, the undo stack's clean state) may reach this half-destroyed window.
    for (QObject* child : children())
        disconnect(child, nullptr, this, nullptr);
}

void MainWindow::createWorkspaces()
{
    m_centralTabs = new QTabWidget(this);
    m_centralTabs->setObjectName(QStringLiteral("centralTabs"));
    m_centralTabs->setDocumentMode(true);
    setCentralWidget(m_centralTabs);
    WorkspaceContext context{this, m_owner, m_document, m_notes, m_status, &m_views, &m_actions, m_scope};
    m_planSpace = new PlanWorkspace(context); // first: the plan dock is the one the others tab with
    m_planSpace->setCatalog(m_catalog);
    m_opening = new ModelOpening(context, m_recent);
    m_modelSpace = new ModelWorkspace(context, m_recent, m_centralTabs);
    m_modelSpace->setCatalog(m_catalog);
    m_profileSpace = new ProfileWorkspace(context, m_centralTabs);
    m_optimizeSpace = new OptimizeWorkspace(context, m_profileSpace->controller());
    context.bottomDock->raise();
    resizeDocks({context.bottomDock}, {260}, Qt::Vertical);
}

void MainWindow::createMenus()
{
    Actions& a = m_actions;
    QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
    m_opening->addFileActions(fileMenu);
    m_modelSpace->addFileActions(fileMenu);

    fileMenu->addSeparator();
    m_planSpace->addFileActions(fileMenu);
    fileMenu->addSeparator();
    m_profileSpace->addFileActions(fileMenu);
    fileMenu->addSeparator();
    a.quit = fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    a.quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    a.quit->setMenuRole(QAction::QuitRole);

    QMenu* editMenu = menuBar()->addMenu(tr("&Edit"));
    m_planSpace->addEditActions(editMenu);
    editMenu->addSeparator();
    a.filter = editMenu->addAction(tr("&Filter"), this, &MainWindow::focusFilter);
    a.filter->setStatusTip(tr("Filter the module tree, or the kernel table on the Profile page"));
    a.filter->setShortcut(QKeySequence::Find);
    editMenu->addSeparator();
    a.preferences = editMenu->addAction(icon("preferences"), tr("&Preferences…"), this, &MainWindow::showPreferences);
    a.preferences->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    a.preferences->setMenuRole(QAction::PreferencesRole);

    m_modelSpace->addRunMenu(menuBar());
    m_optimizeSpace->addProfileMenuActions(m_profileSpace->addProfileMenu(menuBar()));

    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    m_modelSpace->addViewActions(viewMenu);
    viewMenu->addAction(dockNamed(QStringLiteral("plan"))->toggleViewAction());

    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
    a.about = helpMenu->addAction(tr("&About KForge Studio"), this, &MainWindow::showAbout);
    a.about->setMenuRole(QAction::AboutRole);

    QToolBar* toolBar = addToolBar(tr("Main"));
    toolBar->setObjectName(QStringLiteral("mainToolBar")); // saveState() needs it
    toolBar->addAction(a.open);
    m_planSpace->addToolBarActions(toolBar);
    toolBar->addSeparator();
    m_planSpace->addUndoToolBarActions(toolBar);
    toolBar->addSeparator();
    m_modelSpace->addToolBarActions(toolBar);
    toolBar->addSeparator();
    m_profileSpace->addToolBarActions(toolBar);
}

void MainWindow::createStatusBar()
{
    m_opening->addStatusWidgets(statusBar());
    m_modelSpace->addStatusWidgets(statusBar());
    m_profileSpace->addStatusWidgets(statusBar());
    m_modelLabel = new QLabel(tr("No model loaded"), this);
    statusBar()->addPermanentWidget(m_modelLabel);
}

void MainWindow::connectParts()
{
    connect(m_opening, &ModelOpening::loadingChanged, this, &MainWindow::loadingChanged);
    connect(m_opening, &ModelOpening::loadFailed, this, &MainWindow::loadFailed);
    connect(m_opening, &ModelOpening::documentRequested, this, &MainWindow::openDocument);
    StartPage* start = m_modelSpace->startPage();
    connect(start, &StartPage::openFileRequested, m_opening, &ModelOpening::chooseFile);
    connect(start, &StartPage::modelRequested, this, [this](const QString& source) { openSource(source); });
    connect(start, &StartPage::documentRequested, this, &MainWindow::openDocument);
    connect(m_planSpace->files(), &PlanFileController::fileUsed, this, &MainWindow::rememberDocument);
    connect(m_profileSpace->files(), &ProfileFileController::fileUsed, this, &MainWindow::rememberDocument);
    connect(m_opening, &ModelOpening::loaded, this,
            [this](const QString& source, std::shared_ptr<kforge::ModelSession> session) {
                m_planSpace->setSession(nullptr);
                m_owner->setSession(source, std::move(session)); // the controllers stop their work first
            });
    connect(m_owner, &SessionOwner::sessionChanged, this, &MainWindow::showSession);
    connect(m_planSpace->files(), &PlanFileController::error, this, &MainWindow::planError);
    connect(m_planSpace->files(), &PlanFileController::unsavedChangesPrompted, this,
            &MainWindow::unsavedChangesPrompted);
    connect(m_profileSpace->files(), &ProfileFileController::unsavedResultsPrompted, this,
            &MainWindow::unsavedResultsPrompted);
    // Opening another model replaces the results on screen: ask first when nobody saved them.
    m_opening->setMayReplace([this] { return m_profileSpace->files()->keepResults(); });
    connect(m_document, &PlanDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_document, &PlanDocument::filePathChanged, this, &MainWindow::updateTitle);
    connect(m_notes, &PlanRunNotes::warningsChanged, this, [this](const QStringList& warnings) {
        if (!warnings.isEmpty())
            m_status->show(m_notes->withWarnings(QString()));
        Q_EMIT planWarningsChanged(warnings);
    });

    connect(m_modelSpace, &ModelWorkspace::runFinished, this, &MainWindow::runFinished);
    connect(m_modelSpace, &ModelWorkspace::captureFinished, this, &MainWindow::captureFinished);
    connect(m_modelSpace, &ModelWorkspace::addProviderRequested, m_planSpace, &PlanWorkspace::addEntry);
    connect(m_modelSpace, &ModelWorkspace::sessionDeviceChanged, this, &MainWindow::sessionDeviceChanged);
    connect(m_profileSpace, &ProfileWorkspace::sessionDeviceChanged, this, &MainWindow::sessionDeviceChanged);
    connect(m_profileSpace, &ProfileWorkspace::finished, this, &MainWindow::profileFinished);
    connect(m_profileSpace, &ProfileWorkspace::error, this, &MainWindow::profileError);
    connect(m_profileSpace, &ProfileWorkspace::planVerified, m_modelSpace, &ModelWorkspace::showVerification);
    connect(m_profileSpace, &ProfileWorkspace::divergenceFound, m_modelSpace->page(), &ModuleTreePage::revealPath);
    connect(m_profileSpace->controller()->source(), &ProfileResultsSource::resultsChanged, m_modelSpace,
            &ModelWorkspace::setProfileResults);
    connect(m_optimizeSpace, &OptimizeWorkspace::finished, this, &MainWindow::optimizeFinished);
    connect(m_optimizeSpace, &OptimizeWorkspace::error, this, &MainWindow::profileError);
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("mainWindow/state")).toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!m_planSpace->files()->keepEdits() || !m_profileSpace->files()->keepResults()) {
        event->ignore();
        return;
    }
    if (isPersistent()) {
        QSettings settings;
        settings.setValue(QStringLiteral("mainWindow/geometry"), saveGeometry());
        settings.setValue(QStringLiteral("mainWindow/state"), saveState());
    }
    m_owner->stopWork();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    // Any local file is taken: one that cannot be opened is refused at the drop, with a line saying why.
    const DroppedFiles dropped = droppedFiles(event->mimeData());
    if (!dropped.model.isEmpty() || !dropped.profiles.isEmpty() || !dropped.refusal.isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const DroppedFiles dropped = droppedFiles(event->mimeData());
    if (!dropped.refusal.isEmpty()) {
        event->ignore();
        m_status->show(dropped.refusal);
        m_status->warningDialog(tr("Cannot Open"), dropped.refusal);
        return;
    }
    if (dropped.model.isEmpty() && dropped.profiles.isEmpty()) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    if (!dropped.profiles.isEmpty())
        m_profileSpace->openDropped(dropped.profiles, mapToGlobal(event->position().toPoint()));
    else
        openSource(dropped.model);
}

void MainWindow::openSource(const QString& source, const std::optional<ProgramChoice>& choice)
{
    m_opening->openSource(source, choice);
}

void MainWindow::showSession()
{
    const kforge::ModelSession& session = *m_owner->session();
    const QString source = m_owner->source();
    m_notes->sessionChanged();
    m_planSpace->setSession(&session);
    m_opening->remember(source);
    QStringList warnings;
    for (const std::string& warning : session.warnings())
        warnings << QString::fromStdString(warning);
    m_modelSpace->showSession(warnings);
    updateTitle();
    updateModelStatus();
    if (!warnings.isEmpty())
        m_status->show(warnings.join(QStringLiteral("; ")), 0);
    Q_EMIT modelLoaded(source);
}

void MainWindow::sessionDeviceChanged()
{
    if (const auto& session = m_owner->session())
        m_planSpace->setSession(session.get());
    m_profileSpace->updateDeviceStatus();
}

void MainWindow::updateModelStatus()
{
    const kforge::ModelSession& session = *m_owner->session();
    const std::vector<kforge::ModuleInfo>& modules = session.modules();
    const std::int64_t parameters = modules.empty() ? 0 : modules.front().subtreeParameterCount;
    const std::int64_t bytes = modules.empty() ? 0 : modules.front().subtreeParameterBytes;
    m_modelLabel->setText(tr("%1 · %2 modules · %3 parameters")
                              .arg(QString::fromStdString(session.displayName()))
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
    if (const auto& session = m_owner->session())
        parts << QString::fromStdString(session->displayName());
    parts << tr("KForge Studio");
    setWindowTitle(parts.join(QStringLiteral(" — ")));
    setWindowModified(m_document->isModified());
}

void MainWindow::addPlanEntry(const QString& scope, const QString& function, const QString& providerType)
{
    m_planSpace->addEntry(scope, function, providerType);
}

void MainWindow::focusFilter()
{
    if (m_profileSpace->isShown())
        m_profileSpace->focusFilter();
    else
        m_modelSpace->focusFilter();
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
    m_modelSpace->setCatalog(m_catalog);
    m_planSpace->setCatalog(m_catalog);
}

// ---- Views by name (screenshots, tests) --------------------------------------------------------------------------

QStringList MainWindow::viewNames()
{
    return ModelWorkspace::viewNames() + QStringList{QStringLiteral("plan"), QStringLiteral("optimize")} +
           ProfileWorkspace::viewNames();
}

QWidget* MainWindow::viewNamed(const QString& name) const { return m_views.view(name); }
QDockWidget* MainWindow::dockNamed(const QString& name) const { return m_views.dock(name); }
bool MainWindow::showView(const QString& name) { return m_views.show(name); }

// ---- The window's face to tests and the batch driver: each part does the work -------------------------------------

bool MainWindow::isLoading() const { return m_opening->isLoading(); }
void MainWindow::setProgramChooser(ProgramChooser chooser) { m_opening->setProgramChooser(std::move(chooser)); }
void MainWindow::setDropChooser(DropChooser chooser) { m_profileSpace->setDropChooser(std::move(chooser)); }
const kforge::ModelSession* MainWindow::session() const { return m_owner->session().get(); }
QString MainWindow::source() const { return m_owner->source(); }
bool MainWindow::setInputSpecs(const QStringList& specs, QString* error)
{
    return m_modelSpace->inputs()->setSpecs(specs, error);
}
bool MainWindow::loadInputsFile(const QString& path, QString* error)
{
    return m_modelSpace->inputs()->loadFile(path, error);
}
const MainWindow::Actions& MainWindow::actions() const { return m_actions; }
QString MainWindow::runStatusText() const { return m_modelSpace->runStatusText(); }
QStringList MainWindow::planWarnings() const { return m_notes->warnings(); }

bool MainWindow::newPlan() { return m_planSpace->files()->newPlan(); }
bool MainWindow::openPlan(const QString& path) { return m_planSpace->files()->open(path); }
bool MainWindow::savePlanAs(const QString& path) { return m_planSpace->files()->saveAs(path); }
bool MainWindow::exportAitunePlan(const QString& path) { return m_planSpace->files()->exportAitune(path); }

bool MainWindow::runForward() { return m_modelSpace->runForward(); }
bool MainWindow::stepForward() { return m_modelSpace->stepForward(); }
void MainWindow::continueForward() { m_modelSpace->continueForward(); }
bool MainWindow::captureGraph() { return m_modelSpace->captureGraph(); }

bool MainWindow::profileBaseline() { return m_profileSpace->profileBaseline(); }
bool MainWindow::profileWithPlan() { return m_profileSpace->profileWithPlan(); }
bool MainWindow::profileCompare() { return m_profileSpace->profileCompare(); }
bool MainWindow::optimize() { return m_optimizeSpace->optimize(); }
void MainWindow::cancelOptimize() { m_optimizeSpace->cancelOptimize(); }

bool MainWindow::isProfileFile(const QString& path) { return ProfileWorkspace::isProfileFile(path); }

void MainWindow::rememberDocument(const QString& path)
{
    if (isPersistent()) // screenshot and test windows leave the user's list alone
        m_recent->addDocument(path);
}

bool MainWindow::openDocument(const QString& path)
{
    if (!QFileInfo::exists(path)) {
        m_recent->removeDocument(path);
        m_status->show(tr("%1 no longer exists: removed from the recent files").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    return isProfileFile(path) ? openProfile(path) : openPlan(path);
}
bool MainWindow::openProfile(const QString& path) { return m_profileSpace->files()->open(path); }
bool MainWindow::saveProfile(const QString& path) { return m_profileSpace->files()->save(path); }
bool MainWindow::exportChromeTrace(const QString& path) { return m_profileSpace->files()->exportChromeTrace(path); }
bool MainWindow::exportCsv(const QString& path) { return m_profileSpace->files()->exportCsv(path); }
bool MainWindow::exportChartPng(const QString& path) { return m_profileSpace->files()->exportChartPng(path); }
bool MainWindow::exportTimelinePng(const QString& path) { return m_profileSpace->files()->exportTimelinePng(path); }

bool MainWindow::modalErrors() const { return m_status->modalErrors(); }

void MainWindow::setModalErrors(bool modal)
{
    m_status->setModalErrors(modal);
    m_planSpace->files()->setModalErrors(modal);
    m_profileSpace->setModalErrors(modal);
}

bool MainWindow::isPersistent() const { return m_status->isPersistent(); }

void MainWindow::setPersistent(bool persistent)
{
    m_status->setPersistent(persistent);
    m_modelSpace->inputs()->setRemembering(persistent);
    m_modelSpace->page()->view()->setRemembering(persistent);
    m_profileSpace->setPersistent(persistent);
    m_planSpace->files()->setPersistent(persistent);
    m_optimizeSpace->view()->setRemembering(persistent);
}

MainWindow::UnsavedChanges MainWindow::unsavedChanges() const { return m_planSpace->files()->unsavedChanges(); }
void MainWindow::setUnsavedChanges(UnsavedChanges choice) { m_planSpace->files()->setUnsavedChanges(choice); }
MainWindow::UnsavedChanges MainWindow::unsavedResults() const { return m_profileSpace->files()->unsavedResults(); }
void MainWindow::setUnsavedResults(UnsavedChanges choice) { m_profileSpace->files()->setUnsavedResults(choice); }

} // namespace kforge::ui
