// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "controllers/profile_display.h"
#include "item_models/profile_results.h"
#include "item_models/speed_summary.h"

#include <kforge/profiling.h>

#include <QList>
#include <QWidget>

#include <memory>
#include <utility>

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QSortFilterProxyModel;
class QSpinBox;
class QTabWidget;
class QTableView;
class QToolButton;

namespace kforge::ui {

class ComparisonModel;
class FlameGraphPage;
class KernelStatsModel;
class MemoryPage;
class BenchmarkController;
class MeasureController;
class ProfileController;
class ProfileResultsSource;
class VerifyController;
class TimeShareChart;
class TimelineView;

// The Profile page: a bar to run a baseline, a run with the plan, a comparison or a benchmark (warm-up,
// iterations, device, progress and Cancel), and the results of the run shown (baseline or plan) in six tabs: the
// kernel table (grouping, filter, sortable statistics), the time-share chart, the timeline, the comparison, the
// flame graph and where the memory went. Clicking a record in the timeline selects its row in the kernel table. It
// shows the results its source hands it (ProfileResults, made off the UI thread) and computes none of them.
class ProfilePage : public QWidget, public ProfileDisplay {
    Q_OBJECT
public:
    enum class Shown { Baseline, Plan };
    Q_ENUM(Shown)

    struct Actions {
        QAction* runBaseline = nullptr;
        QAction* runWithPlan = nullptr;
        QAction* compare = nullptr;
        QAction* benchmark = nullptr;
        QAction* verify = nullptr;
        QAction* cancel = nullptr;
    };

    // The page of `results`, run by `controller`; without a controller it is a saved report's page: the runs of a
    // file, with nothing to run from it (the run controls hidden, no settings read or written).
    ProfilePage(ProfileResultsSource* results, ProfileController* controller, QWidget* parent = nullptr);

    // The page's buttons are these actions (MainWindow's Profile menu).
    void setActions(const Actions& actions);
    // The benchmark and the verification the Comparison tab shows beside the comparison, and whose progress the
    // bar shows (a report's page has neither).
    void setMeasurements(BenchmarkController* benchmark, VerifyController* verify);
    // Off for batch runs and tests: warm-up, iterations and device are then not written to QSettings.
    void setPersistent(bool persistent) { m_persistent = persistent; }
    void setOrigin(const QString& origin) override;
    bool isReport() const { return m_controller == nullptr; }

    // The sub-views by name: "kernels", "chart", "timeline", "comparison", "flame", "memory"; null for other names.
    QWidget* subView(const QString& name) const;
    void showSubView(const QString& name);
    void focusFilter();

    // The module selected in the module tree: the kernel table keeps that module's subtree (a chip above it says so,
    // its × clears it: moduleScopeCleared) and the timeline outlines its ranges; "" (the root) shows everything.
    void setModuleScope(const QString& path);
    QString moduleScope() const { return m_scope; }
    QToolButton* scopeChip() const { return m_scopeChip; }
    // Whether the kernel table waits for its rows (a grouping or scope the results lacked, made off the UI thread).
    bool computingTable() const;

    // "cpu" or "cuda" (when available), as if picked in the device box.
    void setDevice(const QString& device);

    // Which run the kernel table, chart and timeline show (when both exist).
    void setShown(Shown shown);
    Shown shown() const;
    std::shared_ptr<const kforge::ProfileRun> shownRun() const override;
    bool savePicture(Picture picture, const QString& file, QString* error) const override;
    // Selects the kernel-table row that run->records[recordIndex] counts towards and shows the table (clearing a
    // filter that hides the row); with showTable false only a visible row is selected, and nothing else changes.
    bool selectRecordRow(int recordIndex, bool showTable = true);

    KernelStatsModel* statsModel() const { return m_statsModel; }
    QSortFilterProxyModel* statsProxy() const { return m_statsProxy; }
    QTableView* kernelTable() const { return m_kernelTable; }
    QComboBox* groupByCombo() const { return m_groupCombo; }
    QLineEdit* filterEdit() const { return m_filterEdit; }
    ComparisonModel* comparisonModel() const { return m_comparisonModel; }
    QTableView* comparisonTable() const { return m_comparisonTable; }
    QLabel* benchmarkSummary() const { return m_benchmarkSummary; }
    QLabel* verifySummary() const { return m_verifySummary; }
    TimeShareChart* chart() const { return m_chart; }
    TimelineView* timeline() const { return m_timeline; }
    QSpinBox* warmupBox() const { return m_warmupBox; }
    QSpinBox* iterationsBox() const { return m_iterationsBox; }
    QComboBox* deviceCombo() const { return m_deviceCombo; }
    QCheckBox* recordShapesBox() const { return m_shapesBox; }
    QCheckBox* recordMemoryBox() const { return m_memoryBox; }
    QComboBox* showCombo() const { return m_showCombo; }
    QString headerText() const;

Q_SIGNALS:
    void deviceChanged(const QString& device); // "cpu" or "cuda", as the user picked it
    void shownRunChanged();
    void moduleScopeCleared(); // the scope chip's ×: the whole run again (the tree's selection goes to the root)

private:
    // Whether `run` is shown while a profile runs that will replace it (stale).
    bool replacedByRunningProfile(const kforge::ProfileRun& run) const;
    QWidget* createTopBar();
    QWidget* createKernelsTab();
    QWidget* createComparisonTab();
    QWidget* createTimelineTab();
    static QString timelineHint();
    void loadSettings();
    void saveSetting(const QString& key, const QVariant& value);
    void applyFilter();
    void setResults(const ResultsPtr& results);
    void showResults();
    void showRun();
    void showTable(); // of the run shown, in the grouping and scope chosen
    const RunResults& shownResults() const;
    void updateHeader();
    void setRunning(bool running);
    void showProgress(int done, int total, const QString& stage);

    void follow(MeasureController* measurement); // its running state and progress
    bool anyRunning() const;

    ProfileResultsSource* m_source;
    ProfileController* m_controller; // null on a report
    ResultsPtr m_results;            // shown; never null
    BenchmarkController* m_benchmark = nullptr;
    VerifyController* m_verify = nullptr;
    NewerResult m_newer = NewerResult::Comparison; // of the comparison and the benchmark, which came last
    bool m_persistent = true;
    QList<QWidget*> m_runControls; // buttons and settings of new runs, hidden on a report
    QString m_origin;
    QString m_scope; // the module tree's selection
    // The runs last shown, to tell which run is new when results change.
    std::pair<std::shared_ptr<const kforge::ProfileRun>, std::shared_ptr<const kforge::ProfileRun>> m_lastRuns;

    QToolButton* m_baselineButton;
    QToolButton* m_planButton;
    QToolButton* m_compareButton;
    QToolButton* m_benchmarkButton;
    QToolButton* m_verifyButton;
    QToolButton* m_cancelButton;
    QSpinBox* m_warmupBox;
    QSpinBox* m_iterationsBox;
    QComboBox* m_deviceCombo;
    QCheckBox* m_shapesBox;
    QCheckBox* m_memoryBox = nullptr;
    QLabel* m_showLabel;
    QComboBox* m_showCombo;
    QProgressBar* m_progress;
    QLabel* m_progressText;
    QLabel* m_header;
    QTabWidget* m_tabs;

    KernelStatsModel* m_statsModel;
    QSortFilterProxyModel* m_statsProxy;
    QComboBox* m_groupCombo;
    QLineEdit* m_filterEdit;
    QCheckBox* m_regexBox;
    QToolButton* m_scopeChip; // "layer4.0 ×": the kernel table's module scope, and how to clear it
    QTableView* m_kernelTable;
    QWidget* m_kernelsTab;

    TimeShareChart* m_chart;
    TimelineView* m_timeline;
    QWidget* m_timelineTab;
    QLabel* m_timelineDetails; // the clicked item, or where a measured span's time went
    int m_detailsRecord = -1;  // the record the details are of

    ComparisonModel* m_comparisonModel;
    QComboBox* m_comparisonGroupCombo;
    QLabel* m_comparisonSummary;
    QLabel* m_benchmarkSummary; // the last benchmark, beside the comparison
    QLabel* m_verifySummary;    // the last verification, below it
    QTableView* m_comparisonTable;
    QWidget* m_comparisonTab;
    FlameGraphPage* m_flame;
    MemoryPage* m_memory;
};

} // namespace kforge::ui
