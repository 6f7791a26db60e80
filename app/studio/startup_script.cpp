// SPDX-License-Identifier: Apache-2.0
#include "startup_script.h"

#include "controllers/optimize_controller.h"
#include "controllers/run_controller.h"
#include "main_window.h"
#include "parts_by_name.h"
#include "views/module_tree_view.h"
#include "views/profile_page.h"

#include <kforge/plan.h>

#include <QCoreApplication>
#include <QDockWidget>
#include <QImageWriter>
#include <QPixmap>
#include <QTimer>

#include <utility>

namespace kforge::ui {

StartupScript::StartupScript(MainWindow& window, StartupSteps steps, QObject* parent)
    : QObject(parent), m_window(window), m_steps(std::move(steps))
{
    if (!isBatch())
        return;
    m_window.setModalErrors(false);
    m_window.setPersistent(false);
    m_window.setUnsavedChanges(MainWindow::UnsavedChanges::Discard);
    m_window.setUnsavedResults(MainWindow::UnsavedChanges::Discard);
    m_window.setAttribute(Qt::WA_DontShowOnScreen); // a real display must not flash a window
    m_window.resize(kShotWidth, kShotHeight);
    m_window.show();
    connect(&m_window, &MainWindow::loadFailed, this, [this](const QString& message) {
        Q_EMIT error(message);
        finishWith(1);
    });
    connect(&m_window, &MainWindow::profileError, this, &StartupScript::error);
}

void StartupScript::start()
{
    if (m_steps.model.isEmpty()) {
        if (!m_steps.profileFile.isEmpty() && !m_window.openProfile(m_steps.profileFile) && isBatch())
            return finishWith(1);
        if (isBatch()) // queued: let the window lay itself out before it is grabbed
            QTimer::singleShot(0, this, &StartupScript::takeScreenshot);
        return;
    }
    connect(&m_window, &MainWindow::modelLoaded, this, &StartupScript::modelShown,
            Qt::ConnectionType(Qt::QueuedConnection | Qt::SingleShotConnection));
    const bool ask = !isBatch() && !m_steps.program; // a batch run shows no dialog
    m_window.openSource(m_steps.model, ask ? std::nullopt : std::optional(m_steps.program.value_or(ProgramChoice{})));
}

void StartupScript::finishWith(int exitCode)
{
    m_finished = true;
    Q_EMIT finished(exitCode);
}

template <typename Ended>
void StartupScript::runStep(Ended ended, bool (MainWindow::*start)(), void (StartupScript::*next)())
{
    const auto connection = connect(
        &m_window, ended, this,
        [this, next](bool ok, const QString& message) {
            if (!ok)
                Q_EMIT error(message);
            (this->*next)();
        },
        Qt::SingleShotConnection);
    if (!(m_window.*start)()) { // it did not start: profileError() has said why
        disconnect(connection);
        (this->*next)();
    }
}

void StartupScript::modelShown()
{
    QString message;
    if ((!m_steps.inputs.isEmpty() && !m_window.setInputSpecs(m_steps.inputs, &message)) ||
        (!m_steps.inputsFile.isEmpty() && !m_window.loadInputsFile(m_steps.inputsFile, &message))) {
        Q_EMIT error(message);
        return finishWith(1);
    }
    // After the model: a new model drops the runs of the previous one.
    if (!m_steps.profileFile.isEmpty() && !m_window.openProfile(m_steps.profileFile) && isBatch())
        return finishWith(1);
    if (!m_steps.run) {
        afterRun();
        return;
    }
    // The forward's step ends when it does, or at its first pause (a breakpoint).
    auto* once = new QObject(this);
    const auto done = [this, once] {
        if (once->property("done").toBool())
            return;
        once->setProperty("done", true);
        once->deleteLater();
        afterRun();
    };
    connect(&m_window, &MainWindow::runFinished, once, [this, done](bool ok, const QString& message) {
        if (!ok)
            Q_EMIT error(message);
        done();
    });
    connect(part<RunController>(m_window, "runController"), &RunController::pausedChanged, once, [done](bool paused) {
        if (paused)
            done();
    });
    m_window.runForward();
}

void StartupScript::afterRun()
{
    if (!m_steps.profile && !m_steps.compare) {
        afterProfile();
        return;
    }
    part<ProfilePage>(m_window, "profilePage")->setDevice(QStringLiteral("cpu"));
    // A compare profiles the baseline too, in rounds with the plan.
    runStep(&MainWindow::profileFinished, m_steps.compare ? &MainWindow::profileCompare : &MainWindow::profileBaseline,
            &StartupScript::afterProfile);
}

void StartupScript::afterProfile()
{
    if (!m_steps.optimize) {
        stepsDone();
        return;
    }
    part<ProfilePage>(m_window, "profilePage")->setDevice(QStringLiteral("cpu"));
    runStep(&MainWindow::optimizeFinished, &MainWindow::optimize, &StartupScript::stepsDone);
}

void StartupScript::stepsDone()
{
    if (!isBatch() || m_finished)
        return;
    // What the desktop measured, for kforge report and the calibrations of docs/verify.md.
    if (!m_steps.saveProfile.isEmpty() && !m_window.saveProfile(m_steps.saveProfile))
        return finishWith(1);
    if (!m_steps.saveOptimized.isEmpty()) {
        try {
            kforge::savePlan(part<OptimizeController>(m_window, "optimizeController")->plan(),
                             m_steps.saveOptimized.toStdString());
        } catch (const std::exception& e) {
            Q_EMIT error(QString::fromUtf8(e.what()));
            return finishWith(1);
        }
    }
    QTimer::singleShot(0, this, &StartupScript::takeScreenshot); // queued: let the tree lay itself out first
}

// What `view` grabs: a page or profile tab in front (so that it is laid out at its size there), or a dock, floated
// at the screenshot's size so that the view fills the picture.
QPixmap StartupScript::grabView() const
{
    if (m_steps.view.isEmpty())
        return m_window.grab();
    if (QDockWidget* dock = m_window.dockNamed(m_steps.view)) {
        dock->setAttribute(Qt::WA_DontShowOnScreen);
        dock->setFloating(true);
        dock->resize(kShotWidth, kShotHeight);
        dock->show();
        dock->raise();
        QCoreApplication::processEvents(); // lay the floated dock out at its new size
        return dock->widget()->grab();
    }
    m_window.showView(m_steps.view);
    QCoreApplication::processEvents();
    QWidget* widget = m_window.viewNamed(m_steps.view);
    return widget ? widget->grab() : m_window.grab();
}

void StartupScript::takeScreenshot()
{
    if (m_finished)
        return;
    m_finished = true; // grabbing processes events: a second request must not shoot again
    part<ModuleTreeView>(m_window, "moduleTreeView")->expandAndFit(-1);
    QImageWriter writer(m_steps.screenshot);
    if (!writer.write(grabView().toImage())) {
        Q_EMIT error(tr("cannot write %1: %2").arg(m_steps.screenshot, writer.errorString()));
        return finishWith(2);
    }
    finishWith(0);
}

} // namespace kforge::ui
