// SPDX-License-Identifier: Apache-2.0
// MainWindow's profiling: the Profile menu, .kfprof result files and the exports. Apart from main_window.cpp,
// which is about the model, the plan and forwards.
#include "main_window.h"

#include "application/app_icons.h"

#include "models/module_tree_model.h"
#include "models/plan_document.h"
#include "controllers/profile_controller.h"
#include "controllers/run_controller.h"
#include "controllers/session_owner.h"
#include "application/system_info.h"
#include "views/module_tree_page.h"
#include "views/plan_editor_view.h"
#include "views/profile_page.h"
#include "views/time_share_chart.h"
#include "views/timeline_view.h"

#include <kforge/model_session.h>
#include <kforge/profile_export.h>

#include "controllers/profile_file_controller.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include <algorithm>
#include <exception>

namespace kforge::ui {
namespace {

constexpr int kMessageTimeoutMs = 10'000;
const QString kProfileFileFilter = QStringLiteral("KForge profiles (*.kfprof);;All files (*)");

bool hasEnabledEntry(const kforge::Plan& plan)
{
    return std::any_of(plan.entries.begin(), plan.entries.end(), [](const auto& e) { return e.enabled; });
}

} // namespace

void MainWindow::createProfileFileActions(QMenu* fileMenu)
{
    fileMenu->addSeparator();
    m_actions.openProfile =
        fileMenu->addAction(icon("open"), tr("Open Pro&file…"), m_profileFiles, &ProfileFileController::chooseToOpen);
    m_actions.openProfile->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_O));
    m_actions.openProfile->setStatusTip(tr("Open a saved profile result (.kfprof); no model is needed"));
    m_actions.saveProfile = fileMenu->addAction(icon("save"), tr("Save Prof&ile…"), this, [this] {
        if (const QString file =
                m_profileFiles->chooseFileToSave(tr("Save Profile"), QStringLiteral(".kfprof"), kProfileFileFilter);
            !file.isEmpty())
            saveProfile(file);
    });
    m_actions.saveProfile->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
    m_actions.saveProfile->setStatusTip(tr("Save the baseline and plan runs to a .kfprof file"));
    m_actions.exportTrace = fileMenu->addAction(icon("export"), tr("Export Chrome &Trace…"), this, [this] {
        if (const QString file = m_profileFiles->chooseFileToSave(
                tr("Export Chrome Trace"), QStringLiteral(".trace.json"), tr("Chrome trace (*.json);;All files (*)"));
            !file.isEmpty())
            exportChromeTrace(file);
    });
    m_actions.exportTrace->setStatusTip(tr("A trace of the runs that Perfetto and chrome://tracing open"));
    m_actions.exportCsv = fileMenu->addAction(tr("Export &CSV…"), this, [this] {
        if (const QString file = m_profileFiles->chooseFileToSave(tr("Export CSV"), QStringLiteral(".csv"),
                                                                  tr("CSV (*.csv);;All files (*)"));
            !file.isEmpty())
            exportCsv(file);
    });
    m_actions.exportCsv->setStatusTip(tr("One row per kernel execution of the run shown, with its attribution"));
    m_actions.exportChart = fileMenu->addAction(tr("Export C&hart as PNG…"), this, [this] {
        if (const QString file = m_profileFiles->chooseFileToSave(tr("Export Chart"), QStringLiteral("-chart.png"),
                                                                  tr("PNG images (*.png)"));
            !file.isEmpty())
            exportChartPng(file);
    });
    m_actions.exportTimeline = fileMenu->addAction(tr("Export Time&line as PNG…"), this, [this] {
        if (const QString file = m_profileFiles->chooseFileToSave(
                tr("Export Timeline"), QStringLiteral("-timeline.png"), tr("PNG images (*.png)"));
            !file.isEmpty())
            exportTimelinePng(file);
    });
}

void MainWindow::createProfileMenu()
{
    QMenu* menu = menuBar()->addMenu(tr("&Profile"));
    m_actions.profileBaseline =
        menu->addAction(icon("profile"), tr("Run &Baseline"), this, &MainWindow::profileBaseline);
    m_actions.profileBaseline->setShortcut(QKeySequence(Qt::Key_F6));
    m_actions.profileBaseline->setStatusTip(tr("Profile forwards without any provider"));
    m_actions.profileWithPlan =
        menu->addAction(icon("profile-plan"), tr("Run with &Plan"), this, &MainWindow::profileWithPlan);
    m_actions.profileWithPlan->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F6));
    m_actions.profileWithPlan->setStatusTip(tr("Profile forwards with the plan's enabled entries in effect"));
    m_actions.profileCompare = menu->addAction(icon("compare"), tr("&Compare"), this, &MainWindow::profileCompare);
    m_actions.profileCompare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_F6));
    m_actions.profileCompare->setStatusTip(tr("Profile a baseline, then the plan, and compare them"));
    m_actions.profileBenchmark =
        menu->addAction(icon("compare"), tr("Bench&mark"), this, &MainWindow::profileBenchmark);
    m_actions.profileBenchmark->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F6));
    m_actions.profileBenchmark->setStatusTip(
        tr("Time whole forwards without and with the plan, in alternating rounds, without the profiler"));
    m_actions.cancelProfile = menu->addAction(icon("abort"), tr("C&ancel Profile"), this, &MainWindow::cancelProfile);
    m_actions.cancelProfile->setShortcut(QKeySequence(Qt::Key_Escape));
    m_actions.cancelProfile->setStatusTip(tr("Stop the profile after its current forward"));
    menu->addSeparator();
    menu->addAction(m_actions.openProfile);
    menu->addAction(m_actions.saveProfile);
    m_profilePage->setActions({m_actions.profileBaseline, m_actions.profileWithPlan, m_actions.profileCompare,
                               m_actions.profileBenchmark, m_actions.cancelProfile});
    createOptimizeDock(menu);
}

void MainWindow::addProfileToolBarActions(QToolBar* toolBar)
{
    toolBar->addSeparator();
    toolBar->addAction(m_actions.profileBaseline);
    toolBar->addAction(m_actions.profileWithPlan);
    toolBar->addAction(m_actions.profileCompare);
}

void MainWindow::connectProfileController()
{
    connect(m_profile, &ProfileController::runningChanged, this, [this](bool running) {
        updateRunActions(); // forwards wait for the profile, and the other way round
        if (running)
            statusBar()->showMessage(withPlanWarnings(tr("Profiling on %1…").arg(m_profile->device().toUpper())));
    });
    connect(m_profile, &ProfileController::resultsChanged, this, &MainWindow::updateProfileActions);
    connect(m_profile, &ProfileController::resultsChanged, this, &MainWindow::updateModuleTimes);
    connect(m_page, &ModuleTreePage::timeRunChanged, this, &MainWindow::updateModuleTimes);
    connect(m_page, &ModuleTreePage::currentPathChanged, m_profilePage, &ProfilePage::setModuleScope);
    connect(m_profile, &ProfileController::finished, this,
            [this](ProfileController::Outcome outcome, const QString& message) {
                if (m_owner->session() && m_profile->device() == QLatin1String("cuda")) // the profile moved the model
                    m_planEditor->setSession(m_owner->session().get(),
                                             QString::fromStdString(m_owner->session()->device()));
                updateDeviceStatus();
                if (outcome == ProfileController::Outcome::Failed)
                    m_declinesRevision.reset(); // nothing measured: the Declined column stays empty
                else
                    showDeclines(m_profile->declines()); // after a baseline, nothing: no plan ran
                statusBar()->showMessage(withPlanWarnings(message), kMessageTimeoutMs);
                Q_EMIT profileFinished(outcome == ProfileController::Outcome::Finished, message);
                if (outcome == ProfileController::Outcome::Failed)
                    reportProfileError(tr("Profile Failed"), message);
            });
    connect(m_document, &PlanDocument::planChanged, this, &MainWindow::updateProfileActions);
    connect(m_run, &RunController::captureFinished, this, &MainWindow::updateDeviceStatus);
    connect(m_profilePage, &ProfilePage::deviceChanged, this, &MainWindow::updateDeviceStatus);
    connect(m_profilePage, &ProfilePage::shownRunChanged, this, &MainWindow::updateProfileActions);
}

void MainWindow::updateProfileActions()
{
    if (!m_actions.profileBaseline)
        return; // called while the actions are being created
    const bool profiling = m_profile->isRunning();
    const bool canStart = m_owner->canStart(SessionOwner::Activity::Profile);
    const bool planReady = hasEnabledEntry(m_document->plan());
    m_actions.profileBaseline->setEnabled(canStart);
    m_actions.profileWithPlan->setEnabled(canStart && planReady);
    m_actions.profileCompare->setEnabled(canStart && planReady);
    m_actions.profileBenchmark->setEnabled(canStart && planReady);
    m_actions.cancelProfile->setEnabled(profiling);
    const bool anyRun = m_profile->baseline() || m_profile->plan();
    const bool shown = m_profilePage->shownRun() != nullptr;
    m_actions.openProfile->setEnabled(!profiling);
    m_actions.saveProfile->setEnabled(anyRun && !profiling);
    m_actions.exportTrace->setEnabled(anyRun && !profiling);
    m_actions.exportCsv->setEnabled(shown && !profiling);
    m_actions.exportChart->setEnabled(shown && !profiling);
    m_actions.exportTimeline->setEnabled(shown && !profiling);
    updateOptimizeActions();
}

void MainWindow::updateDeviceStatus()
{
    const QString forwards =
        deviceDisplayName(m_owner->session() ? QString::fromStdString(m_owner->session()->device()) : QString());
    const bool cuda = m_profile->device() == QLatin1String("cuda");
    m_deviceLabel->setText(tr("%1 · profile on %2").arg(forwards, cuda ? tr("CUDA") : tr("CPU")));
    m_deviceLabel->setToolTip(tr("Forwards run on %1; profiles on %2")
                                  .arg(forwards, cuda ? tr("CUDA (kernels traced with CUPTI)")
                                                      : tr("the CPU (ATen op executions timed on the host)")));
}

void MainWindow::focusFilter()
{
    if (m_centralTabs->currentWidget() == m_profilePage) {
        m_profilePage->focusFilter();
        return;
    }
    m_centralTabs->setCurrentWidget(m_pages);
    m_page->focusFilter();
}

bool MainWindow::startProfile(const std::function<bool(QString*)>& start)
{
    QString error;
    if (!start(&error)) {
        reportProfileError(tr("Cannot Profile"), tr("Cannot profile: %1").arg(error));
        return false;
    }
    m_profilePage->setOrigin({});
    m_centralTabs->setCurrentWidget(m_profilePage);
    return true;
}

bool MainWindow::profileBaseline()
{
    return startProfile([this](QString* error) {
        clearPlanWarnings(); // no plan runs
        return m_profile->runBaseline(error);
    });
}

bool MainWindow::startPlanProfile(bool (ProfileController::*start)(const kforge::Plan&, QString*))
{
    return startProfile([this, start](QString* error) {
        notePlanWarnings(m_document->plan(), m_profile->device());
        if (!(m_profile->*start)(m_document->plan(), error))
            return false;
        planRunStarted();
        return true;
    });
}

bool MainWindow::profileWithPlan() { return startPlanProfile(&ProfileController::runWithPlan); }
bool MainWindow::profileCompare() { return startPlanProfile(&ProfileController::compare); }
bool MainWindow::profileBenchmark() { return startPlanProfile(&ProfileController::benchmark); }

void MainWindow::cancelProfile() { m_profile->cancel(); }

// The module tree's Time columns: the run the page's choice names (the plan's when both exist, with Δ against the
// baseline), else the one there is.
void MainWindow::updateModuleTimes()
{
    const auto baseline = m_profile->baseline();
    const auto plan = m_profile->plan();
    const bool showPlan = plan && (!baseline || m_page->timeRun() == ModuleTreePage::TimeRun::Plan);
    const auto& shown = showPlan ? plan : baseline;
    m_model->setModuleTimes(shown ? kforge::moduleTimes(*shown) : std::vector<kforge::ModuleTime>{},
                            showPlan && baseline ? kforge::moduleTimes(*baseline) : std::vector<kforge::ModuleTime>{});
    m_page->setTimeRuns(bool(baseline), bool(plan));
}

void MainWindow::reportProfileError(const QString& title, const QString& message)
{
    statusBar()->showMessage(message, kMessageTimeoutMs);
    Q_EMIT profileError(message);
    if (m_modalErrors)
        QMessageBox::critical(this, title, message);
}

// ---- .kfprof files and exports -----------------------------------------------------------------------------------

bool MainWindow::openProfile(const QString& path) { return m_profileFiles->open(path); }
bool MainWindow::saveProfile(const QString& path) { return m_profileFiles->save(path); }
bool MainWindow::exportChromeTrace(const QString& path) { return m_profileFiles->exportChromeTrace(path); }
bool MainWindow::exportCsv(const QString& path) { return m_profileFiles->exportCsv(path); }
bool MainWindow::exportChartPng(const QString& path) { return m_profileFiles->exportChartPng(path); }
bool MainWindow::exportTimelinePng(const QString& path) { return m_profileFiles->exportTimelinePng(path); }

bool MainWindow::isProfileFile(const QString& path)
{
    return path.endsWith(QLatin1String(".kfprof"), Qt::CaseInsensitive);
}

// ---- Views by name -----------------------------------------------------------------------------------------------

QStringList MainWindow::profileViewNames()
{
    return {QStringLiteral("profile"),    QStringLiteral("chart"), QStringLiteral("timeline"),
            QStringLiteral("comparison"), QStringLiteral("flame"), QStringLiteral("diff-flame")};
}

QWidget* MainWindow::profileViewNamed(const QString& name) const
{
    if (name == QLatin1String("profile"))
        return m_profilePage;
    return profileViewNames().contains(name) ? m_profilePage->subView(name) : nullptr;
}

bool MainWindow::showView(const QString& name)
{
    if (profileViewNames().contains(name)) {
        m_centralTabs->setCurrentWidget(m_profilePage);
        m_profilePage->showSubView(name == QLatin1String("profile") ? QStringLiteral("kernels") : name);
        return true;
    }
    if (name == QLatin1String("tree") || name == QLatin1String("tree-time")) {
        // tree-time: the module tree with its time columns, widest first once a profile ran.
        m_centralTabs->setCurrentWidget(m_pages);
        if (name == QLatin1String("tree-time"))
            m_page->sortByTime();
        return true;
    }
    if (QDockWidget* dock = dockNamed(name)) {
        dock->show();
        dock->raise();
        return true;
    }
    return false;
}

ProfileController* MainWindow::profileController() const { return m_profile; }

ProfilePage* MainWindow::profilePage() const { return m_profilePage; }

} // namespace kforge::ui
