// SPDX-License-Identifier: Apache-2.0
#pragma once
// The profile workspace: the Profile tab (kernels, chart, timeline, comparison, flame graphs, memory), the Profile menu
// (baseline, with plan, compare, benchmark, verify, cancel), .kfprof files and the exports in the File menu, and the
// status bar's device. It profiles through ProfileController, benchmarks through BenchmarkController, verifies through
// VerifyController (one MeasureSettings for the three), and reads and writes files through ProfileFileController.
#include "application/dropped_files.h"
#include "item_models/profile_results.h"
#include "workspaces/workspace_context.h"

#include <QList>
#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

class QLabel;
class QMenu;
class QMenuBar;
class QPoint;
class QStatusBar;
class QTabWidget;
class QToolBar;

namespace kforge {
struct EntryDeclines;
struct Plan;
struct ProfileRun;
struct VerifyReport;
} // namespace kforge

namespace kforge::ui {

class BenchmarkController;
class MeasureController;
class ProfileController;
class ProfileFileController;
class VerifyController;
class ProfilePage;
class ReportWorkspace;

class ProfileWorkspace : public QObject {
    Q_OBJECT
public:
    ProfileWorkspace(const WorkspaceContext& context, QTabWidget* tabs);

    static QStringList viewNames();
    void addFileActions(QMenu* fileMenu);
    QMenu* addProfileMenu(QMenuBar* menuBar); // the optimize workspace adds its part to it
    void addToolBarActions(QToolBar* toolBar);
    void addStatusWidgets(QStatusBar* statusBar);

    ProfileController* controller() const { return m_profile; }
    BenchmarkController* benchmarkController() const { return m_benchmark; }
    VerifyController* verifyController() const { return m_verify; }
    ProfilePage* page() const { return m_page; }
    ProfileFileController* files() const { return m_files; }

    // False, with error(), when nothing started; finished() follows a start.
    bool profileBaseline();
    bool profileWithPlan();
    bool profileCompare();
    bool profileBenchmark();
    bool profileVerify(); // kforge verify: the verdict on the outputs, the first diverging module
    void cancelProfile();
    void focusFilter();
    bool isShown() const;      // the Profile tab or a report
    void updateDeviceStatus(); // which device forwards and profiles use
    void setModalErrors(bool modal);
    void setPersistent(bool persistent);
    static bool isProfileFile(const QString& path);
    // The saved profiles of other models open in reports of their own, one tab each (File › Close Report, Ctrl+W).
    QList<ReportWorkspace*> reports() const;
    ReportWorkspace* shownReport() const; // the report on the tab shown, or null
    void closeReport(ReportWorkspace* report);
    // .kfprof files dropped on the window (sortDroppedFiles: one or two). One opens, unless a run is shown (Compare
    // With… is enabled): then the chooser says whether it is compared with that run or opened. Two are a pair: the
    // first opens, the second is compared with the run it shows. False when nothing opened (the reason was reported).
    bool openDropped(const QStringList& files, const QPoint& globalPos);
    void setDropChooser(DropChooser chooser) { m_chooseDrop = std::move(chooser); }

Q_SIGNALS:
    void finished(bool ok, const QString& message);  // ok: all iterations measured
    void error(const QString& message);              // one line: a profile or a profile file failed
    void sessionDeviceChanged();                     // a CUDA profile moved the model
    void divergenceFound(const QString& modulePath); // a verification named where the plan's outputs diverge
    // A verification finished: its per-module comparison goes to the module tree's Error column.
    void planVerified(const kforge::VerifyReport& report);

private:
    void createActions();
    void connectController();
    // The status, the notes and finished() for each measurement; `declines`: what its plan's providers declined.
    void connectMeasurement(MeasureController* measurement,
                            std::function<std::vector<kforge::EntryDeclines>()> declines);
    void verified(); // a verification finished: the plan's verdicts, the module tree's Error column
    bool anyRunning() const;
    void updateActions();
    bool startProfile(const std::function<bool(QString*)>& start);
    bool startPlanProfile(const std::function<bool(const kforge::Plan&, QString*)>& start);
    void reportError(const QString& title, const QString& message);
    void showPage();
    void addReport(const QString& fileName, const ResultsPtr& results);
    ProfileFileController* shownFiles() const; // the shown report's, else the Profile tab's

    WorkspaceContext m_context;
    QTabWidget* m_tabs;
    ProfileController* m_profile;
    BenchmarkController* m_benchmark;
    VerifyController* m_verify;
    ProfilePage* m_page;
    ProfileFileController* m_files;
    QLabel* m_deviceLabel = nullptr;
    DropChooser m_chooseDrop; // a menu at the drop unless a test sets one
    bool m_modalErrors = true;
    bool m_persistent = true;
    std::uint64_t m_verifiedRevision = 0; // the plan's revision when the last Verify Plan started
};

} // namespace kforge::ui
