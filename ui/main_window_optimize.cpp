// SPDX-License-Identifier: Apache-2.0
// MainWindow's Optimize dock and actions: make_plan with providers and generators, off the UI thread
// (OptimizeController), its candidates in a table, Apply as Plan (one undoable step), then Benchmark.
#include "main_window.h"

#include "application/app_icons.h"
#include "models/candidate_table_model.h"
#include "models/plan_document.h"
#include "controllers/optimize_controller.h"
#include "controllers/profile_controller.h"
#include "controllers/session_owner.h"
#include "views/optimize_view.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>

namespace kforge::ui {

void MainWindow::createOptimizeDock(QMenu* profileMenu)
{
    profileMenu->addSeparator();
    m_actions.optimize = profileMenu->addAction(icon("run"), tr("&Optimize…"), this, &MainWindow::optimize);
    m_actions.optimize->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_actions.optimize->setStatusTip(
        tr("Try every provider and kernel generator on the model's own samples and keep the fastest correct one per "
           "function (kforge optimize)"));
    m_actions.cancelOptimize =
        profileMenu->addAction(icon("abort"), tr("Cancel Optimi&ze"), this, &MainWindow::cancelOptimize);
    m_actions.cancelOptimize->setStatusTip(tr("Stop before the next function; the plan keeps those finished"));
    m_actions.applyOptimized =
        profileMenu->addAction(icon("new-plan"), tr("Apply Optimized P&lan"), this, &MainWindow::applyOptimizedPlan);
    m_actions.applyOptimized->setStatusTip(tr("Replace the plan's entries with the optimized plan (undoable)"));

    m_optimizeView = new OptimizeView(m_optimize->candidates(), this);
    m_optimizeView->setObjectName(QStringLiteral("optimizeView"));
    m_optimizeView->setActions(
        {m_actions.optimize, m_actions.cancelOptimize, m_actions.applyOptimized, m_actions.profileBenchmark});
    m_optimizeDock = new QDockWidget(tr("Optimize"), this);
    m_optimizeDock->setObjectName(QStringLiteral("optimizeDock"));
    m_optimizeDock->setWidget(m_optimizeView);
    addDockWidget(Qt::BottomDockWidgetArea, m_optimizeDock);
    tabifyDockWidget(m_planDock, m_optimizeDock);
    m_planDock->raise();

    connect(m_optimize, &OptimizeController::runningChanged, this, [this](bool running) {
        updateRunActions(); // forwards and profiles wait for the optimisation, and the other way round
        if (running)
            m_optimizeView->setStatus(tr("Optimizing on %1…").arg(m_profile->device().toUpper()));
    });
    connect(m_optimize, &OptimizeController::progress, this,
            [this](const QString& line) { m_optimizeView->setStatus(line.trimmed()); });
    connect(m_optimize, &OptimizeController::finished, this,
            [this](OptimizeController::Outcome outcome, const QString& message) {
                QString text;
                switch (outcome) {
                case OptimizeController::Outcome::Finished:
                    text = tr("Optimized: %1. Apply Optimized Plan puts it in the plan editor; Benchmark then "
                              "times it end to end.")
                               .arg(message);
                    break;
                case OptimizeController::Outcome::Cancelled:
                    text = tr("Stopped: %1 among the functions finished.").arg(message);
                    break;
                case OptimizeController::Outcome::Failed:
                    text = tr("Optimize failed: %1").arg(message);
                    Q_EMIT profileError(message);
                    break;
                }
                m_optimizeView->setStatus(text);
                statusBar()->showMessage(text, 10'000);
                updateOptimizeActions();
                Q_EMIT optimizeFinished(outcome == OptimizeController::Outcome::Finished, message);
            });
}

void MainWindow::updateOptimizeActions()
{
    if (!m_actions.optimize)
        return; // called while the actions are being created
    const bool optimizing = m_optimize->isRunning();
    m_actions.optimize->setEnabled(m_owner->canStart(SessionOwner::Activity::Optimize));
    m_actions.cancelOptimize->setEnabled(optimizing);
    m_actions.applyOptimized->setEnabled(!optimizing && !m_optimize->plan().entries.empty());
}

bool MainWindow::optimize()
{
    kforge::OptimizeOptions options = m_optimize->options();
    options.device = m_profile->device().toStdString();
    options.warmupIterations = m_profile->warmupIterations();
    options.iterations = m_profile->iterations();
    m_optimize->setOptions(options);
    QString error;
    if (!m_optimize->start(&error)) {
        reportProfileError(tr("Cannot Optimize"), tr("Cannot optimize: %1").arg(error));
        return false;
    }
    m_optimizeDock->show();
    m_optimizeDock->raise();
    return true;
}

void MainWindow::cancelOptimize() { m_optimize->cancel(); }

bool MainWindow::applyOptimizedPlan()
{
    if (m_optimize->isRunning() || m_optimize->plan().entries.empty())
        return false;
    m_document->replaceEntries(m_optimize->plan(), tr("Apply optimized plan"));
    m_planDock->raise();
    statusBar()->showMessage(tr("The optimized plan is in the plan editor (Ctrl+Z undoes it)"), 10'000);
    return true;
}

} // namespace kforge::ui
