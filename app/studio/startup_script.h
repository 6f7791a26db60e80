// SPDX-License-Identifier: Apache-2.0
#pragma once
// What kforge-studio does with its command line once the window is up: open the model (or a saved profile), then,
// in this order and each after the last has ended, set its inputs, show a saved profile, run one forward (until it
// ends or first pauses), profile a CPU baseline (or compare it with the plan), optimize on the CPU, and, in a batch
// run, save a screenshot of the window or of one view. Apart from main() so that tests drive it in the same process.
#include "application/program_choice.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <optional>

class QPixmap;

namespace kforge::ui {

class MainWindow;

struct StartupSteps {
    QString model;      // a model file or builtin:NAME; empty: only the profile file is shown
    QStringList inputs; // --input, one dtype[shape] per argument
    QString inputsFile; // --inputs-file
    // --program and --compiled: what to run of a .pt2 package. Unset, the window asks when there is a choice, and a
    // batch run opens the package's default program.
    std::optional<ProgramChoice> program;
    QString profileFile; // --profile-file (or a .kfprof given as the model)
    bool run = false;
    bool profile = false;
    bool compare = false; // with the plan, in place of the baseline alone
    bool optimize = false;
    QString saveProfile;   // --save-profile: the runs measured, saved after the steps
    QString saveOptimized; // --save-optimized: the plan Optimize made, saved after the steps
    QString screenshot;    // a PNG to save at the end: a batch run, which ends with finished()
    QString view;          // with screenshot: only this view (MainWindow::viewNames())
};

class StartupScript : public QObject {
    Q_OBJECT

public:
    // The size of a batch run's window and of a floated dock's picture, so that screenshots compare.
    static constexpr int kShotWidth = 1200;
    static constexpr int kShotHeight = 760;

    // A batch run sets the window up at once: no dialogs, no settings written, unsaved work dropped, shown off
    // screen at the screenshot's size.
    StartupScript(MainWindow& window, StartupSteps steps, QObject* parent = nullptr);

    bool isBatch() const { return !m_steps.screenshot.isEmpty(); }
    // Opens the model (or the profile file) and goes through the steps once it is shown.
    void start();

Q_SIGNALS:
    void error(const QString& message); // one line each; the run goes on unless finished() follows
    // The exit code: 0 after the screenshot was saved; 1 when the model, its inputs or (in a batch run) the
    // profile file could not be used; 2 when the screenshot could not be written. An interactive run emits it only
    // on failure. It may come from start() itself: connect it queued to leave an event loop.
    void finished(int exitCode);

private:
    void modelShown();
    void afterRun();
    void afterProfile();
    void stepsDone();
    void finishWith(int exitCode);
    // One step: `start` it, then `next` once the window signals `ended` (its outcome's message is an error() when
    // not ok), or at once when it did not start.
    template <typename Ended> void runStep(Ended ended, bool (MainWindow::*start)(), void (StartupScript::*next)());
    QPixmap grabView() const;
    void takeScreenshot();

    MainWindow& m_window;
    StartupSteps m_steps;
    bool m_finished = false;
};

} // namespace kforge::ui
