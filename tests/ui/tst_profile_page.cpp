// SPDX-License-Identifier: Apache-2.0
// The Profile page in the window: profiles run through the UI's actions on builtin:tiny-gpt (CPU), cancel,
// compare, .kfprof files opened without a model, exports, and the timeline selecting kernel-table rows.
#include "build_path.h"
#include "application/application_identity.h"
#include "test_window.h"
#include "window_parts.h"
#include "main_window.h"
#include "views/flame_graph_view.h"
#include "views/flame_graph_page.h"
#include "views/module_tree_view.h"
#include "views/module_tree_page.h"
#include "views/memory_page.h"
#include "item_models/comparison_model.h"
#include "item_models/format.h"
#include "item_models/kernel_stats_model.h"
#include "item_models/memory_tables.h"
#include "item_models/module_tree_model.h"
#include "item_models/plan_document.h"
#include "item_models/plan_model.h"
#include "item_models/profile_results.h"
#include "item_models/semantic_colors.h"
#include "item_models/module_tree_filter_model.h"
#include "controllers/benchmark_controller.h"
#include "controllers/profile_controller.h"
#include "controllers/profile_file_controller.h"
#include "controllers/run_controller.h"
#include "controllers/verify_controller.h"
#include "views/plan_editor_view.h"
#include "views/profile_page.h"
#include "views/provenance_banner.h"
#include "views/time_share_chart.h"
#include "views/timeline_view.h"
#include "workspaces/report_workspace.h"

#include <kforge/memory_profile.h>
#include <kforge/profile_export.h>
#include <kforge/plugins.h>

#include <QAction>
#include <QBrush>
#include <QCheckBox>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QStatusBar>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QHeaderView>
#include <QTableView>
#include <QTemporaryDir>

#include <kforge/model_session.h>
#include <QTest>
#include <QUrl>

#include <fstream>
#include <memory>
#include <tuple>

using kforge::ui::ComparisonModel;
using kforge::ui::KernelStatsModel;
using kforge::ui::MainWindow;
using kforge::ui::ProfileController;
using kforge::ui::ProfilePage;
using namespace kforge::ui::test; // part(), and the parts tests use most by name
using namespace kforge::ui::test;

namespace {

constexpr int kTimeoutMs = 120'000;
const QString kTinyGpt = QStringLiteral("builtin:tiny-gpt");
const QString kFloat64Gelu =
    QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/float64_gelu.pt"); // gelu in `act`, no parameters

std::unique_ptr<MainWindow> makeWindow()
{
    auto window = makeTestWindow();
    window->resize(1200, 800);
    return window;
}

// A window showing `source`, set up for short CPU profiles (1 warm-up, 2 iterations) through the page's boxes.
std::unique_ptr<MainWindow> openForProfiles(const QString& source)
{
    auto window = makeWindow();
    QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
    window->openSource(source);
    if (!QTest::qWaitFor([&] { return loaded.count() > 0; }, kTimeoutMs))
        qWarning() << source << "did not load";
    ProfilePage* page = profilePage(*window);
    page->deviceCombo()->setCurrentIndex(page->deviceCombo()->findData(QStringLiteral("cpu")));
    page->warmupBox()->setValue(1);
    page->iterationsBox()->setValue(2);
    return window;
}

std::unique_ptr<MainWindow> openTinyGpt() { return openForProfiles(kTinyGpt); }

// Waits for the next profileFinished(ok, message) of the window.
std::pair<bool, QString> waitForProfile(QSignalSpy& finished)
{
    if (!QTest::qWaitFor([&] { return finished.count() > 0; }, kTimeoutMs))
        return {false, QStringLiteral("timeout")};
    const QList<QVariant> args = finished.takeFirst();
    return {args.at(0).toBool(), args.at(1).toString()};
}

double shareSum(const KernelStatsModel& model)
{
    double sum = 0;
    for (int row = 0; row < model.rowCount(); ++row)
        sum += model.index(row, KernelStatsModel::ShareColumn).data(KernelStatsModel::SortRole).toDouble();
    return sum;
}

QStringList keys(const QAbstractItemModel& model, int column = 0)
{
    QStringList values;
    for (int row = 0; row < model.rowCount(); ++row)
        values << model.index(row, column).data().toString();
    return values;
}

qint64 fileSize(const QString& path) { return QFileInfo(path).size(); }

// Sends what a real drag of `files` onto the window delivers; returns whether the drop was accepted.
bool dropFiles(MainWindow& window, const QStringList& files)
{
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& file : files)
        urls << QUrl::fromLocalFile(file);
    mime.setUrls(urls);
    const QPoint center = window.rect().center();
    QDragEnterEvent enter(center, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &enter);
    if (!enter.isAccepted())
        return false;
    QDropEvent drop(QPointF(center), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &drop);
    return drop.isAccepted();
}

QByteArray head(const QString& path, int bytes)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.read(bytes) : QByteArray();
}

QString bytesText(double bytes) { return QString::fromStdString(kforge::bytesText(bytes)); }

// A Memory view table's cell: the number it sorts by, and its text.
double memoryNumber(const QAbstractItemModel& model, int row, int column)
{
    return model.index(row, column).data(kforge::ui::MemoryTableModel::SortRole).toDouble();
}
QString memoryText(const QAbstractItemModel& model, int row, int column)
{
    return model.index(row, column).data().toString();
}

// Where the Memory view's tables differ from the engine's summary of the same run, cell by cell: the numbers they
// sort by must be the engine's exactly and the bytes read as kforge::bytesText spells them; "" when all agree.
QString memoryTablesMismatch(const kforge::ui::MemoryPage& view, const kforge::MemorySummary& memory)
{
    using kforge::ui::FunctionMemoryModel;
    using kforge::ui::PeakHoldersModel;
    QStringList wrong;
    const auto expect = [&](const char* table, const QAbstractItemModel& model, int row, int column, double number,
                            const QString& text) {
        const double shownNumber = memoryNumber(model, row, column);
        const QString shown = memoryText(model, row, column);
        if (shownNumber != number || (!text.isNull() && shown != text))
            wrong << QStringLiteral("%1 row %2 column %3: %4 '%5', the engine's %6 '%7'")
                         .arg(QLatin1String(table))
                         .arg(row)
                         .arg(column)
                         .arg(shownNumber, 0, 'f')
                         .arg(shown)
                         .arg(number, 0, 'f')
                         .arg(text);
    };
    const auto expectText = [&](const char* table, const QAbstractItemModel& model, int row, int column,
                                const QString& text) {
        if (memoryText(model, row, column) != text)
            wrong << QStringLiteral("%1 row %2 column %3: '%4', the engine's '%5'")
                         .arg(QLatin1String(table))
                         .arg(row)
                         .arg(column)
                         .arg(memoryText(model, row, column), text);
    };
    const QAbstractItemModel& holders = *view.holdersModel();
    if (holders.rowCount() != int(memory.aliveAtPeak.size()))
        wrong << QStringLiteral("%1 holders, the engine's %2").arg(holders.rowCount()).arg(memory.aliveAtPeak.size());
    for (int row = 0; row < std::min(holders.rowCount(), int(memory.aliveAtPeak.size())); ++row) {
        const kforge::PeakHolder& h = memory.aliveAtPeak[size_t(row)];
        expectText("holders", holders, row, PeakHoldersModel::ModuleColumn, kforge::ui::formatModulePath(h.module));
        expectText("holders", holders, row, PeakHoldersModel::FunctionColumn,
                   h.function.empty() ? QStringLiteral("—") : QString::fromStdString(h.function));
        expect("holders", holders, row, PeakHoldersModel::BytesColumn, double(h.bytes), bytesText(double(h.bytes)));
        expect("holders", holders, row, PeakHoldersModel::AllocationsColumn, h.allocations, QString());
        expect("holders", holders, row, PeakHoldersModel::ShareColumn, double(h.bytes) / double(memory.peakBytes),
               QString());
    }
    const QAbstractItemModel& functions = *view.functionsModel();
    if (functions.rowCount() != int(memory.functions.size()))
        wrong << QStringLiteral("%1 functions, the engine's %2").arg(functions.rowCount()).arg(memory.functions.size());
    for (int row = 0; row < std::min(functions.rowCount(), int(memory.functions.size())); ++row) {
        const kforge::FunctionMemory& f = memory.functions[size_t(row)];
        expectText("functions", functions, row, FunctionMemoryModel::FunctionColumn,
                   QString::fromStdString(f.function));
        expectText("functions", functions, row, FunctionMemoryModel::ProviderColumn,
                   QString::fromStdString(f.provider));
        expect("functions", functions, row, FunctionMemoryModel::CallsColumn, f.calls, QString());
        expect("functions", functions, row, FunctionMemoryModel::AllocatedColumn, f.allocatedBytes,
               bytesText(f.allocatedBytes));
        expect("functions", functions, row, FunctionMemoryModel::AllocationsColumn, f.allocations, QString());
        expect("functions", functions, row, FunctionMemoryModel::PeakInCallColumn, double(f.peakInCallBytes),
               bytesText(double(f.peakInCallBytes)));
    }
    return wrong.join(QLatin1Char('\n'));
}

// The row of `function` served by `provider` in the Memory view's per-function table, -1 when none.
int functionMemoryRow(const QAbstractItemModel& functions, const QString& function, const QString& provider)
{
    for (int row = 0; row < functions.rowCount(); ++row)
        if (memoryText(functions, row, kforge::ui::FunctionMemoryModel::FunctionColumn) == function &&
            memoryText(functions, row, kforge::ui::FunctionMemoryModel::ProviderColumn) == provider)
            return row;
    return -1;
}

// Whether `table` shows its rows in the order of `column`'s numbers (sorted by number, not by text).
bool sortsByNumber(QTableView& table, int column, Qt::SortOrder order)
{
    table.sortByColumn(column, order);
    const QAbstractItemModel& shown = *table.model();
    for (int row = 1; row < shown.rowCount(); ++row) {
        const double before = memoryNumber(shown, row - 1, column), after = memoryNumber(shown, row, column);
        if (order == Qt::AscendingOrder ? before > after : before < after)
            return false;
    }
    return true;
}

} // namespace

class TestProfilePage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        useTestSettings();
        // SeededNoise_gelu and friends: providers wrong by construction (tests/plugins/seeded_faults.h).
        kforge::loadProviderPlugin(KFORGE_SEEDED_FAULTS);
        // TestWorkspaceGeluProvider: an 8 MiB workspace in each call (tests/plugins/workspace_gelu_provider.h).
        kforge::loadProviderPlugin(KFORGE_WORKSPACE_GELU_PLUGIN);
    }

    void profileBaselineThroughAction()
    {
        const auto window = openTinyGpt();
        QVERIFY(window->session());
        const MainWindow::Actions& actions = window->actions();
        QCOMPARE(actions.profileBaseline->shortcut(), QKeySequence(Qt::Key_F6));
        QVERIFY(actions.profileBaseline->isEnabled());
        QVERIFY(!actions.profileWithPlan->isEnabled()); // the plan is empty
        QVERIFY(!actions.saveProfile->isEnabled());
        QVERIFY(!actions.exportCsv->isEnabled());
        QVERIFY(!actions.cancelProfile->isEnabled());
        QVERIFY2(window->findChild<QLabel*>(QStringLiteral("deviceStatus"))->text().contains(QStringLiteral("CPU")),
                 "the status bar names the profiling device");

        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        actions.profileBaseline->trigger();
        // While it runs: the session is the profile's; forwards and another profile are refused.
        QVERIFY(profileController(*window)->isRunning());
        QVERIFY(runController(*window)->breakpointsSuspended());
        QVERIFY(actions.cancelProfile->isEnabled());
        QVERIFY(!actions.run->isEnabled());
        QVERIFY(!actions.profileBaseline->isEnabled());
        QSignalSpy runFinished(window.get(), &MainWindow::runFinished);
        QVERIFY(!window->runForward());
        QCOMPARE(runFinished.count(), 1);
        QVERIFY2(runFinished.first().at(1).toString().contains(QStringLiteral("profile")),
                 qPrintable(runFinished.first().at(1).toString()));
        QString error;
        QVERIFY(!profileController(*window)->runBaseline(&error));
        QVERIFY(!error.isEmpty());

        const auto [ok, message] = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY(!runController(*window)->breakpointsSuspended());
        QVERIFY(actions.run->isEnabled());

        ProfilePage* page = profilePage(*window);
        const auto run = profileResults(*window)->baseline.run;
        QVERIFY(run);
        QCOMPARE(run->iterations, 2);
        QCOMPARE(run->warmupIterations, 1);
        QCOMPARE(run->device, std::string("cpu"));
        QCOMPARE(page->shownRun(), run);
        QVERIFY(page->headerText().contains(QStringLiteral("2 iteration")));

        // The kernel table: rows whose shares add up to the whole run.
        const KernelStatsModel* stats = page->statsModel();
        QVERIFY(stats->rowCount() > 3);
        QCOMPARE(page->kernelTable()->model()->rowCount(), stats->rowCount());
        QVERIFY2(qAbs(shareSum(*stats) - 1.0) < 1e-6, qPrintable(QString::number(shareSum(*stats))));
        QVERIFY(keys(*stats).contains(QStringLiteral("aten::linear")));

        // Grouping and filtering from the page's own controls.
        page->groupByCombo()->setCurrentIndex(page->groupByCombo()->findData(int(kforge::GroupBy::Function)));
        QCOMPARE(stats->groupBy(), kforge::GroupBy::Function);
        QVERIFY(keys(*stats).contains(QStringLiteral("gelu")));
        QVERIFY2(qAbs(shareSum(*stats) - 1.0) < 1e-6, qPrintable(QString::number(shareSum(*stats))));
        page->filterEdit()->setText(QStringLiteral("GEL"));
        QCOMPARE(keys(*page->statsProxy()), QStringList{QStringLiteral("gelu")});
        page->filterEdit()->clear();

        // The chart and the timeline show the same run.
        QVERIFY(page->chart()->sliceCount() > 0);
        QVERIFY(!page->timeline()->laneLabels().isEmpty());

        // Done: the results can leave the window.
        QVERIFY(actions.saveProfile->isEnabled());
        QVERIFY(actions.exportCsv->isEnabled());
        QVERIFY(actions.exportTrace->isEnabled());
        QVERIFY(actions.exportChart->isEnabled());
        QVERIFY(actions.exportTimeline->isEnabled());
    }

    // Profiling with a plan names the entries that can never fire (here a ModuleList scope)
    // in the status bar, while the profile runs and after it; a baseline runs no plan and warns about nothing.
    void profileWithPlanReportsEntriesThatCanNeverFire()
    {
        const auto window = openTinyGpt();
        window->addPlanEntry(QStringLiteral("blocks"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        QSignalSpy warned(window.get(), &MainWindow::planWarningsChanged);
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        QVERIFY(window->profileWithPlan());
        QCOMPARE(warned.count(), 1);
        const QStringList warnings = warned.first().first().toStringList();
        QCOMPARE(warnings.size(), 1);
        QVERIFY2(warnings.first().startsWith(QStringLiteral(
                     "plan entry 0 (scope 'blocks', gelu -> AtenGeluProvider) can never fire: 'blocks' (ModuleList)")),
                 qPrintable(warnings.first()));
        const auto [ok, message] = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY2(statusMessage(*window).contains(warnings.first()), qPrintable(statusMessage(*window)));

        QVERIFY(window->profileBaseline());
        QVERIFY(window->planWarnings().isEmpty());
        QVERIFY(waitForProfile(finished).first);
        QVERIFY(!statusMessage(*window).contains(QStringLiteral("can never fire")));
    }

    // Profiles with a plan count the calls its providers declined in the measured forwards (CpuGeluProvider declines
    // float64): the plan editor's Declined column shows them on the entry's row, disabled entries notwithstanding
    // (the profile runs the enabled ones only), and the finish message says so. A baseline runs no plan and leaves
    // the column as it was.
    void profileWithPlanShowsDeclinedCalls()
    {
        const auto window = openForProfiles(kFloat64Gelu);
        QVERIFY(window->session());
        QString error;
        QVERIFY2(window->setInputSpecs({QStringLiteral("float64[2,8]")}, &error), qPrintable(error));
        window->addPlanEntry(QString(), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        planDocument(*window)->setEntryEnabled(0, false);
        window->addPlanEntry(QStringLiteral("act"), QStringLiteral("gelu"), QStringLiteral("CpuGeluProvider"));
        const kforge::ui::PlanModel* model = planDocument(*window)->model();
        auto declinedCell = [model](int row) {
            return model->index(row, kforge::ui::PlanModel::DeclinedColumn).data().toString();
        };
        const QString reason = QStringLiteral("a dtype other than float32 and bfloat16");

        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        QVERIFY(window->profileWithPlan());
        auto [ok, message] = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        // 2 measured forwards, one gelu each; the warm-up's decline is not counted.
        QVERIFY2(message.contains(QStringLiteral("2 calls declined by CpuGeluProvider")) && message.contains(reason),
                 qPrintable(message));
        QVERIFY2(statusMessage(*window).contains(QStringLiteral("2 calls declined")),
                 qPrintable(statusMessage(*window)));
        QCOMPARE(declinedCell(1), QStringLiteral("2"));
        QCOMPARE(declinedCell(0), QString());
        QVERIFY2(
            model->index(1, kforge::ui::PlanModel::DeclinedColumn).data(Qt::ToolTipRole).toString().contains(reason),
            "the tooltip names the reason");
        QCOMPARE(profileResults(*window)->plan.run->declines.size(), size_t(1));
        // The plan's own row: the whole plan goes to the runtime, which skips the disabled entry 0.
        QCOMPARE(profileResults(*window)->plan.run->declines.front().entry, 1);

        QVERIFY(window->profileBaseline());
        std::tie(ok, message) = waitForProfile(finished);
        QVERIFY2(ok && !message.contains(QStringLiteral("declined")), qPrintable(message));
        QCOMPARE(declinedCell(1), QStringLiteral("2"));

        QVERIFY(window->profileCompare());
        std::tie(ok, message) = waitForProfile(finished);
        QVERIFY2(ok && message.contains(QStringLiteral("2 calls declined")), qPrintable(message));
        QCOMPARE(declinedCell(1), QStringLiteral("2"));
    }

    void timelineClickSelectsKernelRow()
    {
        const auto window = openTinyGpt();
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        QVERIFY(window->profileBaseline());
        QVERIFY(waitForProfile(finished).first);
        ProfilePage* page = profilePage(*window);
        const auto run = page->shownRun();
        const auto record =
            std::find_if(run->records.begin(), run->records.end(), [](const auto& r) { return r.function == "gelu"; });
        QVERIFY(record != run->records.end());
        const int index = int(record - run->records.begin());

        page->showSubView(QStringLiteral("timeline"));
        for (const auto [groupBy, expected] :
             {std::pair{kforge::GroupBy::Kernel, QString::fromStdString(record->name)},
              std::pair{kforge::GroupBy::Function, QStringLiteral("gelu")},
              std::pair{kforge::GroupBy::Module, QString::fromStdString(record->modulePath)}}) {
            page->groupByCombo()->setCurrentIndex(page->groupByCombo()->findData(int(groupBy)));
            page->filterEdit()->setText(QStringLiteral("no such kernel")); // the click clears what hides the row
            page->showSubView(QStringLiteral("timeline"));
            Q_EMIT page->timeline()->recordClicked(index);
            // The click shows the details below the timeline, which stays; their link shows the kernel table.
            auto* details = page->findChild<QLabel*>(QStringLiteral("timelineDetails"));
            QVERIFY(details && details->isVisible());
            QVERIFY2(details->text().contains(QString::fromStdString(record->name).toHtmlEscaped()) &&
                         details->text().contains(QStringLiteral("function gelu")) &&
                         details->text().contains(QStringLiteral("forward %1").arg(record->iteration + 1)),
                     qPrintable(details->text()));
            QCOMPARE(page->subView(QStringLiteral("timeline"))->isVisible(), true);
            Q_EMIT details->linkActivated(QStringLiteral("kernels"));
            QCOMPARE(page->subView(QStringLiteral("kernels"))->isVisible(), true);
            const QModelIndex current = page->kernelTable()->currentIndex();
            QVERIFY(current.isValid());
            QCOMPARE(current.data(KernelStatsModel::KeyRole).toString(), expected);
            QVERIFY(page->kernelTable()->selectionModel()->isRowSelected(current.row(), {}));
        }

        // Shift+drag over the whole first forward: the details say where its time went, by function and module.
        page->showSubView(QStringLiteral("timeline"));
        const auto [begin, end] = page->timeline()->forwardSpanNs(0);
        page->timeline()->setMeasuredSpan(begin, end);
        auto* details = page->findChild<QLabel*>(QStringLiteral("timelineDetails"));
        QVERIFY2(details->text().contains(QStringLiteral(" recorded: functions ")) &&
                     details->text().contains(QStringLiteral("; modules ")) &&
                     !details->text().contains(QStringLiteral("nothing recorded")),
                 qPrintable(details->text()));
        page->timeline()->clearMeasuredSpan();
        QVERIFY2(details->text().startsWith(QStringLiteral("Click an item")), qPrintable(details->text()));
    }

    // The progress beside the bar names the action and its stage: a compare's rounds (the first with the warm-up),
    // a benchmark's rounds; it said "baseline: 5/6 forwards" for every action.
    void progressNamesTheActionAndStage()
    {
        const auto window = openTinyGpt();
        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        auto* text = profilePage(*window)->findChild<QLabel*>(QStringLiteral("profileProgressText"));
        QVERIFY(text);
        QStringList seen;
        connect(profileController(*window), &ProfileController::progress, text, [&] { seen << text->text(); });
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileCompare->trigger();
        auto [ok, message] = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY2(seen.contains(QStringLiteral("Compare: round 1 of 2, with the warm-up")), qPrintable(seen.join('|')));
        QVERIFY2(seen.contains(QStringLiteral("Compare: round 2 of 2")), qPrintable(seen.join('|')));
        QVERIFY2(seen.filter(QStringLiteral("Baseline")).isEmpty(), qPrintable(seen.join('|')));
        QVERIFY(!text->isVisible());
        // The comparison's number columns are wide enough for their headers ("Baseline (µs, median)" was cut).
        auto* table = profilePage(*window)->findChild<QTableView*>(QStringLiteral("comparisonTable"));
        QVERIFY(table);
        for (int column : {ComparisonModel::BaselineColumn, ComparisonModel::PlanColumn})
            QVERIFY2(table->horizontalHeader()->sectionSize(column) >=
                         table->horizontalHeader()->sectionSizeHint(column),
                     qPrintable(QString::number(column)));

        seen.clear();
        connect(benchmarkController(*window), &kforge::ui::BenchmarkController::progress, text,
                [&] { seen << text->text(); });
        window->actions().profileBenchmark->trigger();
        std::tie(ok, message) = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY2(seen.contains(QStringLiteral("Benchmark: round 2 of 2")), qPrintable(seen.join('|')));
    }

    // Results as they come: the first measured forward's results are on the page while the others run (it said "No
    // profile yet" to the end), marked as a run in progress; a new run leaves the previous one marked as replaced
    // until its own first results; the finished run replaces both.
    void resultsShowFromTheFirstMeasuredForward()
    {
        const auto window = openTinyGpt();
        ProfilePage* page = profilePage(*window);
        ProfileController* controller = profileController(*window);
        page->iterationsBox()->setValue(3);
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        struct Seen {
            bool running;
            int iterations;
            bool inProgress;
            QString header;
            int rows;
        };
        QList<Seen> seen;
        connect(controller, &ProfileController::resultsChanged, page, [&] {
            const auto run = controller->source()->results()->baseline.run;
            seen.append({controller->isRunning(), run ? run->iterations : -1, run && run->inProgress,
                         page->headerText(), page->statsModel()->rowCount()});
        });
        window->actions().profileBaseline->trigger();
        QVERIFY2(page->headerText().startsWith(QStringLiteral("No profile yet")), qPrintable(page->headerText()));
        auto [ok, message] = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY2(seen.size() >= 2, qPrintable(QString::number(seen.size())));
        const Seen& first = seen.first();
        QVERIFY(first.running);
        QCOMPARE(first.iterations, 1);
        QVERIFY(first.inProgress);
        QVERIFY2(first.header.startsWith(QStringLiteral("Measuring: 1 iteration")), qPrintable(first.header));
        QVERIFY2(first.rows > 3, "the kernel table shows the first forward's ops");
        const Seen& last = seen.last();
        QVERIFY(!last.running);
        QCOMPARE(last.iterations, 3);
        QVERIFY(!last.inProgress);
        QVERIFY2(!last.header.contains(QStringLiteral("Measuring")), qPrintable(last.header));

        // A second run: the finished one is marked as replaced while the new one warms up.
        const auto previous = controller->source()->results()->baseline.run;
        window->actions().profileBaseline->trigger();
        QCOMPARE(controller->source()->results()->baseline.run, previous);
        QVERIFY2(page->headerText().startsWith(QStringLiteral("Previous run: a new one is running")),
                 qPrintable(page->headerText()));
        std::tie(ok, message) = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY(controller->source()->results()->baseline.run != previous);
        QVERIFY2(!page->headerText().contains(QStringLiteral("Previous run")), qPrintable(page->headerText()));
    }

    // Grouping by op and input shapes (torch.profiler's group_by_input_shape): with Record shapes ticked (a setting
    // kept), the kernel table splits tiny-gpt's linears by their shapes; a run without shapes groups ops by name.
    void groupByOpAndInputShapes()
    {
        const auto window = openTinyGpt();
        ProfilePage* page = profilePage(*window);
        QCheckBox* shapes = page->recordShapesBox();
        QVERIFY(shapes);
        QVERIFY(!shapes->isChecked());
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        page->groupByCombo()->setCurrentIndex(page->groupByCombo()->findData(int(kforge::GroupBy::OpInputShapes)));
        QCOMPARE(page->statsModel()->groupBy(), kforge::GroupBy::OpInputShapes);
        // Not made with a run that recorded no shapes: grouped off the UI thread, the header says so meanwhile.
        QVERIFY(page->computingTable());
        QVERIFY2(page->headerText().contains(QStringLiteral("grouping the kernel table")),
                 qPrintable(page->headerText()));
        QVERIFY(waitForKernelTable(*page));
        QVERIFY(page->statsModel()->run()->records.size() > 0);
        QVERIFY(!page->headerText().contains(QStringLiteral("grouping the kernel table")));
        QVERIFY2(keys(*page->statsModel()).contains(QStringLiteral("aten::linear")),
                 qPrintable(keys(*page->statsModel()).join('|')));

        page->setPersistent(true); // test windows write no settings; this one keeps the box's (test settings)
        shapes->setChecked(true);
        page->setPersistent(false);
        QCOMPARE(QSettings().value(QStringLiteral("profile/recordShapes")).toBool(), true);
        QVERIFY2(profilePage(*makeWindow())->recordShapesBox()->isChecked(), "the next window keeps the setting");
        QSettings().remove(QStringLiteral("profile/recordShapes"));
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        const QStringList shaped = keys(*page->statsModel());
        QVERIFY2(shaped.contains(QStringLiteral("aten::linear [[1, 16, 64], [192, 64], [192]]")),
                 qPrintable(shaped.join('|')));
        QVERIFY2(shaped.contains(QStringLiteral("aten::linear [[1, 16, 256], [64, 256], [64]]")),
                 qPrintable(shaped.join('|')));
        QVERIFY(!shaped.contains(QStringLiteral("aten::linear")));
    }

    void cancelRightAway()
    {
        const auto window = openTinyGpt();
        ProfileController* controller = profileController(*window);
        // A warm-up far longer than the moment between start and cancel: a loaded machine once let three warm-up
        // forwards and a measured one through before the cancel came (the run was then kept, rightly).
        controller->setWarmupIterations(100'000);
        QSignalSpy outcome(controller, &ProfileController::finished);
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        QVERIFY(window->profileBaseline());
        window->actions().cancelProfile->trigger();
        const auto [ok, message] = waitForProfile(finished);
        QVERIFY(!ok);
        QCOMPARE(outcome.count(), 1);
        QCOMPARE(outcome.first().at(0).value<ProfileController::Outcome>(), ProfileController::Outcome::Cancelled);
        QVERIFY2(message.contains(QStringLiteral("cancelled")), qPrintable(message));
        QVERIFY(!controller->isRunning());
        QVERIFY(!runController(*window)->breakpointsSuspended());
        // Cancelled in the warm-up: nothing measured, nothing kept.
        QVERIFY(!controller->source()->results()->baseline.run);
        QCOMPARE(profilePage(*window)->statsModel()->rowCount(), 0);

        // The session is free again: a forward runs.
        QSignalSpy runFinished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        QVERIFY(QTest::qWaitFor([&] { return runFinished.count() > 0; }, kTimeoutMs));
        QVERIFY2(runFinished.first().at(0).toBool(), qPrintable(runFinished.first().at(1).toString()));
    }

    // A forward without a plan counts each call in the module it ran in (the Calls column showed them all at the
    // root: module entries were recorded for a plan's scopes only).
    void callsPerModuleWithoutAPlan()
    {
        const auto window = openTinyGpt();
        QSignalSpy runFinished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        QVERIFY(QTest::qWaitFor([&] { return runFinished.count() > 0; }, kTimeoutMs));
        QVERIFY2(runFinished.first().at(0).toBool(), qPrintable(runFinished.first().at(1).toString()));
        using kforge::ui::ModuleTreeModel;
        auto* tree = part<ModuleTreeModel>(*window, "moduleModel");
        const auto calls = [&](const char* path) {
            return tree->indexOfPath(QString::fromLatin1(path), ModuleTreeModel::CallsColumn)
                .data(ModuleTreeModel::SortRole)
                .toLongLong();
        };
        QTRY_VERIFY_WITH_TIMEOUT(calls("blocks.0.mlp") > 0, 5000); // gelu, and fc's and proj's linear below it
        QVERIFY(calls("blocks.0.mlp.fc") > 0);
        QVERIFY(calls("embed") > 0);
        QVERIFY(calls("") > calls("blocks.0")); // the root's subtree holds every call
    }

    // Profile › Benchmark: whole forwards without and with the plan, no profiler; the result shows beside the
    // comparison, and the comparison tab comes forward.
    void benchmarkThroughAction()
    {
        const auto window = openTinyGpt();
        QVERIFY(!window->actions().profileBenchmark->isEnabled()); // no plan entry yet
        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        QVERIFY(window->actions().profileBenchmark->isEnabled());
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBenchmark->trigger();
        const auto [ok, message] = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY2(message.startsWith(QStringLiteral("Benchmark:")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("outputs agree")), qPrintable(message));

        // Measured with the Profile page's warm-up and iterations (as rounds): one MeasureSettings for all three.
        const auto& result = benchmarkController(*window)->result();
        QVERIFY(result);
        QCOMPARE(result->baseline.forwards, 2);
        QCOMPARE(result->plan.forwards, 2);
        QVERIFY(result->speed.low <= result->speed.high);
        QVERIFY2(message.contains(QStringLiteral("not judged (too few rounds)")), qPrintable(message));
        ProfilePage* page = profilePage(*window);
        auto* summary = page->findChild<QLabel*>(QStringLiteral("benchmarkSummary"));
        QVERIFY(summary);
        QCOMPARE(summary->text(), message);
        auto* tabs = page->findChild<QTabWidget*>();
        QVERIFY(tabs);
        QCOMPARE(tabs->currentWidget(), page->subView(QStringLiteral("comparison")));

        // A comparison of the same plan shows its profiled times and leaves the whole forward's verdict to the
        // benchmark: one verdict per plan on the tab.
        auto* comparisonSummary = page->findChild<QLabel*>(QStringLiteral("comparisonSummary"));
        QVERIFY(comparisonSummary);
        window->actions().profileCompare->trigger();
        auto [compared, compareMessage] = waitForProfile(finished);
        QVERIFY2(compared, qPrintable(compareMessage));
        QVERIFY2(comparisonSummary->text().contains(QStringLiteral("the whole forward's verdict is the benchmark's")),
                 qPrintable(comparisonSummary->text()));
        QCOMPARE(summary->text(), message);

        // Another plan compared: the benchmark's line says it measured an earlier plan.
        window->addPlanEntry(QStringLiteral("blocks.1.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        window->actions().profileCompare->trigger();
        std::tie(compared, compareMessage) = waitForProfile(finished);
        QVERIFY2(compared, qPrintable(compareMessage));
        QVERIFY2(summary->text().startsWith(QStringLiteral("Of an earlier plan")), qPrintable(summary->text()));
        QVERIFY2(!comparisonSummary->text().contains(QStringLiteral("benchmark's")),
                 qPrintable(comparisonSummary->text()));
    }

    // Profile › Verify Plan: the plan's outputs against the baseline's. A provider that adds noise in blocks.1 fails,
    // and the module tree selects the module whose output diverged while its inputs agreed; ATen's own gelu passes.
    void verifyThroughAction()
    {
        const auto window = openTinyGpt();
        QVERIFY(!window->actions().profileVerify->isEnabled()); // no plan entry yet
        window->addPlanEntry(QStringLiteral("blocks.1"), QStringLiteral("gelu"), QStringLiteral("SeededNoise_gelu"));
        QVERIFY(window->actions().profileVerify->isEnabled());
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileVerify->trigger();
        auto [ok, message] = waitForProfile(finished);
        QVERIFY2(message.startsWith(QStringLiteral("Verify: FAIL")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("blocks.1.mlp")), qPrintable(message));
        auto* verifier = verifyController(*window);
        const auto& report = verifier->report();
        QVERIFY(report && report->divergence);
        QCOMPARE(QString::fromStdString(report->divergence->module), QStringLiteral("blocks.1.mlp"));
        auto* summary = profilePage(*window)->findChild<QLabel*>(QStringLiteral("verifySummary"));
        QVERIFY(summary);
        QCOMPARE(summary->text(), message);
        auto* modulePage = part<kforge::ui::ModuleTreePage>(*window, "modulePage");
        QCOMPARE(modulePage->currentPath(), QStringLiteral("blocks.1.mlp"));
        // The module tree's Error column, coloured by the divergence: strongest where it is made, agreeing modules
        // plain; the plan editor gives the entry its verdict.
        auto* tree = qobject_cast<kforge::ui::ModuleTreeModel*>(modulePage->filterModel()->sourceModel());
        QVERIFY(tree);
        QVERIFY(!modulePage->view()->isColumnHidden(kforge::ui::ModuleTreeModel::ErrorColumn));
        const auto errorCell = [&](const char* path) {
            return tree->indexOfPath(QString::fromLatin1(path), kforge::ui::ModuleTreeModel::ErrorColumn);
        };
        QVERIFY2(errorCell("blocks.1.mlp").data().toString().startsWith(QStringLiteral("first divergence: ")),
                 qPrintable(errorCell("blocks.1.mlp").data().toString()));
        QCOMPARE(errorCell("blocks.1.mlp").data(Qt::BackgroundRole).value<QBrush>().color(),
                 kforge::ui::semanticColor(kforge::ui::Semantic::Error));
        QCOMPARE(errorCell("blocks.0").data().toString(), QStringLiteral("agrees"));
        QVERIFY(!errorCell("blocks.0").data(Qt::BackgroundRole).isValid());
        QVERIFY2(errorCell("blocks.1").data().toString().startsWith(QStringLiteral("diverges inside: ")),
                 qPrintable(errorCell("blocks.1").data().toString()));
        QVERIFY2(errorCell("ln_f").data().toString().startsWith(QStringLiteral("diverged: ")),
                 qPrintable(errorCell("ln_f").data().toString())); // after blocks.1: its inputs diverged already
        kforge::ui::PlanModel* planRows = planDocument(*window)->model();
        const QModelIndex verdict = planRows->index(0, kforge::ui::PlanModel::VerifiedColumn);
        QCOMPARE(verdict.data().toString(),
                 QStringLiteral("in effect where the outputs diverge first: blocks.1.mlp (call 1)"));

        planDocument(*window)->removeEntry(0);
        QVERIFY(verdict.data().toString().isEmpty()); // the plan changed: the verdicts were of the old one
        window->addPlanEntry(QStringLiteral("blocks.1"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        window->actions().profileVerify->trigger();
        std::tie(ok, message) = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY2(message.startsWith(QStringLiteral("Verify: the plan keeps")), qPrintable(message));
        QVERIFY(!verifier->report()->divergence);
        QCOMPARE(planRows->index(0, kforge::ui::PlanModel::VerifiedColumn).data().toString(),
                 QStringLiteral("outputs agree"));
        QCOMPARE(errorCell("blocks.1.mlp").data().toString(), QStringLiteral("agrees")); // compared although passing
    }

    // A plan measured on another machine (its recorded ISA faked): the banner above the plan editor names each
    // flagged entry and why; Re-validate checks them on the model here and disables the wrong one (undoable).
    void revalidatesAPlanFromAnotherMachine()
    {
        const auto window = openTinyGpt();
        kforge::Plan plan;
        plan.entries.push_back(kforge::parseProvideSpec("blocks.1:gelu:SeededNoise_gelu"));
        plan.entries.push_back(kforge::parseProvideSpec("blocks.0:gelu:SeededExact_gelu"));
        kforge::stampProvenance(plan, "cpu", "kforge optimize");
        plan.provenance->machine.cpuIsa = "AVX512-elsewhere";
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("elsewhere.kfplan.json"));
        kforge::savePlan(plan, path.toStdString());
        QVERIFY(window->openPlan(path));

        auto* banner = part<kforge::ui::ProvenanceBanner>(*window, "provenanceBanner");
        QVERIFY(banner->isVisibleTo(window.get()));
        QVERIFY2(banner->text().contains(QStringLiteral("2 entries need re-validating")), qPrintable(banner->text()));
        QVERIFY2(banner->text().contains(QStringLiteral("measured with the CPU ISA level AVX512-elsewhere")),
                 qPrintable(banner->text()));

        banner->revalidateButton()->click();
        QVERIFY(QTest::qWaitFor([&] { return !banner->isVisibleTo(window.get()); }, kTimeoutMs));
        const kforge::Plan& after = planDocument(*window)->plan();
        QVERIFY2(!after.entries[0].enabled, after.entries[0].note.c_str());
        QVERIFY(after.entries[0].note.find("incorrect here") != std::string::npos);
        QVERIFY2(after.entries[1].enabled, after.entries[1].note.c_str());
        QVERIFY(statusMessage(*window).contains(QStringLiteral("1 kept, 1 disabled")));
        // The plan editor's Measured column: what re-validation found here beside what the plan recorded.
        const QAbstractItemModel* planRows = planDocument(*window)->model();
        const QString disabled = planRows->index(0, kforge::ui::PlanModel::MeasuredColumn).data().toString();
        QCOMPARE(disabled, QStringLiteral("disabled here"));
        const QModelIndex kept = planRows->index(1, kforge::ui::PlanModel::MeasuredColumn);
        QCOMPARE(kept.data().toString(), QStringLiteral("correct here")); // no recorded speedup: correctness only
        QVERIFY2(kept.data(Qt::ToolTipRole).toString().contains(QStringLiteral("AVX512-elsewhere")),
                 qPrintable(kept.data(Qt::ToolTipRole).toString()));
        planDocument(*window)->undoStack()->undo();
        QVERIFY(
            planRows->index(1, kforge::ui::PlanModel::MeasuredColumn).data().toString().isEmpty()); // of the old plan
        QVERIFY(planDocument(*window)->plan().entries[0].enabled);                                  // one undoable step

        QVERIFY(window->openPlan(path)); // a file opened again is asked about again; Accept keeps it as it is
        QVERIFY(banner->isVisibleTo(window.get()));
        banner->acceptButton()->click();
        QVERIFY(!banner->isVisibleTo(window.get()));
        QVERIFY(planDocument(*window)->plan().entries[0].enabled);
    }

    // A plan saved by the desktop records the model it was made for, as `kforge plan new --model` does, and opened
    // with another model it says so above the plan editor before it applies.
    void aSavedPlanRecordsItsModelAndAnotherModelSaysSo()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("tiny.kfplan.json"));
        {
            const auto window = openTinyGpt();
            window->addPlanEntry(QString(), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
            QVERIFY(window->savePlanAs(path));
        }
        const kforge::Plan saved = kforge::readPlan(path.toStdString());
        QCOMPARE(saved.modelName, std::string("tiny-gpt"));

        const auto other = openForProfiles(QStringLiteral("builtin:convnet"));
        QVERIFY(other->openPlan(path));
        auto* banner = part<kforge::ui::ProvenanceBanner>(*other, "provenanceBanner");
        QVERIFY(banner->isVisibleTo(other.get()));
        QVERIFY2(banner->text().contains(QStringLiteral("The plan was made for model 'tiny-gpt'")),
                 qPrintable(banner->text()));
        banner->acceptButton()->click(); // used anyway, as the user chose
        QVERIFY(!banner->isVisibleTo(other.get()));
    }

    // After a profile the module tree shows each module's time per forward: total, self, share (the root's is the
    // whole forward), the top function; a comparison adds the choice of run and the Δ column.
    void moduleTreeShowsTimeAfterAProfile()
    {
        using kforge::ui::ModuleTreeModel;
        using kforge::ui::ModuleTreePage;
        const auto window = openTinyGpt();
        ModuleTreeModel* model = part<kforge::ui::ModuleTreeModel>(*window, "moduleModel");
        ModuleTreePage* modules = part<kforge::ui::ModuleTreePage>(*window, "modulePage");
        QVERIFY(modules->view()->isColumnHidden(ModuleTreeModel::TimeColumn)); // nothing profiled yet
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);

        QVERIFY(!modules->view()->isColumnHidden(ModuleTreeModel::TimeColumn));
        QVERIFY(modules->view()->isColumnHidden(ModuleTreeModel::DeltaColumn));
        QVERIFY(!modules->timeRunCombo()->isVisibleTo(modules));
        const QModelIndex root = model->indexOfPath(QString(), ModuleTreeModel::ShareColumn);
        QCOMPARE(root.data().toString(), QStringLiteral("100.0 %"));
        QCOMPARE(root.data(ModuleTreeModel::ShareRole).toDouble(), 1.0);
        const double rootUs =
            model->indexOfPath(QString(), ModuleTreeModel::TimeColumn).data(ModuleTreeModel::SortRole).toDouble();
        const QModelIndex block = model->indexOfPath(QStringLiteral("blocks.0"), ModuleTreeModel::TimeColumn);
        const double blockUs = block.data(ModuleTreeModel::SortRole).toDouble();
        QVERIFY2(blockUs > 0 && blockUs < rootUs, qPrintable(QStringLiteral("%1 of %2").arg(blockUs).arg(rootUs)));
        QVERIFY(!block.data().toString().isEmpty());
        QVERIFY(!model->indexOfPath(QString(), ModuleTreeModel::TopFunctionColumn).data().toString().isEmpty());

        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        window->actions().profileCompare->trigger();
        QVERIFY(waitForProfile(finished).first);
        QVERIFY(modules->timeRunCombo()->isVisibleTo(modules));
        QCOMPARE(modules->timeRun(), ModuleTreePage::TimeRun::Plan);
        QVERIFY(!modules->view()->isColumnHidden(ModuleTreeModel::DeltaColumn));
        QVERIFY(model->indexOfPath(QString(), ModuleTreeModel::DeltaColumn)
                    .data()
                    .toString()
                    .endsWith(QStringLiteral("%")));
        modules->timeRunCombo()->setCurrentIndex(
            modules->timeRunCombo()->findData(int(ModuleTreePage::TimeRun::Baseline)));
        QVERIFY(modules->view()->isColumnHidden(ModuleTreeModel::DeltaColumn));
        QVERIFY(model->indexOfPath(QString(), ModuleTreeModel::DeltaColumn).data().toString().isEmpty());
    }

    // Issue 69: with Record memory ticked (a setting kept), the module tree shows where the memory went: tiny-gpt's
    // qkv linear allocates its [1, 16, 192] float32 output (12 KiB) per forward, the root holds every module's bytes
    // and the peak; a comparison adds the peak's Δ (an exact provider changes nothing). Without it the columns hide.
    void moduleTreeShowsMemoryOfAProfileThatRecordedIt()
    {
        using kforge::ui::ModuleTreeModel;
        using kforge::ui::ModuleTreePage;
        const auto window = openTinyGpt();
        ProfilePage* page = profilePage(*window);
        ModuleTreeModel* model = part<kforge::ui::ModuleTreeModel>(*window, "moduleModel");
        ModuleTreePage* modules = part<kforge::ui::ModuleTreePage>(*window, "modulePage");
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        QVERIFY(!page->timeline()->laneLabels().contains(QStringLiteral("Memory · cpu")));
        QVERIFY(!modules->view()->isColumnHidden(ModuleTreeModel::TimeColumn));
        QVERIFY(modules->view()->isColumnHidden(ModuleTreeModel::AllocatedColumn));
        QVERIFY(modules->view()->isColumnHidden(ModuleTreeModel::PeakColumn));
        QVERIFY(modules->view()->isColumnHidden(ModuleTreeModel::LiveAtExitColumn));

        QCheckBox* memory = page->recordMemoryBox();
        QVERIFY(memory && !memory->isChecked());
        page->setPersistent(true); // test windows write no settings; this one keeps the box's (test settings)
        memory->setChecked(true);
        page->setPersistent(false);
        QVERIFY2(profilePage(*makeWindow())->recordMemoryBox()->isChecked(), "the next window keeps the setting");
        QSettings().remove(QStringLiteral("profile/recordMemory"));
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        QVERIFY(!modules->view()->isColumnHidden(ModuleTreeModel::AllocatedColumn));
        QVERIFY(!modules->view()->isColumnHidden(ModuleTreeModel::PeakColumn));
        QVERIFY(modules->view()->isColumnHidden(ModuleTreeModel::PeakDeltaColumn));
        const auto bytes = [&](const char* path, int column) {
            return model->indexOfPath(QString::fromLatin1(path), column).data(ModuleTreeModel::SortRole).toDouble();
        };
        QCOMPARE(bytes("blocks.0.attn.qkv", ModuleTreeModel::AllocatedColumn), 1 * 16 * 192 * 4.0);
        QVERIFY(bytes("", ModuleTreeModel::AllocatedColumn) >= bytes("blocks.0", ModuleTreeModel::AllocatedColumn) +
                                                                   bytes("blocks.1", ModuleTreeModel::AllocatedColumn));
        QVERIFY(bytes("", ModuleTreeModel::PeakColumn) > 0);
        // What a block left alive when it returned: its [1, 16, 64] float32 result; `blocks`, a ModuleList never
        // called itself, has no exit to show.
        QVERIFY(!modules->view()->isColumnHidden(ModuleTreeModel::LiveAtExitColumn));
        QCOMPARE(bytes("blocks.0", ModuleTreeModel::LiveAtExitColumn), 1 * 16 * 64 * 4.0);
        QVERIFY(model->indexOfPath(QStringLiteral("blocks"), ModuleTreeModel::LiveAtExitColumn)
                    .data()
                    .toString()
                    .isEmpty());
        const QModelIndex qkv =
            model->indexOfPath(QStringLiteral("blocks.0.attn.qkv"), ModuleTreeModel::AllocatedColumn);
        QVERIFY2(!qkv.data().toString().isEmpty(), "the bytes are shown");
        QVERIFY2(qkv.data(Qt::ToolTipRole).toString().contains(QStringLiteral("1 allocation(s)")),
                 qPrintable(qkv.data(Qt::ToolTipRole).toString()));

        // The flame graph's Memory mode: widths are the bytes allocated per forward, the root holds them all.
        auto* flame = part<kforge::ui::FlameGraphPage>(*window, "flameGraphPage");
        QVERIFY(flame->memoryBox()->isVisibleTo(flame));
        flame->memoryBox()->setChecked(true);
        QVERIFY(flame->view()->isMemory());
        QCOMPARE(flame->view()->frames().front().us, bytes("", ModuleTreeModel::AllocatedColumn));
        QVERIFY2(flame->view()->frameToolTip(0).contains(QStringLiteral("allocated per forward")),
                 qPrintable(flame->view()->frameToolTip(0)));
        flame->memoryBox()->setChecked(false);

        // The timeline's memory lane: the run's live bytes, the peak the module tree's root shows.
        QVERIFY2(page->timeline()->laneLabels().contains(QStringLiteral("Memory · cpu")),
                 qPrintable(page->timeline()->laneLabels().join(QStringLiteral(", "))));

        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        window->actions().profileCompare->trigger();
        QVERIFY(waitForProfile(finished).first);
        QVERIFY(!modules->view()->isColumnHidden(ModuleTreeModel::PeakDeltaColumn));
        QCOMPARE(bytes("blocks.0.attn.qkv", ModuleTreeModel::PeakDeltaColumn), 0.0);
        memory->setChecked(false);
    }

    // Issue 69: the Memory tab shows where the memory of the run shown went, the engine's figures exactly
    // (kforge::summarizeMemory of the same run): the forward's peak and where it was reached, what was alive at it,
    // each function and provider, sortable by number. tiny-gpt's gelu allocates its [1, 16, 256] float32 output
    // (16 KiB) in each of its two calls; TestWorkspaceGeluProvider in blocks.0.mlp allocates an 8 MiB workspace beside
    // it, so its row holds 8 MiB + 16 KiB and a Δ of exactly +8 MiB against the baseline's gelu per call, while the
    // original's call in blocks.1 changes nothing; the Δ column is the plan's only. Without memory, a placeholder says
    // how to record it.
    void memoryViewShowsTheEnginesFiguresAndThePlansChange()
    {
        using kforge::ui::FunctionMemoryModel;
        using kforge::ui::MemoryPage;
        const auto window = openTinyGpt();
        ProfilePage* page = profilePage(*window);
        QVERIFY(window->showView(QStringLiteral("memory")));
        auto* memory = qobject_cast<MemoryPage*>(window->viewNamed(QStringLiteral("memory")));
        QVERIFY(memory && memory->isVisible());
        QCOMPARE(page->subView(QStringLiteral("memory")), memory);
        QVERIFY(memory->placeholder()->isVisibleTo(memory));
        QVERIFY(!memory->tables()->isVisibleTo(memory));

        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        QVERIFY(memory->placeholder()->isVisibleTo(memory));
        QVERIFY(!memory->tables()->isVisibleTo(memory));
        const QString placeholder = memory->placeholder()->text();
        QVERIFY2(placeholder.contains(QStringLiteral("recorded no memory")) &&
                     placeholder.contains(QStringLiteral("Record memory")),
                 qPrintable(placeholder));
        QCOMPARE(memory->holdersModel()->rowCount(), 0);
        QCOMPARE(memory->functionsModel()->rowCount(), 0);

        page->recordMemoryBox()->setChecked(true);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        const kforge::MemorySummary baseline = kforge::summarizeMemory(*profileResults(*window)->baseline.run);
        QVERIFY(baseline.recorded && baseline.peakBytes > 0 && !baseline.aliveAtPeak.empty());
        QVERIFY(!memory->placeholder()->isVisibleTo(memory));
        QVERIFY(memory->tables()->isVisibleTo(memory));
        const QString summary = memory->summaryLabel()->text();
        QVERIFY2(summary.contains(bytesText(double(baseline.peakBytes))) &&
                     summary.contains(kforge::ui::formatModulePath(baseline.peakModule).toHtmlEscaped()),
                 qPrintable(summary));
        const QString baselineMismatch = memoryTablesMismatch(*memory, baseline);
        QVERIFY2(baselineMismatch.isEmpty(), qPrintable(baselineMismatch));
        const FunctionMemoryModel& functions = *memory->functionsModel();
        QVERIFY(!functions.hasDelta());
        QCOMPARE(functions.columnCount(), int(FunctionMemoryModel::DeltaColumn));
        QVERIFY2(!memory->driverSection()->isVisibleTo(memory), "a CPU run has no driver records");
        QCOMPARE(memory->driverModel()->rowCount(), 0);
        constexpr double geluOutput = 1 * 16 * 256 * 4;
        const int gelu = functionMemoryRow(functions, QStringLiteral("gelu"), QStringLiteral("original"));
        QVERIFY(gelu >= 0);
        QCOMPARE(memoryNumber(functions, gelu, FunctionMemoryModel::CallsColumn), 2.0);
        QCOMPARE(memoryNumber(functions, gelu, FunctionMemoryModel::AllocatedColumn), 2 * geluOutput);
        QCOMPARE(memoryNumber(functions, gelu, FunctionMemoryModel::PeakInCallColumn), geluOutput);
        // Sorted by number, not by text ("16.0 KiB" after "8.00 MiB"), both ways; the largest first to begin with.
        QTableView* functionsTable = memory->functionsTable();
        QCOMPARE(functionsTable->horizontalHeader()->sortIndicatorSection(), int(FunctionMemoryModel::AllocatedColumn));
        for (int column : {FunctionMemoryModel::CallsColumn, FunctionMemoryModel::AllocatedColumn,
                           FunctionMemoryModel::AllocationsColumn, FunctionMemoryModel::PeakInCallColumn})
            for (Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder})
                QVERIFY2(sortsByNumber(*functionsTable, column, order), qPrintable(QString::number(column)));
        QVERIFY(sortsByNumber(*memory->holdersTable(), kforge::ui::PeakHoldersModel::BytesColumn, Qt::AscendingOrder));
        QCOMPARE(functionsTable->model()->index(0, 0).data(Qt::TextAlignmentRole).toInt() & Qt::AlignLeft,
                 int(Qt::AlignLeft));
        QCOMPARE(functionsTable->model()
                         ->index(0, FunctionMemoryModel::AllocatedColumn)
                         .data(Qt::TextAlignmentRole)
                         .toInt() &
                     Qt::AlignRight,
                 int(Qt::AlignRight));

        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("TestWorkspaceGeluProvider"));
        window->actions().profileWithPlan->trigger();
        QVERIFY(waitForProfile(finished).first);
        QCOMPARE(page->shown(), ProfilePage::Shown::Plan);
        const auto results = profileResults(*window);
        QVERIFY(results->both());
        const kforge::MemorySummary plan = kforge::summarizeMemory(*results->plan.run);
        const QString planMismatch = memoryTablesMismatch(*memory, plan);
        QVERIFY2(planMismatch.isEmpty(), qPrintable(planMismatch));
        QVERIFY(functions.hasDelta());
        QCOMPARE(functions.columnCount(), int(FunctionMemoryModel::ColumnCount));
        constexpr double workspace = 8 << 20;
        const int served =
            functionMemoryRow(functions, QStringLiteral("gelu"), QStringLiteral("TestWorkspaceGeluProvider"));
        QVERIFY(served >= 0);
        QCOMPARE(memoryNumber(functions, served, FunctionMemoryModel::CallsColumn), 1.0);
        QCOMPARE(memoryNumber(functions, served, FunctionMemoryModel::AllocatedColumn), workspace + geluOutput);
        QCOMPARE(memoryNumber(functions, served, FunctionMemoryModel::AllocationsColumn), 2.0);
        QCOMPARE(memoryNumber(functions, served, FunctionMemoryModel::PeakInCallColumn), workspace + geluOutput);
        QCOMPARE(memoryNumber(functions, served, FunctionMemoryModel::DeltaColumn), workspace);
        QCOMPARE(memoryText(functions, served, FunctionMemoryModel::DeltaColumn),
                 QStringLiteral("+") + bytesText(workspace));
        const int original = functionMemoryRow(functions, QStringLiteral("gelu"), QStringLiteral("original"));
        QVERIFY(original >= 0);
        QCOMPARE(memoryNumber(functions, original, FunctionMemoryModel::CallsColumn), 1.0);
        QCOMPARE(memoryNumber(functions, original, FunctionMemoryModel::DeltaColumn), 0.0);
        QVERIFY(sortsByNumber(*functionsTable, FunctionMemoryModel::DeltaColumn, Qt::DescendingOrder));
        QCOMPARE(memoryText(*functionsTable->model(), 0, FunctionMemoryModel::ProviderColumn),
                 QStringLiteral("TestWorkspaceGeluProvider"));
        QVERIFY2(memory->summaryLabel()->text().contains(bytesText(double(plan.peakBytes))) &&
                     memory->summaryLabel()->text().contains(QStringLiteral("baseline")),
                 qPrintable(memory->summaryLabel()->text()));

        // The baseline shown: its own figures, no Δ.
        page->setShown(ProfilePage::Shown::Baseline);
        QVERIFY(!functions.hasDelta());
        QCOMPARE(functions.columnCount(), int(FunctionMemoryModel::DeltaColumn));
        const QString againMismatch = memoryTablesMismatch(*memory, baseline);
        QVERIFY2(againMismatch.isEmpty(), qPrintable(againMismatch));
        page->recordMemoryBox()->setChecked(false);
    }

    // A CUDA run's driver-level allocations (MemorySummary::driverModules) get a table of their own, headed by their
    // peak; a CPU run's has none. A summary made by hand, as no GPU is needed for the view.
    void memoryViewShowsTheDriversRecordsOfACudaRun()
    {
        using kforge::ui::DriverMemoryModel;
        kforge::MemorySummary memory;
        memory.recorded = true;
        memory.peakBytes = 3 << 20;
        memory.peakModule = "encoder";
        memory.driverModules = {{"", 24 << 20, 4 << 20, 3, 20 << 20}, {"encoder.layers.0", 2 << 20, 0, 1.5, 2 << 20}};
        memory.driverPeakBytes = 20 << 20;
        auto views = std::make_shared<kforge::ui::RunViews>();
        views->memory = memory;
        auto results = std::make_shared<kforge::ui::ProfileResults>();
        results->baseline.run = std::make_shared<kforge::ProfileRun>();
        results->baseline.views = views;

        kforge::ui::MemoryPage page;
        page.setResults(results, false);
        QVERIFY(page.tables()->isVisibleTo(&page));
        QVERIFY(page.driverSection()->isVisibleTo(&page));
        QVERIFY2(page.driverHeading()->text().contains(bytesText(20 << 20)), qPrintable(page.driverHeading()->text()));
        const DriverMemoryModel& driver = *page.driverModel();
        QCOMPARE(driver.rowCount(), 2);
        for (int row = 0; row < 2; ++row) {
            const kforge::ModuleMemory& m = memory.driverModules[size_t(row)];
            QCOMPARE(memoryText(driver, row, DriverMemoryModel::ModuleColumn), kforge::ui::formatModulePath(m.path));
            QCOMPARE(memoryNumber(driver, row, DriverMemoryModel::AllocatedColumn), m.allocatedBytes);
            QCOMPARE(memoryText(driver, row, DriverMemoryModel::AllocatedColumn), bytesText(m.allocatedBytes));
            QCOMPARE(memoryNumber(driver, row, DriverMemoryModel::FreedColumn), m.freedBytes);
            QCOMPARE(memoryNumber(driver, row, DriverMemoryModel::AllocationsColumn), m.allocations);
            QCOMPARE(memoryNumber(driver, row, DriverMemoryModel::PeakColumn), double(m.peakBytes));
        }
        QCOMPARE(memoryText(driver, 1, DriverMemoryModel::AllocationsColumn), QLocale().toString(1.5, 'f', 1));

        auto cpuViews = std::make_shared<kforge::ui::RunViews>(*views); // a run without driver records
        cpuViews->memory.driverModules.clear();
        auto cpu = std::make_shared<kforge::ui::ProfileResults>(*results);
        cpu->baseline.views = cpuViews;
        page.setResults(cpu, false);
        QVERIFY(!page.driverSection()->isVisibleTo(&page));
        QCOMPARE(page.driverModel()->rowCount(), 0);
    }

    // The flame graph of the run shown: modules, functions, ops; a click zooms into a frame and Backspace goes
    // back up; the search highlights; the plan's graph is coloured against the baseline's; PNG and SVG export.
    void flameGraphZoomSearchDifferentialExport()
    {
        using kforge::ui::FlameGraphPage;
        using kforge::ui::FlameGraphView;
        const auto window = openTinyGpt();
        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileCompare->trigger();
        QVERIFY(waitForProfile(finished).first);
        ProfilePage* page = profilePage(*window);
        QCOMPARE(page->shown(), ProfilePage::Shown::Plan);
        page->showSubView(QStringLiteral("flame"));
        auto* flame = qobject_cast<FlameGraphPage*>(page->subView(QStringLiteral("flame")));
        QVERIFY(flame);
        FlameGraphView* view = flame->view();
        QVERIFY(view->frames().size() > 5);
        QCOMPARE(view->frames().front().parent, -1);
        QVERIFY(view->isDifferential());
        QVERIFY(view->baselineUs(0) > 0);
        QCOMPARE(view->breadcrumb(), QStringList{QStringLiteral("(root)")});

        // Zoom into blocks.0 by clicking it, then back up with Backspace.
        int block = -1;
        for (size_t i = 0; i < view->frames().size(); ++i)
            if (view->frames()[i].path == "blocks.0")
                block = int(i);
        QVERIFY(block > 0);
        const QRectF before = view->frameRect(block);
        QVERIFY(before.width() > 1);
        QTest::mouseClick(view, Qt::LeftButton, {}, before.center().toPoint());
        QCOMPARE(view->zoomedFrame(), block);
        QCOMPARE(view->breadcrumb().last(), QStringLiteral("0"));
        QVERIFY(flame->breadcrumbLabel()->text().contains(QStringLiteral("href")));
        QVERIFY(qAbs(view->frameRect(block).width() - view->width()) < 1.0); // the zoomed frame fills the width
        QTest::keyClick(view, Qt::Key_Backspace);
        QCOMPARE(view->zoomedFrame(), view->frames()[size_t(block)].parent);

        flame->searchEdit()->setText(QStringLiteral("gelu"));
        QVERIFY(view->matchCount() > 0);
        flame->searchEdit()->clear();
        QCOMPARE(view->matchCount(), 0);
        flame->differentialBox()->setChecked(false);
        QVERIFY(!view->isDifferential());

        // Bottom-up: the frames with time of their own on top (gelu's op, merged over both blocks), callers below.
        flame->bottomUpBox()->setChecked(true);
        QVERIFY(view->isBottomUp());
        QVERIFY(!flame->differentialBox()->isEnabled());
        const auto& inverted = view->frames();
        const auto geluOp = std::find_if(inverted.begin(), inverted.end(), [](const kforge::FlameFrame& f) {
            return f.depth == 1 && f.kind == kforge::FlameFrame::Kind::Op && f.name == "aten::gelu";
        });
        QVERIFY(geluOp != inverted.end());
        const int geluIndex = int(geluOp - inverted.begin());
        int callersInBlocks = 0;
        for (const kforge::FlameFrame& f : inverted)
            if (f.depth == 3 && inverted[size_t(f.parent)].parent == geluIndex)
                callersInBlocks += f.name.rfind("blocks.", 0) == 0;
        QCOMPARE(callersInBlocks, 2); // blocks.0.mlp and blocks.1.mlp call gelu
        flame->bottomUpBox()->setChecked(false);
        QVERIFY(!view->isBottomUp());

        QTemporaryDir dir;
        QVERIFY(flame->exportImage(dir.filePath(QStringLiteral("flame.png"))));
        QVERIFY(flame->exportImage(dir.filePath(QStringLiteral("flame.svg"))));
        QCOMPARE(head(dir.filePath(QStringLiteral("flame.png")), 4), QByteArray("\x89PNG"));
        QVERIFY(head(dir.filePath(QStringLiteral("flame.svg")), 200).contains("<svg"));
    }

    // Selecting a module in the tree scopes the kernel table to that module's subtree and outlines its ranges on the
    // timeline, and gives the plan editor's new entries their scope; selecting the root shows everything again.
    void moduleSelectionScopesKernelTableAndTimeline()
    {
        const auto window = openTinyGpt();
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        ProfilePage* page = profilePage(*window);
        KernelStatsModel* stats = page->statsModel();
        page->groupByCombo()->setCurrentIndex(page->groupByCombo()->findData(int(kforge::GroupBy::Module)));
        QCOMPARE(stats->groupBy(), kforge::GroupBy::Module);
        const int allRows = stats->rowCount();
        const double allUs = stats->totalUs();
        QVERIFY(allRows > 3);

        part<kforge::ui::ModuleTreePage>(*window, "modulePage")->revealPath(QStringLiteral("blocks.0"));
        QCOMPARE(stats->moduleScope(), QStringLiteral("blocks.0"));
        QVERIFY(waitForKernelTable(*page)); // a scope the profile did not start with is grouped off the UI thread
        QVERIFY(stats->rowCount() > 0 && stats->rowCount() < allRows);
        for (int row = 0; row < stats->rowCount(); ++row)
            QVERIFY2(stats->row(row).key.rfind("blocks.0", 0) == 0, stats->row(row).key.c_str());
        QVERIFY(stats->totalUs() < allUs);
        QCOMPARE(page->timeline()->highlightedModule(), QStringLiteral("blocks.0"));
        QCOMPARE(page->timeline()->highlightedRangeCount(), 2); // one per measured forward
        QVERIFY(page->headerText().contains(QStringLiteral("blocks.0")));

        // The plan editor follows the same selection (one ModuleScope): a new entry is scoped to that module.
        part<kforge::ui::ModuleTreePage>(*window, "modulePage")->revealPath(QStringLiteral("blocks.1.mlp"));
        auto* editor = part<kforge::ui::PlanEditorView>(*window, "planEditorView");
        const size_t entries = planDocument(*window)->plan().entries.size();
        QAction* add = nullptr;
        for (QAction* action : editor->findChildren<QAction*>())
            if (action->text() == QStringLiteral("Add Entry"))
                add = action;
        QVERIFY(add);
        add->trigger();
        QCOMPARE(planDocument(*window)->plan().entries.size(), entries + 1);
        QCOMPARE(planDocument(*window)->plan().entries.back().scope, std::string("blocks.1.mlp"));

        QVERIFY(waitForKernelTable(*page));
        // The scope chip says which module the table counts; its × shows the whole run and selects the root.
        QToolButton* chip = page->scopeChip();
        QVERIFY(chip->isVisibleTo(page));
        QVERIFY2(chip->text().contains(QStringLiteral("blocks.1.mlp")), qPrintable(chip->text()));
        chip->click();
        QVERIFY(!chip->isVisibleTo(page));
        QCOMPARE(stats->moduleScope(), QString());
        QCOMPARE(stats->rowCount(), allRows);
        QCOMPARE(part<kforge::ui::ModuleTreePage>(*window, "modulePage")->currentPath(), QString());
        QVERIFY(!page->headerText().contains(QStringLiteral("blocks.1.mlp")));

        part<kforge::ui::ModuleTreePage>(*window, "modulePage")->revealPath(QStringLiteral("blocks.0"));
        QVERIFY(waitForKernelTable(*page));
        part<kforge::ui::ModuleTreePage>(*window, "modulePage")->revealPath(QString());
        QCOMPARE(stats->rowCount(), allRows);
        QVERIFY(page->timeline()->highlightedModule().isEmpty());
    }

    void compareSaveAndReopenWithoutModel()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString saved = dir.filePath(QStringLiteral("tiny.kfprof"));
        {
            const auto window = openTinyGpt();
            window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                                 QStringLiteral("AtenGeluProvider"));
            QVERIFY(window->actions().profileCompare->isEnabled());
            QSignalSpy finished(window.get(), &MainWindow::profileFinished);
            window->actions().profileCompare->trigger();
            const auto [ok, message] = waitForProfile(finished);
            QVERIFY2(ok, qPrintable(message));
            QVERIFY2(message.startsWith(QStringLiteral("Compared")), qPrintable(message));

            const kforge::ui::ResultsPtr results = profileResults(*window);
            QVERIFY(results->baseline && results->plan && results->comparison);
            QVERIFY(!results->baseline.run->usedPlan);
            QVERIFY(results->plan.run->usedPlan);
            // What the views show was computed once, on the worker that made the runs, not on the UI thread: one
            // value holding each run's views and tables, the comparison and the frame verdicts.
            QVERIFY(results->madeOffUiThread);
            QVERIFY(results->flameSpeeds);
            for (const kforge::ui::RunResults* run : {&results->baseline, &results->plan}) {
                QVERIFY(run->views && !run->views->flame.empty() && !run->views->moduleTimes.empty());
                QVERIFY(run->table({kforge::GroupBy::Function, {}}));
            }
            ProfilePage* page = profilePage(*window);
            QCOMPARE(page->shown(), ProfilePage::Shown::Plan);
            QVERIFY(page->showCombo()->isVisibleTo(page));
            const ComparisonModel* comparison = page->comparisonModel();
            QVERIFY(comparison->rowCount() > 1);
            QCOMPARE(comparison->index(comparison->rowCount() - 1, 0).data().toString(), QStringLiteral("Total"));
            QVERIFY(keys(*comparison).contains(QStringLiteral("gelu")));
            QVERIFY(!comparison->outputErrorText().isEmpty());
            QCOMPARE(page->comparisonTable()->model()->rowCount(), comparison->rowCount());

            QVERIFY(window->saveProfile(saved));
            QVERIFY(fileSize(saved) > 0);
        }

        // A fresh window, no model: the saved runs, their labels and the comparison come back.
        const auto window = makeWindow();
        QSignalSpy errors(window.get(), &MainWindow::profileError);
        QVERIFY(window->openProfile(saved));
        QCOMPARE(errors.count(), 0);
        QVERIFY(!window->session());
        QCOMPARE(part<kforge::ui::ModuleTreeModel>(*window, "moduleModel")->rowCount(), 0);
        const kforge::ui::ResultsPtr results = profileResults(*window);
        QVERIFY(results->baseline && results->plan && results->comparison);
        QVERIFY(results->madeOffUiThread); // made on the file reader's thread
        QVERIFY(!results->baseline.run->usedPlan);
        QVERIFY(results->plan.run->usedPlan);
        ProfilePage* page = profilePage(*window);
        QVERIFY(page->statsModel()->rowCount() > 0);
        QVERIFY(page->comparisonModel()->rowCount() > 1);
        QVERIFY2(page->headerText().contains(QStringLiteral("from tiny.kfprof")), qPrintable(page->headerText()));
        page->setShown(ProfilePage::Shown::Baseline);
        QCOMPARE(page->shownRun(), results->baseline.run);
        QCOMPARE(page->statsModel()->run(), results->baseline.run);
        // Nothing to profile without a model, but the results can be exported.
        QVERIFY(!window->actions().profileBaseline->isEnabled());
        QVERIFY(window->actions().exportCsv->isEnabled());
        QVERIFY(window->actions().saveProfile->isEnabled());
    }

    // Issue 70: File › Compare With… takes the run shown (A) and a run of another .kfprof (B) into a report of the
    // pair: its comparison table, the module tree's Δ column and the differential flame graph are of these two runs,
    // made apart (here B is the same model profiled with every op of the file slowed twofold, by construction).
    void compareWithPairsTheRunShownWithASavedRun()
    {
        using kforge::ui::ModuleTreeModel;
        using kforge::ui::ReportWorkspace;
        QTemporaryDir dir;
        const auto window = openTinyGpt();
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        QVERIFY(window->actions().compareWith->isEnabled());
        const auto shown = profileResults(*window)->baseline.run;
        kforge::ProfileRun slower = *shown;
        for (kforge::KernelRecord& r : slower.records)
            r.durationNs *= 2;
        const QString other = dir.filePath(QStringLiteral("after.kfprof"));
        kforge::saveProfiles({{"baseline", shown.get()}, {"slower", &slower}}, other.toStdString());

        auto* files = part<kforge::ui::ProfileFileController>(*window, "profileFiles");
        QVERIFY(files);
        QVERIFY(files->compareWith(other, 1));
        const auto reports = window->findChildren<ReportWorkspace*>();
        QCOMPARE(reports.size(), 1);
        ReportWorkspace* report = reports.first();
        auto* tabs = part<QTabWidget>(*window, "centralTabs");
        QCOMPARE(tabs->tabText(tabs->indexOf(report)), QStringLiteral("tiny-gpt vs after.kfprof"));
        const kforge::ui::ProfileResults& pair = *report->results()->results();
        QVERIFY(pair.both());
        QCOMPARE(pair.baseline.run, shown);
        QCOMPARE(pair.plan.run->records.size(), slower.records.size());
        QVERIFY(pair.comparison);
        QVERIFY2(pair.comparison->baselineTotalUs > 0 &&
                     std::abs(pair.comparison->planTotalUs / pair.comparison->baselineTotalUs - 2.0) < 0.01,
                 "B's forward is twice A's");
        QVERIFY(!report->tree()->view()->isColumnHidden(ModuleTreeModel::DeltaColumn));
        QVERIFY(report->treeModel()
                    ->indexOfPath(QString(), ModuleTreeModel::DeltaColumn)
                    .data()
                    .toString()
                    .startsWith(QStringLiteral("+100")));
        // Swap Sides: B becomes the reference, and the Δ reads the other way.
        QVERIFY(window->actions().swapSides->isEnabled());
        QVERIFY(report->files()->swapSides());
        const kforge::ui::ProfileResults& swapped = *report->results()->results();
        QCOMPARE(swapped.plan.run, shown);
        QVERIFY(report->treeModel()
                    ->indexOfPath(QString(), ModuleTreeModel::DeltaColumn)
                    .data()
                    .toString()
                    .startsWith(QStringLiteral("-50")));
        QVERIFY(!files->compareWith(dir.filePath(QStringLiteral("missing.kfprof")), 0));
        QCOMPARE(window->findChildren<ReportWorkspace*>().size(), 1); // nothing opened for a file that is not there
    }

    // Issue 70: a .kfprof dropped on the window while a run is shown offers to compare with it (a menu at the drop,
    // answered here by the chooser): Compare opens the same pair as File › Compare With…, Cancel opens nothing. Two
    // .kfprof dropped at once are a pair: the first opens, the second is compared with it. A file that is not a
    // .kfprof or a model, and a .kfprof that cannot be read, are refused with a line naming them; nothing shown goes.
    void droppingASecondProfileOnARunComparesWithIt()
    {
        using kforge::ui::ModuleTreeModel;
        using kforge::ui::ReportWorkspace;
        QTemporaryDir dir;
        const auto window = openTinyGpt();
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        const auto shown = profileResults(*window)->baseline.run;
        kforge::ProfileRun slower = *shown;
        for (kforge::KernelRecord& r : slower.records)
            r.durationNs *= 2;
        const QString before = dir.filePath(QStringLiteral("before.kfprof"));
        const QString after = dir.filePath(QStringLiteral("after.kfprof"));
        kforge::saveProfile(*shown, before.toStdString());
        kforge::saveProfile(slower, after.toStdString());

        QStringList offered;
        kforge::ui::DropChoice answer = kforge::ui::DropChoice::Cancel;
        window->setDropChooser([&](const QString& fileName, const QPoint&) {
            offered << fileName;
            return answer;
        });
        auto* tabs = part<QTabWidget>(*window, "centralTabs");
        QVERIFY(dropFiles(*window, {after})); // cancelled at the menu
        QCOMPARE(offered, QStringList{QStringLiteral("after.kfprof")});
        QVERIFY(window->findChildren<ReportWorkspace*>().isEmpty());
        QCOMPARE(profileResults(*window)->baseline.run, shown);

        answer = kforge::ui::DropChoice::Compare;
        QVERIFY(dropFiles(*window, {after}));
        QCOMPARE(offered.size(), 2);
        auto reports = window->findChildren<ReportWorkspace*>();
        QCOMPARE(reports.size(), 1);
        ReportWorkspace* report = reports.first();
        QCOMPARE(tabs->currentWidget(), report);
        QCOMPARE(tabs->tabText(tabs->indexOf(report)), QStringLiteral("tiny-gpt vs after.kfprof"));
        const kforge::ui::ProfileResults& pair = *report->results()->results();
        QVERIFY(pair.both());
        QCOMPARE(pair.baseline.run, shown);
        QCOMPARE(pair.plan.run->records.size(), slower.records.size());
        QVERIFY(pair.comparison);
        QVERIFY2(pair.comparison->baselineTotalUs > 0 &&
                     std::abs(pair.comparison->planTotalUs / pair.comparison->baselineTotalUs - 2.0) < 0.01,
                 "B's forward is twice A's");
        QVERIFY(report->treeModel()
                    ->indexOfPath(QString(), ModuleTreeModel::DeltaColumn)
                    .data()
                    .toString()
                    .startsWith(QStringLiteral("+100")));
        QCOMPARE(profileResults(*window)->baseline.run, shown); // the Profile tab keeps its run

        // Refused with a line naming the file, before anything is asked or read.
        const QString notes = dir.filePath(QStringLiteral("notes.txt"));
        QFile(notes).open(QIODevice::WriteOnly);
        QVERIFY(!dropFiles(*window, {notes}));
        QVERIFY2(statusMessage(*window).contains(QStringLiteral("notes.txt")) &&
                     statusMessage(*window).contains(QStringLiteral(".kfprof")),
                 qPrintable(statusMessage(*window)));
        QVERIFY(!dropFiles(*window, {before, after, notes}));
        QCOMPARE(offered.size(), 2);
        // A .kfprof that cannot be read: the reader's error, and the pair and the Profile tab stay.
        QSignalSpy errors(window.get(), &MainWindow::profileError);
        const QString broken = dir.filePath(QStringLiteral("broken.kfprof"));
        {
            QFile file(broken);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("not a profile");
        }
        tabs->setCurrentWidget(profilePage(*window));
        QVERIFY(dropFiles(*window, {broken})); // compared, as the chooser says
        QCOMPARE(offered.size(), 3);
        QCOMPARE(errors.count(), 1);
        QVERIFY2(errors.first().first().toString().contains(QStringLiteral("broken.kfprof")),
                 qPrintable(errors.first().first().toString()));
        QCOMPARE(window->findChildren<ReportWorkspace*>().size(), 1);
        QCOMPARE(profileResults(*window)->baseline.run, shown);

        // Two at once on a window that shows nothing: the pair, the first dropped as the reference (A).
        const auto fresh = makeWindow();
        fresh->setDropChooser([&](const QString& fileName, const QPoint&) {
            offered << fileName;
            return kforge::ui::DropChoice::Cancel;
        });
        QVERIFY(dropFiles(*fresh, {before, after}));
        QCOMPARE(offered.size(), 3); // nothing asked
        reports = fresh->findChildren<ReportWorkspace*>();
        QCOMPARE(reports.size(), 1);
        const kforge::ui::ProfileResults& dropped = *reports.first()->results()->results();
        QVERIFY(dropped.both() && dropped.comparison);
        QCOMPARE(dropped.baseline.run->records.size(), shown->records.size());
        QCOMPARE(dropped.baseline.run->records.front().durationNs, shown->records.front().durationNs);
        QCOMPARE(dropped.plan.run->records.front().durationNs, slower.records.front().durationNs);
        QCOMPARE(profileResults(*fresh)->baseline.run->records.size(), shown->records.size()); // A opened here
    }

    // A saved profile of another model opens in a report of its own (a tab, as Nsight opens each report): its own
    // module tree rebuilt from the file with the file's times on it, its own tables; the loaded model's tree, Profile
    // tab and unsaved results stay as they were, nothing is asked. Exports on the report's tab are of its runs;
    // Close Report (Ctrl+W) closes it.
    void aProfileOfAnotherModelOpensInItsOwnReport()
    {
        using kforge::ui::ModuleTreeModel;
        using kforge::ui::ModuleTreePage;
        using kforge::ui::ReportWorkspace;
        QTemporaryDir dir;
        const QString tiny = dir.filePath(QStringLiteral("tiny.kfprof"));
        kforge::ProfileRun tinyRun;
        {
            auto session = kforge::ModelSession::open("builtin:tiny-gpt");
            kforge::ProfileOptions options;
            options.warmupIterations = 0;
            options.iterations = 2;
            tinyRun = kforge::profile(*session, options);
            kforge::saveProfile(tinyRun, tiny.toStdString());
        }
        const auto window = openForProfiles(QStringLiteral("builtin:convnet"));
        auto* model = part<ModuleTreeModel>(*window, "moduleModel");
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        const auto convnetRun = profileResults(*window)->baseline.run;
        QVERIFY(convnetRun && model->hasModuleTimes());
        QSignalSpy prompted(window.get(), &MainWindow::unsavedResultsPrompted);
        window->setUnsavedResults(MainWindow::UnsavedChanges::Cancel); // would keep them, and fail the open

        QVERIFY(window->openProfile(tiny));
        QCOMPARE(prompted.count(), 0);
        QCOMPARE(profileResults(*window)->baseline.run,
                 convnetRun); // the Profile tab is untouched
        QVERIFY(model->hasModuleTimes());
        QCOMPARE(QString::fromStdString(window->session()->displayName()), QStringLiteral("convnet"));
        const auto reports = window->findChildren<ReportWorkspace*>();
        QCOMPARE(reports.size(), 1);
        ReportWorkspace* report = reports.first();
        QVERIFY(report->isVisibleTo(window.get())); // its tab is shown
        auto* tabs = part<QTabWidget>(*window, "centralTabs");
        QCOMPARE(tabs->tabText(tabs->indexOf(report)), QStringLiteral("tiny.kfprof"));
        QCOMPARE(report->modelName(), QString::fromStdString(tinyRun.model));

        // The tree is tiny-gpt's, from the file, with its times; the tables are the file's run.
        ModuleTreeModel* reportTree = report->treeModel();
        QVERIFY(reportTree->hasModuleTimes());
        for (const kforge::ModuleInfo& module : tinyRun.modules)
            QVERIFY2(reportTree->indexOfPath(QString::fromStdString(module.path)).isValid(), module.path.c_str());
        QVERIFY(!report->tree()->view()->isColumnHidden(ModuleTreeModel::TimeColumn));
        QVERIFY(report->page()->isReport());
        QVERIFY(report->page()->statsModel()->rowCount() > 0);
        QCOMPARE(report->page()->shownRun()->records.size(), tinyRun.records.size());
        QVERIFY2(report->page()->headerText().contains(QStringLiteral("tiny.kfprof")),
                 qPrintable(report->page()->headerText()));

        // The File menu acts on the report shown: its CSV holds the file's records.
        QVERIFY(window->actions().closeReport->isEnabled());
        QVERIFY(window->actions().exportCsv->isEnabled());
        const QString csv = dir.filePath(QStringLiteral("report.csv"));
        QVERIFY(report->files()->exportCsv(csv));
        std::ifstream in(csv.toStdString());
        QCOMPARE(kforge::readCsv(in).size(), tinyRun.records.size());

        // Ctrl+W closes the report; the Profile tab's results are still there, and unsaved.
        window->actions().closeReport->trigger();
        QTRY_COMPARE(window->findChildren<ReportWorkspace*>().size(), 0);
        QVERIFY(!window->actions().closeReport->isEnabled());
        QCOMPARE(profileResults(*window)->baseline.run, convnetRun);
        QVERIFY(!window->close()); // still asked about (Cancel)
        QCOMPARE(prompted.count(), 1);
    }

    // Results nobody saved are never dropped without asking: opening another model, opening a saved profile or
    // closing the window asks first (Cancel keeps both the model and the results), a saved profile is not asked
    // about again.
    void unsavedResultsAreAskedAboutBeforeTheyGo()
    {
        const auto window = openTinyGpt();
        QSignalSpy prompted(window.get(), &MainWindow::unsavedResultsPrompted);
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        const auto results = profileResults(*window)->baseline.run;
        QVERIFY(results);

        window->setUnsavedResults(MainWindow::UnsavedChanges::Cancel);
        window->openSource(QStringLiteral("builtin:convnet"));
        QCOMPARE(prompted.count(), 1);
        QVERIFY(!window->isLoading());
        QCOMPARE(QString::fromStdString(window->session()->displayName()), QStringLiteral("tiny-gpt"));
        QCOMPARE(profileResults(*window)->baseline.run, results);
        QVERIFY(!window->close()); // Ctrl+Q / the close button ask the same
        QCOMPARE(prompted.count(), 2);

        // Opening a saved profile of this model would replace them too (it did without asking): asked, and Cancel
        // keeps them. (One of another model opens in its own report: aProfileOfAnotherModelOpensInItsOwnReport.)
        QTemporaryDir dir;
        const QString other = dir.filePath(QStringLiteral("other.kfprof"));
        {
            auto tinyGpt = kforge::ModelSession::open("builtin:tiny-gpt");
            kforge::ProfileOptions options;
            options.warmupIterations = 0;
            options.iterations = 1;
            kforge::saveProfile(kforge::profile(*tinyGpt, options), other.toStdString());
        }
        QVERIFY(!window->openProfile(other));
        QCOMPARE(prompted.count(), 3);
        QCOMPARE(profileResults(*window)->baseline.run, results);

        QVERIFY(window->saveProfile(dir.filePath(QStringLiteral("kept.kfprof"))));
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        window->openSource(QStringLiteral("builtin:convnet")); // saved: nothing to ask
        QVERIFY(QTest::qWaitFor([&] { return loaded.count() > 0; }, kTimeoutMs));
        QCOMPARE(prompted.count(), 3);
        QCOMPARE(QString::fromStdString(window->session()->displayName()), QStringLiteral("convnet"));

        window->actions().profileBaseline->trigger();
        QVERIFY(waitForProfile(finished).first);
        window->setUnsavedResults(MainWindow::UnsavedChanges::Discard);
        window->openSource(QStringLiteral("builtin:tiny-gpt"));
        QVERIFY(QTest::qWaitFor([&] { return loaded.count() > 1; }, kTimeoutMs));
        QCOMPARE(prompted.count(), 4);
    }

    void exports()
    {
        const auto window = openTinyGpt();
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        QVERIFY(window->profileBaseline());
        QVERIFY(waitForProfile(finished).first);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());

        const QString csv = dir.filePath(QStringLiteral("kernels.csv"));
        QVERIFY(window->exportCsv(csv));
        QVERIFY(head(csv, 64).startsWith("kind,name,"));
        std::ifstream in(csv.toStdString());
        QCOMPARE(kforge::readCsv(in).size(), profileResults(*window)->baseline.run->records.size());

        const QString trace = dir.filePath(QStringLiteral("trace.json"));
        QVERIFY(window->exportChromeTrace(trace));
        QVERIFY(fileSize(trace) > 1000);
        QFile traceFile(trace);
        QVERIFY(traceFile.open(QIODevice::ReadOnly));
        QVERIFY(traceFile.readAll().contains("\"traceEvents\""));

        profilePage(*window)->showSubView(QStringLiteral("chart"));
        const QString chart = dir.filePath(QStringLiteral("chart.png"));
        QVERIFY(window->exportChartPng(chart));
        QVERIFY(!QImage(chart).isNull());
        const QString timeline = dir.filePath(QStringLiteral("timeline.png"));
        QVERIFY(window->exportTimelinePng(timeline));
        QVERIFY(!QImage(timeline).isNull());

        // Errors are reported, not thrown or printed.
        QSignalSpy errors(window.get(), &MainWindow::profileError);
        QVERIFY(!window->exportCsv(dir.filePath(QStringLiteral("missing/dir/kernels.csv"))));
        QCOMPARE(errors.count(), 1);
    }

    void openErrorsAndDrop()
    {
        const auto window = makeWindow();
        QSignalSpy errors(window.get(), &MainWindow::profileError);
        QVERIFY(!window->openProfile(QStringLiteral("/nonexistent/run.kfprof")));
        QCOMPARE(errors.count(), 1);
        QVERIFY2(errors.first().first().toString().contains(QStringLiteral("run.kfprof")),
                 qPrintable(errors.first().first().toString()));
        QVERIFY(!window->saveProfile(QStringLiteral("/tmp/never.kfprof"))); // nothing to save yet
        QCOMPARE(errors.count(), 2);
        QVERIFY(!window->actions().saveProfile->isEnabled());

        // A .kfprof dropped on the window opens as a profile, not as a model.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("dropped.kfprof"));
        kforge::ProfileRun run;
        run.model = "builtin:tiny-gpt";
        run.iterations = 1;
        kforge::KernelRecord record;
        record.name = "aten::gelu";
        record.function = "gelu";
        record.modulePath = "blocks.0.mlp";
        record.durationNs = 1500;
        run.records = {record};
        kforge::saveProfile(run, path.toStdString());
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path)});
        const QPoint center = window->rect().center();
        QDragEnterEvent enter(center, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(window.get(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(center), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(window.get(), &drop);
        QVERIFY(!window->isLoading());
        QVERIFY(profileResults(*window)->baseline.run);
        QCOMPARE(profilePage(*window)->statsModel()->rowCount(), 1);
        QCOMPARE(profilePage(*window)->statsModel()->index(0, 0).data().toString(), QStringLiteral("aten::gelu"));
        QVERIFY(!profileResults(*window)->comparison);
        QCOMPARE(profilePage(*window)->comparisonModel()->rowCount(), 0);
    }

    void cudaChoiceFollowsAvailability()
    {
        const auto window = makeWindow();
        ProfilePage* page = profilePage(*window);
        QComboBox* combo = page->deviceCombo();
        const int cuda = combo->findData(QStringLiteral("cuda"));
        QVERIFY(cuda >= 0);
        const bool enabled = combo->model()->flags(combo->model()->index(cuda, 0)) & Qt::ItemIsEnabled;
        QString why;
        QCOMPARE(enabled, ProfileController::cudaAvailable(&why));
        page->setDevice(QStringLiteral("cuda"));
        if (enabled) {
            QCOMPARE(profileController(*window)->device(), QStringLiteral("cuda"));
        } else {
            // Listed, not selectable, and the tooltip says why.
            QCOMPARE(profileController(*window)->device(), QStringLiteral("cpu"));
            QCOMPARE(combo->currentData().toString(), QStringLiteral("cpu"));
            QVERIFY2(combo->itemData(cuda, Qt::ToolTipRole).toString().contains(why), qPrintable(why));
        }
    }

    void profileOnCuda()
    {
        QString why;
        if (!ProfileController::cudaAvailable(&why))
            QSKIP(qPrintable(QStringLiteral("no CUDA profiling here: %1").arg(why)));
        const auto window = openTinyGpt();
        profilePage(*window)->setDevice(QStringLiteral("cuda"));
        QVERIFY(window->findChild<QLabel*>(QStringLiteral("deviceStatus"))->text().contains(QStringLiteral("CUDA")));
        QSignalSpy finished(window.get(), &MainWindow::profileFinished);
        QVERIFY(window->profileBaseline());
        const auto [ok, message] = waitForProfile(finished);
        QVERIFY2(ok, qPrintable(message));
        const auto run = profileResults(*window)->baseline.run;
        QCOMPARE(run->device, std::string("cuda"));
        QVERIFY(
            std::any_of(run->records.begin(), run->records.end(), [](const auto& r) { return r.kind == "kernel"; }));
        QVERIFY(profilePage(*window)->statsModel()->rowCount() > 0);
    }

    void viewsByName()
    {
        const auto window = makeWindow();
        for (const QString& name : {QStringLiteral("profile"), QStringLiteral("chart"), QStringLiteral("timeline"),
                                    QStringLiteral("comparison"), QStringLiteral("memory")}) {
            QVERIFY2(MainWindow::viewNames().contains(name), qPrintable(name));
            QVERIFY2(window->viewNamed(name), qPrintable(name));
            QVERIFY(window->showView(name));
            QVERIFY2(window->viewNamed(name)->isVisible(), qPrintable(name));
        }
        QCOMPARE(window->viewNamed(QStringLiteral("chart")), profilePage(*window)->chart());
        // The timeline view is its tab: the timeline with its details pane below.
        QVERIFY(window->viewNamed(QStringLiteral("timeline"))->isAncestorOf(profilePage(*window)->timeline()));
        // Ctrl+F goes to the kernel filter while the Profile page is shown.
        window->activateWindow();
        window->showView(QStringLiteral("profile"));
        window->actions().filter->trigger();
        QTRY_VERIFY(profilePage(*window)->filterEdit()->hasFocus());
    }
};

QTEST_MAIN(TestProfilePage)
#include "tst_profile_page.moc"
