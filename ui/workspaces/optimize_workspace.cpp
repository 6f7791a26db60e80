// SPDX-License-Identifier: Apache-2.0
#include "workspaces/optimize_workspace.h"

#include "application/app_icons.h"
#include "application/status_reporter.h"
#include "application/view_registry.h"
#include "controllers/optimize_controller.h"
#include "controllers/profile_controller.h"
#include "controllers/session_owner.h"
#include "item_models/plan_document.h"
#include "views/optimize_view.h"
#include "window_actions.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>

namespace kforge::ui {

OptimizeWorkspace::OptimizeWorkspace(const WorkspaceContext& context, ProfileController* profiles)
    : QObject(context.window), m_context(context), m_profiles(profiles),
      m_optimize(new OptimizeController(context.owner, this))
{
    m_optimize->setObjectName(QStringLiteral("optimizeController"));
    createActions();
    const WindowActions& a = *m_context.actions;
    m_view = new OptimizeView(m_optimize->candidates(), m_context.window);
    m_view->setObjectName(QStringLiteral("optimizeView"));
    m_view->setActions({a.optimize, a.cancelOptimize, a.applyOptimized, a.profileBenchmark});
    m_dock = new QDockWidget(tr("Optimize"), m_context.window);
    m_dock->setObjectName(QStringLiteral("optimizeDock"));
    m_dock->setWidget(m_view);
    m_context.window->addDockWidget(Qt::BottomDockWidgetArea, m_dock);
    m_context.window->tabifyDockWidget(m_context.bottomDock, m_dock);
    m_context.views->add(QStringLiteral("optimize"), m_view, m_dock);

    connect(m_context.owner, &SessionOwner::activityChanged, this, &OptimizeWorkspace::updateActions);
    connect(m_context.owner, &SessionOwner::sessionChanged, this, &OptimizeWorkspace::updateActions);
    connect(m_optimize, &OptimizeController::runningChanged, this, [this](bool running) {
        updateActions();
        if (running)
            m_view->setStatus(tr("Optimizing on %1…").arg(m_profiles->device().toUpper()));
    });
    connect(m_optimize, &OptimizeController::progress, this,
            [this](const QString& line) { m_view->setStatus(line.trimmed()); });
    connect(m_optimize, &OptimizeController::finished, this, &OptimizeWorkspace::optimizationEnded);
    updateActions();
}

void OptimizeWorkspace::createActions()
{
    WindowActions& a = *m_context.actions;
    a.optimize = new QAction(icon("run"), tr("&Optimize…"), this);
    a.optimize->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    a.optimize->setStatusTip(
        tr("Try every provider and kernel generator on the model's own samples and keep the fastest correct one per "
           "function (kforge optimize)"));
    connect(a.optimize, &QAction::triggered, this, &OptimizeWorkspace::optimize);
    a.cancelOptimize = new QAction(icon("abort"), tr("Cancel Optimi&ze"), this);
    a.cancelOptimize->setStatusTip(tr("Stop before the next function; the plan keeps those finished"));
    connect(a.cancelOptimize, &QAction::triggered, this, &OptimizeWorkspace::cancelOptimize);
    a.applyOptimized = new QAction(icon("new-plan"), tr("Apply Optimized P&lan"), this);
    a.applyOptimized->setStatusTip(tr("Replace the plan's entries with the optimized plan (undoable)"));
    connect(a.applyOptimized, &QAction::triggered, this, &OptimizeWorkspace::applyOptimizedPlan);
}

void OptimizeWorkspace::addProfileMenuActions(QMenu* profileMenu)
{
    const WindowActions& a = *m_context.actions;
    profileMenu->addSeparator();
    profileMenu->addActions({a.optimize, a.cancelOptimize, a.applyOptimized});
}

void OptimizeWorkspace::optimizationEnded(OptimizeController::Outcome outcome, const QString& message)
{
    QString text;
    switch (outcome) {
    case OptimizeController::Outcome::Finished:
        text = tr("Optimized: %1. Apply Optimized Plan puts it in the plan editor; Benchmark then times it end to end.")
                   .arg(message);
        break;
    case OptimizeController::Outcome::Cancelled:
        text = tr("Stopped: %1 among the functions finished.").arg(message);
        break;
    case OptimizeController::Outcome::Failed:
        text = tr("Optimize failed: %1").arg(message);
        Q_EMIT error(message);
        break;
    }
    m_view->setStatus(text);
    m_context.status->show(text);
    updateActions();
    Q_EMIT finished(outcome == OptimizeController::Outcome::Finished, message);
}

void OptimizeWorkspace::updateActions()
{
    const WindowActions& a = *m_context.actions;
    const bool optimizing = m_optimize->isRunning();
    a.optimize->setEnabled(m_context.owner->canStart(SessionOwner::Activity::Optimize));
    a.cancelOptimize->setEnabled(optimizing);
    a.applyOptimized->setEnabled(!optimizing && !m_optimize->plan().entries.empty());
}

bool OptimizeWorkspace::optimize()
{
    kforge::OptimizeOptions options = m_optimize->options();
    options.device = m_profiles->device().toStdString();
    options.warmupIterations = m_profiles->warmupIterations();
    options.iterations = m_profiles->iterations();
    options.maxPeakIncreasePercent = m_view->peakBudgetPercent();
    m_optimize->setOptions(options);
    QString error;
    if (!m_optimize->start(&error)) {
        const QString message = tr("Cannot optimize: %1").arg(error);
        m_context.status->show(message);
        Q_EMIT this->error(message);
        m_context.status->errorDialog(tr("Cannot Optimize"), message);
        return false;
    }
    m_dock->show();
    m_dock->raise();
    return true;
}

void OptimizeWorkspace::cancelOptimize() { m_optimize->cancel(); }

bool OptimizeWorkspace::applyOptimizedPlan()
{
    if (m_optimize->isRunning() || m_optimize->plan().entries.empty())
        return false;
    m_context.document->replaceEntries(m_optimize->plan(), tr("Apply optimized plan"));
    m_context.bottomDock->raise();
    m_context.status->show(tr("The optimized plan is in the plan editor (Ctrl+Z undoes it)"));
    return true;
}

} // namespace kforge::ui
