// SPDX-License-Identifier: Apache-2.0
#include "workspaces/profile_workspace.h"

#include "application/app_icons.h"
#include "application/status_reporter.h"
#include "application/system_info.h"
#include "application/view_registry.h"
#include "controllers/benchmark_controller.h"
#include "controllers/plan_run_notes.h"
#include "controllers/profile_controller.h"
#include "controllers/verify_controller.h"
#include "controllers/profile_file_controller.h"
#include "controllers/profile_results_source.h"
#include "controllers/session_owner.h"
#include "item_models/module_scope.h"
#include "item_models/plan_document.h"
#include "item_models/plan_model.h"
#include "item_models/verify_verdicts.h"
#include "views/module_tree_page.h"
#include "views/module_tree_view.h"
#include "views/profile_page.h"
#include "workspaces/report_workspace.h"
#include "window_actions.h"

#include <kforge/model_session.h>
#include <kforge/plan.h>

#include <QAction>
#include <QFileInfo>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QToolButton>
#include <QToolBar>

#include <algorithm>

namespace kforge::ui {
namespace {

const QString kProfileFileFilter = QStringLiteral("KForge profiles (*.kfprof);;All files (*)");

} // namespace

ProfileWorkspace::ProfileWorkspace(const WorkspaceContext& context, QTabWidget* tabs)
    : QObject(context.window), m_context(context), m_tabs(tabs), m_profile(new ProfileController(context.owner, this)),
      m_benchmark(new BenchmarkController(context.owner, m_profile->sharedSettings(), this)),
      m_verify(new VerifyController(context.owner, m_profile->sharedSettings(), this)),
      m_page(new ProfilePage(m_profile->source(), m_profile, context.window)),
      m_files(new ProfileFileController(m_profile->source(), m_page, context.window)),
      m_chooseDrop(dropMenu(context.window))
{
    m_profile->setObjectName(QStringLiteral("profileController"));
    m_benchmark->setObjectName(QStringLiteral("benchmarkController"));
    m_verify->setObjectName(QStringLiteral("verifyController"));
    m_files->setObjectName(QStringLiteral("profileFiles"));
    m_page->setMeasurements(m_benchmark, m_verify);
    m_tabs->addTab(m_page, icon("profile"), tr("Profile"));
    ViewRegistry& views = *m_context.views;
    for (const QString& name : viewNames()) {
        QWidget* view = name == QLatin1String("profile") ? m_page : m_page->subView(name);
        views.add(name, view, nullptr, [this, name] {
            showPage();
            m_page->showSubView(name == QLatin1String("profile") ? QStringLiteral("kernels") : name);
        });
    }
    connect(m_files, &ProfileFileController::opened, this, &ProfileWorkspace::showPage);
    connect(m_files, &ProfileFileController::statusMessage, this,
            [this](const QString& message) { m_context.status->show(message); });
    connect(m_files, &ProfileFileController::error, this, &ProfileWorkspace::error);
    // A profile of another model than the one loaded opens in a report of its own: nothing here is replaced.
    m_files->setOpensAsReport([owner = m_context.owner](const kforge::ProfileRun& run) {
        const auto& session = owner->session();
        return session && !kforge::sameModuleTree(run.modules, session->modules());
    });
    connect(m_files, &ProfileFileController::reportOpened, this, &ProfileWorkspace::addReport);
    connect(m_tabs, &QTabWidget::currentChanged, this, &ProfileWorkspace::updateActions);
    // The kernel table and the timeline follow the module selected in the tree.
    connect(context.scope, &ModuleScope::changed, m_page, &ProfilePage::setModuleScope);
    connect(m_page, &ProfilePage::moduleScopeCleared, context.scope, [scope = context.scope] { scope->setPath({}); });
    createActions();
    connectController();
}

QStringList ProfileWorkspace::viewNames()
{
    return {QStringLiteral("profile"),    QStringLiteral("chart"), QStringLiteral("timeline"),
            QStringLiteral("comparison"), QStringLiteral("flame"), QStringLiteral("diff-flame"),
            QStringLiteral("memory")};
}

bool ProfileWorkspace::isProfileFile(const QString& path)
{
    return path.endsWith(QLatin1String(".kfprof"), Qt::CaseInsensitive);
}

void ProfileWorkspace::createActions()
{
    WindowActions& a = *m_context.actions;
    auto make = [this](const char* iconName, const QString& text, auto slot) {
        auto* action = new QAction(iconName ? icon(iconName) : QIcon(), text, this);
        connect(action, &QAction::triggered, this, slot);
        return action;
    };
    // Export and save actions ask for the file, then write it (ProfileFileController).
    auto saveAs = [this](const QString& title, const QString& suffix, const QString& filter, auto write) {
        return [this, title, suffix, filter, write] {
            ProfileFileController* files = shownFiles();
            if (const QString file = files->chooseFileToSave(title, suffix, filter); !file.isEmpty())
                (files->*write)(file);
        };
    };
    a.openProfile = make("open", tr("Open Pro&file…"), [this] { m_files->chooseToOpen(); });
    a.openProfile->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_O));
    a.openProfile->setStatusTip(tr("Open a saved profile result (.kfprof); no model is needed"));
    a.compareWith = make(nullptr, tr("Compare &With…"), [this] { shownFiles()->chooseToCompareWith(); });
    a.compareWith->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_D));
    a.compareWith->setStatusTip(tr("Compare the run shown with a run of a saved profile (.kfprof): the pair opens in "
                                   "a report, with its comparison, module Δ and differential flame graph"));
    a.swapSides = make(nullptr, tr("Swap Si&des"), [this] { shownFiles()->swapSides(); });
    a.swapSides->setStatusTip(tr("Make the other run of the pair shown the reference: the comparison, Δ and "
                                 "differential flame graph are made again"));
    a.saveProfile =
        make("save", tr("Save Prof&ile…"),
             saveAs(tr("Save Profile"), QStringLiteral(".kfprof"), kProfileFileFilter, &ProfileFileController::save));
    a.saveProfile->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
    a.saveProfile->setStatusTip(tr("Save the baseline and plan runs to a .kfprof file"));
    a.exportTrace = make("export", tr("Export Chrome &Trace…"),
                         saveAs(tr("Export Chrome Trace"), QStringLiteral(".trace.json"),
                                tr("Chrome trace (*.json);;All files (*)"), &ProfileFileController::exportChromeTrace));
    a.exportTrace->setStatusTip(tr("A trace of the runs that Perfetto and chrome://tracing open"));
    a.exportCsv = make(nullptr, tr("Export &CSV…"),
                       saveAs(tr("Export CSV"), QStringLiteral(".csv"), tr("CSV (*.csv);;All files (*)"),
                              &ProfileFileController::exportCsv));
    a.exportCsv->setStatusTip(tr("One row per kernel execution of the run shown, with its attribution"));
    a.exportChart = make(nullptr, tr("Export C&hart as PNG…"),
                         saveAs(tr("Export Chart"), QStringLiteral("-chart.png"), tr("PNG images (*.png)"),
                                &ProfileFileController::exportChartPng));
    a.exportTimeline = make(nullptr, tr("Export Time&line as PNG…"),
                            saveAs(tr("Export Timeline"), QStringLiteral("-timeline.png"), tr("PNG images (*.png)"),
                                   &ProfileFileController::exportTimelinePng));
    a.closeReport = make(nullptr, tr("Close &Report"), [this] { closeReport(shownReport()); });
    a.closeReport->setShortcut(QKeySequence::Close);
    a.closeReport->setStatusTip(tr("Close the saved profile's report shown"));

    a.profileBaseline = make("profile", tr("Run &Baseline"), [this] { profileBaseline(); });
    a.profileBaseline->setShortcut(QKeySequence(Qt::Key_F6));
    a.profileBaseline->setStatusTip(tr("Profile forwards without any provider"));
    a.profileWithPlan = make("profile-plan", tr("Run with &Plan"), [this] { profileWithPlan(); });
    a.profileWithPlan->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F6));
    a.profileWithPlan->setStatusTip(tr("Profile forwards with the plan's enabled entries in effect"));
    a.profileCompare = make("compare", tr("&Compare"), [this] { profileCompare(); });
    a.profileCompare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_F6));
    a.profileCompare->setStatusTip(tr("Profile a baseline, then the plan, and compare them"));
    a.profileBenchmark = make("compare", tr("Bench&mark"), [this] { profileBenchmark(); });
    a.profileBenchmark->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F6));
    a.profileBenchmark->setStatusTip(
        tr("Time whole forwards without and with the plan, in alternating rounds, without the profiler"));
    a.profileVerify = make("compare", tr("&Verify Plan"), [this] { profileVerify(); });
    a.profileVerify->setShortcut(QKeySequence(Qt::Key_F7));
    a.profileVerify->setStatusTip(tr("Judge the model's outputs with the plan against without it, and find the first "
                                     "module where they diverge"));
    a.cancelProfile = make("abort", tr("C&ancel Profile"), [this] { cancelProfile(); });
    a.cancelProfile->setShortcut(QKeySequence(Qt::Key_Escape));
    a.cancelProfile->setStatusTip(tr("Stop the profile after its current forward"));
    m_page->setActions(
        {a.profileBaseline, a.profileWithPlan, a.profileCompare, a.profileBenchmark, a.profileVerify, a.cancelProfile});
}

void ProfileWorkspace::addFileActions(QMenu* fileMenu)
{
    const WindowActions& a = *m_context.actions;
    fileMenu->addActions({a.openProfile, a.compareWith, a.saveProfile, a.closeReport, a.exportTrace, a.exportCsv,
                          a.exportChart, a.exportTimeline});
}

QMenu* ProfileWorkspace::addProfileMenu(QMenuBar* menuBar)
{
    const WindowActions& a = *m_context.actions;
    QMenu* menu = menuBar->addMenu(tr("&Profile"));
    menu->addActions(
        {a.profileBaseline, a.profileWithPlan, a.profileCompare, a.profileBenchmark, a.profileVerify, a.cancelProfile});
    menu->addSeparator();
    menu->addActions({a.openProfile, a.compareWith, a.swapSides, a.saveProfile});
    return menu;
}

void ProfileWorkspace::addToolBarActions(QToolBar* toolBar)
{
    const WindowActions& a = *m_context.actions;
    toolBar->addActions({a.profileBaseline, a.profileWithPlan, a.profileCompare});
}

void ProfileWorkspace::addStatusWidgets(QStatusBar* statusBar)
{
    m_deviceLabel = new QLabel(statusBar);
    m_deviceLabel->setObjectName(QStringLiteral("deviceStatus"));
    statusBar->addPermanentWidget(m_deviceLabel);
    updateDeviceStatus();
}

void ProfileWorkspace::connectController()
{
    connectMeasurement(m_profile, [this] { return m_profile->declines(); }); // after a baseline, none: no plan ran
    connectMeasurement(m_benchmark, [this] { return m_benchmark->declines(); });
    connectMeasurement(m_verify, [] { return std::vector<kforge::EntryDeclines>{}; });
    connect(m_verify, &MeasureController::finished, this, [this](MeasureController::Outcome outcome) {
        if (outcome == MeasureController::Outcome::Finished && m_verify->report())
            verified();
    });
    connect(m_context.owner, &SessionOwner::activityChanged, this, &ProfileWorkspace::updateActions);
    connect(m_context.owner, &SessionOwner::sessionChanged, this, [this] {
        updateActions();
        updateDeviceStatus();
    });
    connect(m_context.document, &PlanDocument::planChanged, this, &ProfileWorkspace::updateActions);
    connect(m_page, &ProfilePage::deviceChanged, this, &ProfileWorkspace::updateDeviceStatus);
    connect(m_page, &ProfilePage::shownRunChanged, this, &ProfileWorkspace::updateActions);
    updateActions();
}

void ProfileWorkspace::connectMeasurement(MeasureController* measurement,
                                          std::function<std::vector<kforge::EntryDeclines>()> declines)
{
    connect(measurement, &MeasureController::runningChanged, this, [this, measurement](bool running) {
        updateActions();
        if (running)
            m_context.status->show(
                m_context.notes->withWarnings(tr("Profiling on %1…").arg(measurement->device().toUpper())), 0);
    });
    connect(measurement, &MeasureController::resultsChanged, this, &ProfileWorkspace::updateActions);
    connect(measurement, &MeasureController::finished, this,
            [this, measurement, declines = std::move(declines)](MeasureController::Outcome outcome,
                                                                const QString& message) {
                if (m_context.owner->session() && measurement->device() == QLatin1String("cuda"))
                    Q_EMIT sessionDeviceChanged(); // the measurement moved the model
                updateDeviceStatus();
                if (outcome == MeasureController::Outcome::Failed)
                    m_context.notes->runMeasuredNothing();
                else
                    m_context.notes->declinesArrived(declines());
                m_context.status->show(m_context.notes->withWarnings(message));
                Q_EMIT finished(outcome == MeasureController::Outcome::Finished, message);
                if (outcome == MeasureController::Outcome::Failed)
                    reportError(tr("Profile Failed"), message);
            });
}

void ProfileWorkspace::verified()
{
    const kforge::VerifyReport& report = *m_verify->report();
    PlanModel* plan = m_context.document->model();
    if (plan->revision() == m_verifiedRevision) // each entry's verdict, while the plan is the one verified
        plan->setVerdicts(entryVerdicts(plan->plan(), report));
    Q_EMIT planVerified(report);
    if (report.divergence)
        Q_EMIT divergenceFound(QString::fromStdString(report.divergence->module));
}

bool ProfileWorkspace::anyRunning() const
{
    return m_profile->isRunning() || m_benchmark->isRunning() || m_verify->isRunning();
}

void ProfileWorkspace::updateActions()
{
    const WindowActions& a = *m_context.actions;
    const bool profiling = anyRunning();
    const bool canStart = m_context.owner->canStart(SessionOwner::Activity::Profile);
    const bool planReady = m_context.document->plan().hasEnabledEntry();
    a.profileBaseline->setEnabled(canStart);
    a.profileWithPlan->setEnabled(canStart && planReady);
    a.profileCompare->setEnabled(canStart && planReady);
    a.profileBenchmark->setEnabled(canStart && planReady);
    a.profileVerify->setEnabled(canStart && planReady);
    a.cancelProfile->setEnabled(profiling);
    // The file actions are of the tab shown: a report's runs, else the Profile tab's (busy while it profiles).
    const ReportWorkspace* report = shownReport();
    const ProfileResultsSource* results = report ? report->results() : m_profile->source();
    const ProfilePage* page = report ? report->page() : m_page;
    const bool busy = !report && profiling;
    const bool anyRun = !results->results()->empty();
    const bool shown = page->shownRun() != nullptr;
    a.openProfile->setEnabled(true); // a profile of another model opens in a report while this one profiles
    a.compareWith->setEnabled(shown && !busy);
    a.swapSides->setEnabled(results->results()->both() && !busy);
    a.saveProfile->setEnabled(anyRun && !busy);
    a.closeReport->setEnabled(report != nullptr);
    a.exportTrace->setEnabled(anyRun && !busy);
    a.exportCsv->setEnabled(shown && !busy);
    a.exportChart->setEnabled(shown && !busy);
    a.exportTimeline->setEnabled(shown && !busy);
}

ReportWorkspace* ProfileWorkspace::shownReport() const
{
    return qobject_cast<ReportWorkspace*>(m_tabs->currentWidget());
}

ProfileFileController* ProfileWorkspace::shownFiles() const
{
    const ReportWorkspace* report = shownReport();
    return report ? report->files() : m_files;
}

QList<ReportWorkspace*> ProfileWorkspace::reports() const
{
    QList<ReportWorkspace*> open;
    for (int i = 0; i < m_tabs->count(); ++i)
        if (auto* report = qobject_cast<ReportWorkspace*>(m_tabs->widget(i)))
            open << report;
    return open;
}

void ProfileWorkspace::addReport(const QString& fileName, const ResultsPtr& results)
{
    auto* report = new ReportWorkspace(fileName, results, m_context.window);
    ProfileFileController* files = report->files();
    files->setModalErrors(m_modalErrors);
    files->setPersistent(m_persistent);
    report->tree()->view()->setRemembering(m_persistent);
    connect(files, &ProfileFileController::statusMessage, this,
            [this](const QString& message) { m_context.status->show(message); });
    connect(files, &ProfileFileController::error, this, &ProfileWorkspace::error);
    connect(files, &ProfileFileController::fileUsed, m_files, &ProfileFileController::fileUsed);
    connect(files, &ProfileFileController::reportOpened, this, &ProfileWorkspace::addReport); // Compare With…
    connect(report->page(), &ProfilePage::shownRunChanged, this, &ProfileWorkspace::updateActions);
    const int index = m_tabs->addTab(report, icon("profile"), fileName);
    m_tabs->setTabToolTip(index, tr("%1: a saved profile of %2").arg(fileName, report->modelName()));
    auto* close = new QToolButton(m_tabs);
    close->setObjectName(QStringLiteral("closeReport"));
    close->setAutoRaise(true);
    close->setText(QStringLiteral("×"));
    close->setToolTip(
        tr("Close this report (%1)").arg(QKeySequence(QKeySequence::Close).toString(QKeySequence::NativeText)));
    connect(close, &QToolButton::clicked, report, [this, report] { closeReport(report); });
    m_tabs->tabBar()->setTabButton(index, QTabBar::RightSide, close);
    m_tabs->setCurrentWidget(report);
}

void ProfileWorkspace::closeReport(ReportWorkspace* report)
{
    const int index = report ? m_tabs->indexOf(report) : -1;
    if (index < 0)
        return;
    m_tabs->removeTab(index);
    report->deleteLater();
    updateActions();
}

void ProfileWorkspace::updateDeviceStatus()
{
    if (!m_deviceLabel)
        return;
    const auto& session = m_context.owner->session();
    const QString forwards = deviceDisplayName(session ? QString::fromStdString(session->device()) : QString());
    const bool cuda = m_profile->device() == QLatin1String("cuda");
    m_deviceLabel->setText(tr("%1 · profile on %2").arg(forwards, cuda ? tr("CUDA") : tr("CPU")));
    m_deviceLabel->setToolTip(tr("Forwards run on %1; profiles on %2")
                                  .arg(forwards, cuda ? tr("CUDA (kernels traced with CUPTI)")
                                                      : tr("the CPU (ATen op executions timed on the host)")));
}

void ProfileWorkspace::showPage() { m_tabs->setCurrentWidget(m_page); }

bool ProfileWorkspace::openDropped(const QStringList& files, const QPoint& globalPos)
{
    if (files.size() == 2) // opening the first shows its run (its report, or the Profile tab) for the second
        return m_files->open(files.front()) && shownFiles()->compareWith(files.back());
    if (!m_context.actions->compareWith->isEnabled()) // no run shown, or a profile running here
        return m_files->open(files.front());
    switch (m_chooseDrop(QFileInfo(files.front()).fileName(), globalPos)) {
    case DropChoice::Compare:
        return shownFiles()->compareWith(files.front());
    case DropChoice::Open:
        return m_files->open(files.front());
    case DropChoice::Cancel:
        break;
    }
    return false;
}

bool ProfileWorkspace::isShown() const { return m_tabs->currentWidget() == m_page || shownReport(); }

void ProfileWorkspace::focusFilter()
{
    ReportWorkspace* report = shownReport();
    (report ? report->page() : m_page)->focusFilter();
}

bool ProfileWorkspace::startProfile(const std::function<bool(QString*)>& start)
{
    QString error;
    if (!start(&error)) {
        reportError(tr("Cannot Profile"), tr("Cannot profile: %1").arg(error));
        return false;
    }
    m_page->setOrigin({});
    showPage();
    return true;
}

bool ProfileWorkspace::profileBaseline()
{
    return startProfile([this](QString* error) {
        m_context.notes->clearWarnings(); // no plan runs
        return m_profile->runBaseline(error);
    });
}

bool ProfileWorkspace::startPlanProfile(const std::function<bool(const kforge::Plan&, QString*)>& start)
{
    return startProfile([this, start](QString* error) {
        m_context.notes->noteWarnings(m_profile->device());
        if (!start(m_context.document->plan(), error))
            return false;
        m_context.notes->runStarted();
        return true;
    });
}

bool ProfileWorkspace::profileWithPlan()
{
    return startPlanProfile(
        [this](const kforge::Plan& plan, QString* error) { return m_profile->runWithPlan(plan, error); });
}

bool ProfileWorkspace::profileCompare()
{
    return startPlanProfile(
        [this](const kforge::Plan& plan, QString* error) { return m_profile->compare(plan, error); });
}

bool ProfileWorkspace::profileBenchmark()
{
    return startPlanProfile(
        [this](const kforge::Plan& plan, QString* error) { return m_benchmark->benchmark(plan, error); });
}

bool ProfileWorkspace::profileVerify()
{
    m_verifiedRevision = m_context.document->model()->revision();
    return startPlanProfile([this](const kforge::Plan& plan, QString* error) { return m_verify->verify(plan, error); });
}

void ProfileWorkspace::cancelProfile()
{
    for (MeasureController* measurement :
         {static_cast<MeasureController*>(m_profile), static_cast<MeasureController*>(m_benchmark),
          static_cast<MeasureController*>(m_verify)})
        measurement->cancel();
}

void ProfileWorkspace::reportError(const QString& title, const QString& message)
{
    m_context.status->show(message);
    Q_EMIT error(message);
    m_context.status->errorDialog(title, message);
}

void ProfileWorkspace::setModalErrors(bool modal)
{
    m_modalErrors = modal;
    m_files->setModalErrors(modal);
    for (ReportWorkspace* report : reports())
        report->files()->setModalErrors(modal);
}

void ProfileWorkspace::setPersistent(bool persistent)
{
    m_persistent = persistent;
    m_page->setPersistent(persistent);
    m_files->setPersistent(persistent);
    for (ReportWorkspace* report : reports()) {
        report->files()->setPersistent(persistent);
        report->tree()->view()->setRemembering(persistent);
    }
}

} // namespace kforge::ui
