// SPDX-License-Identifier: Apache-2.0
// The Profile page's models without windows: KernelStatsModel (grouping, numeric sort through a proxy, the
// row of a timeline record) and ComparisonModel (rows, total, verdict colours), under the model tester.
#include "controllers/progress_throttle.h"
#include "item_models/comparison_model.h"
#include "item_models/kernel_stats_model.h"
#include "item_models/profile_results.h"
#include "item_models/speed_summary.h"
#include "item_models/timeline_details.h"

#include <kforge/profiling.h>

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

#include <cmath>
#include <vector>

using kforge::GroupBy;
using kforge::ui::ComparisonModel;
using kforge::ui::KernelStatsModel;
using kforge::ui::NewerResult;
using kforge::ui::wholeForwardLines;

namespace {

// One kernel record per line: op, function ("-" = none), module ("-" = the root), duration in ns.
const char* const kBaseline = R"(
aten::addmm    linear   blocks.0.attn  9000
aten::addmm    linear   blocks.0.mlp   9000
aten::gelu     gelu     blocks.0.mlp   10000
aten::softmax  softmax  blocks.0.attn  4000
aten::softmax  softmax  blocks.0.attn  7000
aten::add      -        -              500
)";
// The same model with a plan: gelu twice as fast, softmax slower, linear unchanged, one new op.
const char* const kPlan = R"(
aten::addmm    linear   blocks.0.attn  9000
aten::addmm    linear   blocks.0.mlp   9000
aten::gelu     gelu     blocks.0.mlp   5000
aten::softmax  softmax  blocks.0.attn  8000
aten::softmax  softmax  blocks.0.attn  8000
aten::add      -        -              500
aten::mul      mul      blocks.0.mlp   700
)";

std::shared_ptr<kforge::ProfileRun> runOf(const char* text)
{
    auto run = std::make_shared<kforge::ProfileRun>();
    run->iterations = 1;
    const QStringList lines = QString::fromLatin1(text).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (const QString& line : lines) {
        const QStringList f = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        kforge::KernelRecord r;
        r.name = r.op = f[0].toStdString();
        r.function = f[1] == QLatin1String("-") ? "" : f[1].toStdString();
        r.modulePath = f[2] == QLatin1String("-") ? "" : f[2].toStdString();
        r.durationNs = f[3].toLongLong();
        run->records.push_back(r);
    }
    return run;
}

// `text` measured once per factor, every duration of iteration i scaled by factors[i]: the same program under
// machine noise, for verdicts (which need six or more paired iterations).
std::shared_ptr<kforge::ProfileRun> iterationsOf(const char* text, const std::vector<double>& factors)
{
    const auto once = runOf(text);
    auto run = std::make_shared<kforge::ProfileRun>();
    run->iterations = int(factors.size());
    for (size_t i = 0; i < factors.size(); ++i)
        for (kforge::KernelRecord r : once->records) {
            r.iteration = int(i);
            r.durationNs = std::llround(double(r.durationNs) * factors[i]);
            run->records.push_back(r);
        }
    return run;
}

// Noise of up to ±15% per iteration, different on each side: ratios of the same time range from 0.87 to 1.17.
const std::vector<double> kBaselineNoise{1.00, 1.10, 0.92, 1.05, 0.95, 1.08, 0.90, 1.02};
const std::vector<double> kPlanNoise{1.06, 0.94, 1.00, 0.91, 1.09, 0.97, 1.04, 0.99};

QStringList column(const QAbstractItemModel& model, int column, int role = Qt::DisplayRole)
{
    QStringList values;
    for (int row = 0; row < model.rowCount(); ++row)
        values << model.index(row, column).data(role).toString();
    return values;
}

// Shows `run`'s table of `groupBy` and `scope` in `model`, made as a profile's results make it.
void show(KernelStatsModel& model, const std::shared_ptr<const kforge::ProfileRun>& run,
          GroupBy groupBy = GroupBy::Kernel, const QString& scope = {})
{
    const kforge::ui::TableKey key{groupBy, scope.toStdString()};
    QVERIFY(model.setTable(kforge::ui::makeProfileResults(run, nullptr, {key})->baseline, key));
}

} // namespace

class TestProfileModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void statsByKernel()
    {
        KernelStatsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        show(model, runOf(kBaseline));
        QCOMPARE(model.columnCount(), int(KernelStatsModel::ColumnCount));
        // Largest total first, as the engine orders them.
        QCOMPARE(column(model, KernelStatsModel::KeyColumn),
                 (QStringList{"aten::addmm", "aten::softmax", "aten::gelu", "aten::add"}));
        QCOMPARE(column(model, KernelStatsModel::CallsColumn), (QStringList{"2", "2", "1", "1"}));
        QCOMPARE(column(model, KernelStatsModel::ModuleColumn),
                 (QStringList{"(several)", "blocks.0.attn", "blocks.0.mlp", "(root)"}));
        QCOMPARE(model.index(1, KernelStatsModel::TotalColumn).data().toString(), QStringLiteral("11.0"));
        QCOMPARE(model.index(1, KernelStatsModel::MinColumn).data(KernelStatsModel::SortRole).toDouble(), 4.0);
        QCOMPARE(model.index(1, KernelStatsModel::MaxColumn).data(KernelStatsModel::SortRole).toDouble(), 7.0);
        QCOMPARE(model.index(1, KernelStatsModel::MedianColumn).data().toString(), QStringLiteral("4.00"));
        QCOMPARE(model.index(3, KernelStatsModel::TotalColumn).data().toString(), QStringLiteral("0.50"));
        QCOMPARE(model.headerData(KernelStatsModel::KeyColumn, Qt::Horizontal).toString(), QStringLiteral("Kernel"));

        double shares = 0;
        for (int row = 0; row < model.rowCount(); ++row)
            shares += model.index(row, KernelStatsModel::ShareColumn).data(KernelStatsModel::SortRole).toDouble();
        QVERIFY(qAbs(shares - 1.0) < 1e-9);
        QCOMPARE(model.index(0, KernelStatsModel::ShareColumn).data().toString(), QStringLiteral("45.6 %"));
    }

    // The kernel table scoped to a module keeps that module's subtree ("blocks.0" holds "blocks.0.mlp", not
    // "blocks.01"), computed once per run, grouping and scope and shared (the worker computes the scope selected
    // when a profile starts, the page only looks it up).
    void scopedStatisticsAreTheSubtreesOnceEach()
    {
        auto run = runOf(kBaseline);
        kforge::KernelRecord other = run->records.front();
        other.modulePath = "blocks.01.attn"; // a sibling whose name starts like the scope's
        run->records.push_back(other);
        const std::shared_ptr<const kforge::ProfileRun> shared = run;
        KernelStatsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        show(model, shared, GroupBy::Module, QStringLiteral("blocks.0"));
        QCOMPARE(column(model, KernelStatsModel::KeyColumn), (QStringList{"blocks.0.attn", "blocks.0.mlp"}));
        // Results that hold a table are not recomputed for it; one that lacks it is a new value sharing the rest.
        const kforge::ui::TableKey scoped{GroupBy::Module, "blocks.0"};
        const kforge::ui::ResultsPtr results = kforge::ui::makeProfileResults(shared, nullptr, {scoped});
        QCOMPARE(results->baseline.table(scoped)->size(), size_t(2));
        QCOMPARE(kforge::ui::withTable(results, scoped), results);
        const kforge::ui::ResultsPtr more = kforge::ui::withTable(results, {GroupBy::Module, "blocks.0.mlp"});
        QVERIFY(more != results);
        QCOMPARE(more->baseline.table(scoped), results->baseline.table(scoped));
        QCOMPARE(more->baseline.views, results->baseline.views);
        QVERIFY(!results->baseline.table({GroupBy::Module, "blocks.0.mlp"}));           // the first value is unchanged
        QVERIFY(!model.setTable(results->baseline, {GroupBy::Module, "blocks.0.mlp"})); // not made: no rows
        QCOMPARE(model.rowCount(), 0);
        show(model, shared, GroupBy::Module, QStringLiteral("blocks.0.mlp"));
        QCOMPARE(column(model, KernelStatsModel::KeyColumn), (QStringList{"blocks.0.mlp"}));
        show(model, shared, GroupBy::Module);
        QCOMPARE(model.rowCount(), 4); // blocks.0.attn, blocks.0.mlp, blocks.01.attn, the root
    }

    void groupBySwitching()
    {
        KernelStatsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto run = runOf(kBaseline);
        show(model, run);
        QSignalSpy header(&model, &QAbstractItemModel::headerDataChanged);

        show(model, run, GroupBy::Function);
        QCOMPARE(header.count(), 1);
        QCOMPARE(model.headerData(KernelStatsModel::KeyColumn, Qt::Horizontal).toString(), QStringLiteral("Function"));
        QCOMPARE(column(model, KernelStatsModel::KeyColumn),
                 (QStringList{"linear", "softmax", "gelu", "(no function)"}));

        show(model, run, GroupBy::Module);
        QCOMPARE(column(model, KernelStatsModel::KeyColumn), (QStringList{"blocks.0.attn", "blocks.0.mlp", "(root)"}));
        QCOMPARE(model.index(2, 0).data(KernelStatsModel::KeyRole).toString(), QString()); // the root's own key
        QCOMPARE(model.index(0, KernelStatsModel::TotalColumn).data(KernelStatsModel::SortRole).toDouble(), 20.0);

        // A record's row follows the grouping: record 2 is gelu in blocks.0.mlp.
        QCOMPARE(model.rowOfRecord(2), model.rowOfKey(QStringLiteral("blocks.0.mlp")));
        show(model, run, GroupBy::Function);
        QCOMPARE(model.rowOfRecord(2), model.rowOfKey(QStringLiteral("gelu")));
        QCOMPARE(model.rowOfRecord(5), model.rowOfKey(QStringLiteral("(no function)")));
        show(model, run, GroupBy::Kernel);
        QCOMPARE(model.rowOfRecord(4), model.rowOfKey(QStringLiteral("aten::softmax")));
        QCOMPARE(model.rowOfRecord(99), -1);
        QCOMPARE(model.rowOfRecord(-1), -1);

        show(model, nullptr);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.rowOfRecord(0), -1);
    }

    // Long times read in the unit their column needs ("6,214" ms, not "6,213,983" µs), one unit per column, named in
    // its header; short ones stay in µs.
    void longTimesReadInTheirColumnsUnit()
    {
        KernelStatsModel model;
        show(model, runOf(R"(
aten::conv2d   conv2d   layer1  6212983000
aten::conv2d   conv2d   layer1  1000000
aten::relu     relu     layer1  2000
)"));
        QCOMPARE(model.headerData(KernelStatsModel::TotalColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Total (ms)"));
        QCOMPARE(model.headerData(KernelStatsModel::MaxColumn, Qt::Horizontal).toString(), QStringLiteral("Max (ms)"));
        QCOMPARE(model.headerData(KernelStatsModel::MinColumn, Qt::Horizontal).toString(), QStringLiteral("Min (µs)"));
        const int conv = model.rowOfKey(QStringLiteral("aten::conv2d"));
        QVERIFY(conv >= 0);
        QCOMPARE(model.index(conv, KernelStatsModel::TotalColumn).data().toString(), QStringLiteral("6,214"));
        QCOMPARE(model.index(conv, KernelStatsModel::MinColumn).data().toString(), QStringLiteral("1,000"));
        QCOMPARE(model.index(conv, KernelStatsModel::TotalColumn).data(KernelStatsModel::SortRole).toDouble(),
                 6213983.0); // sorting keeps the microseconds
        show(model, runOf(kBaseline));
        QCOMPARE(model.headerData(KernelStatsModel::TotalColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Total (µs)"));
    }

    void sortsNumerically()
    {
        KernelStatsModel model;
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(KernelStatsModel::SortRole);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        show(model, runOf(kBaseline));

        // As text, "0.50" < "10.0" < "11.0" < "18.0" would hold by luck only: the sort role gives numbers.
        proxy.sort(KernelStatsModel::TotalColumn, Qt::AscendingOrder);
        QCOMPARE(column(proxy, KernelStatsModel::KeyColumn),
                 (QStringList{"aten::add", "aten::gelu", "aten::softmax", "aten::addmm"}));
        QCOMPARE(column(proxy, KernelStatsModel::TotalColumn), (QStringList{"0.50", "10.0", "11.0", "18.0"}));
        proxy.sort(KernelStatsModel::CallsColumn, Qt::DescendingOrder);
        QCOMPARE(column(proxy, KernelStatsModel::CallsColumn), (QStringList{"2", "2", "1", "1"}));
        proxy.sort(KernelStatsModel::MaxColumn, Qt::DescendingOrder);
        QCOMPARE(column(proxy, KernelStatsModel::KeyColumn).first(), QStringLiteral("aten::gelu"));
        proxy.sort(KernelStatsModel::KeyColumn, Qt::AscendingOrder);
        QCOMPARE(column(proxy, KernelStatsModel::KeyColumn),
                 (QStringList{"aten::add", "aten::addmm", "aten::gelu", "aten::softmax"}));

        // The filter box: substring on the key column.
        proxy.setFilterKeyColumn(KernelStatsModel::KeyColumn);
        proxy.setFilterFixedString(QStringLiteral("SOFT"));
        proxy.setFilterCaseSensitivity(Qt::CaseInsensitive);
        QCOMPARE(column(proxy, KernelStatsModel::KeyColumn), QStringList{"aten::softmax"});
        proxy.setFilterRegularExpression(
            QRegularExpression(QStringLiteral("^aten::add"), QRegularExpression::CaseInsensitiveOption));
        QCOMPARE(column(proxy, KernelStatsModel::KeyColumn), (QStringList{"aten::add", "aten::addmm"}));
    }

    void comparisonRowsAndTotal()
    {
        ComparisonModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.outputErrorText(), QString());

        const auto baseline = runOf(kBaseline);
        const auto plan = runOf(kPlan);
        baseline->outputValues = {{1.0f, 2.0f, -4.0f}};
        plan->outputValues = {{1.0f, 2.5f, -4.0f}};
        model.setComparison(kforge::compare(*baseline, *plan));

        // By function, ordered by baseline time, then the total.
        QCOMPARE(column(model, ComparisonModel::KeyColumn),
                 (QStringList{"linear", "softmax", "gelu", "(no function)", "mul", "Total"}));
        QCOMPARE(column(model, ComparisonModel::SpeedupColumn),
                 (QStringList{"1.00×", "0.69×", "2.00×", "1.00×", "—", "0.98×"}));
        QCOMPARE(column(model, ComparisonModel::ChangeColumn),
                 (QStringList{"0.0 %", "+45.5 %", "-50.0 %", "0.0 %", "new", "+1.8 %"}));
        QCOMPARE(model.index(5, ComparisonModel::BaselineColumn).data(ComparisonModel::SortRole).toDouble(), 39.5);
        QCOMPARE(model.index(5, ComparisonModel::PlanColumn).data(ComparisonModel::SortRole).toDouble(), 40.2);
        QVERIFY(model.index(5, 0).data(ComparisonModel::IsTotalRole).toBool());
        QVERIFY(!model.index(0, 0).data(ComparisonModel::IsTotalRole).toBool());
        QCOMPARE(model.outputErrorText(), QStringLiteral("max |Δ| 0.5, max rel. 0.25"));
        QCOMPARE(model.index(5, ComparisonModel::ErrorColumn).data().toString(), model.outputErrorText());
        QCOMPARE(model.index(0, ComparisonModel::ErrorColumn).data().toString(), QString());

        model.setGrouping(ComparisonModel::Grouping::Module);
        QCOMPARE(model.headerData(ComparisonModel::KeyColumn, Qt::Horizontal).toString(), QStringLiteral("Module"));
        QCOMPARE(column(model, ComparisonModel::KeyColumn),
                 (QStringList{"blocks.0.attn", "blocks.0.mlp", "(root)", "Total"}));

        baseline->outputValues = {{1.0f, 2.0f}};
        model.setComparison(kforge::compare(*baseline, *plan));
        QCOMPARE(model.outputErrorText(), QStringLiteral("not comparable"));
        model.setComparison(std::nullopt);
        QCOMPARE(model.rowCount(), 0);
    }

    // Colour follows the speed verdict: a 2x gelu and a 1.45x slower softmax stand out of ±15% noise, the total's
    // +1.8% does not, and neither does a row on one side only.
    void comparisonColours()
    {
        ComparisonModel model;
        model.setComparison(
            kforge::compare(*iterationsOf(kBaseline, kBaselineNoise), *iterationsOf(kPlan, kPlanNoise)));
        const auto verdict = [&](int row) {
            return model.index(row, ComparisonModel::KeyColumn).data(ComparisonModel::VerdictRole).toInt();
        };
        QCOMPARE(model.index(2, ComparisonModel::KeyColumn).data().toString(), QStringLiteral("gelu"));
        QCOMPARE(verdict(0), int(ComparisonModel::Unchanged)); // linear
        QCOMPARE(verdict(1), int(ComparisonModel::Slower));    // softmax
        QCOMPARE(verdict(2), int(ComparisonModel::Faster));    // gelu
        QCOMPARE(verdict(4), int(ComparisonModel::Unchanged)); // mul: only in the plan
        QCOMPARE(verdict(5), int(ComparisonModel::Unchanged)); // total: +1.8 %, within the noise
        QVERIFY(model.index(5, ComparisonModel::SpeedupColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .startsWith(QStringLiteral("no detectable change: median speedup")));
        QVERIFY(model.index(2, ComparisonModel::SpeedupColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("95% interval")));

        // Unchanged rows keep the palette's colours.
        QVERIFY(!model.index(0, ComparisonModel::KeyColumn).data(Qt::BackgroundRole).isValid());
        QVERIFY(!model.index(0, ComparisonModel::SpeedupColumn).data(Qt::ForegroundRole).isValid());
        QVERIFY(!model.index(5, ComparisonModel::KeyColumn).data(Qt::BackgroundRole).isValid());
        const QColor faster =
            model.index(2, ComparisonModel::KeyColumn).data(Qt::BackgroundRole).value<QBrush>().color();
        const QColor slower =
            model.index(1, ComparisonModel::KeyColumn).data(Qt::BackgroundRole).value<QBrush>().color();
        QVERIFY2(faster.green() > faster.red() && slower.red() > slower.green(),
                 qPrintable(faster.name() + QLatin1Char(' ') + slower.name()));
        // Translucent: the tint blends into a light or a dark base alike.
        QVERIFY(faster.alpha() < 128 && slower.alpha() < 128);
        const QColor fasterText =
            model.index(2, ComparisonModel::SpeedupColumn).data(Qt::ForegroundRole).value<QBrush>().color();
        const QColor slowerText =
            model.index(1, ComparisonModel::SpeedupColumn).data(Qt::ForegroundRole).value<QBrush>().color();
        QVERIFY(fasterText.green() > fasterText.red() && slowerText.red() > slowerText.green());
        // Mid-tones: neither near white nor near black, so they read on both palettes.
        for (const QColor& c : {fasterText, slowerText})
            QVERIFY2(c.lightness() > 60 && c.lightness() < 190, qPrintable(c.name()));
    }

    // Speedup and Change are one estimator: the Change column is what the median of the paired ratios says, not the
    // ratio of the two sides' medians (here equal: the desktop once showed 0.99x beside a bold -14.4 %).
    void speedupAndChangeComeFromOneEstimator()
    {
        ComparisonModel model;
        model.setComparison(kforge::compare(*iterationsOf(kBaseline, {1, 2, 3, 4, 5, 6, 7}),
                                            *iterationsOf(kBaseline, {7, 1, 2, 3, 4, 5, 6})));
        const int total = model.rowCount() - 1;
        QCOMPARE(model.index(total, ComparisonModel::SpeedupColumn).data().toString(), QStringLiteral("1.25×"));
        QCOMPARE(model.index(total, ComparisonModel::ChangeColumn).data().toString(), QStringLiteral("-20.0 %"));
        for (int row = 0; row < total; ++row) {
            const double speedup =
                model.index(row, ComparisonModel::SpeedupColumn).data(ComparisonModel::SortRole).toDouble();
            const double change =
                model.index(row, ComparisonModel::ChangeColumn).data(ComparisonModel::SortRole).toDouble();
            QVERIFY2(std::abs(change - (1.0 / speedup - 1.0)) < 1e-9, qPrintable(QString::number(row)));
        }
    }

    // A comparison whose spread could only detect changes far above 25% is too noisy to judge: nothing coloured, the
    // tooltip says why, even for a gelu twice as fast.
    void tooNoisyToJudgeColoursNothing()
    {
        ComparisonModel model;
        model.setComparison(kforge::compare(*iterationsOf(kBaseline, {1, 3, 1, 3, 1, 3, 1, 3}),
                                            *iterationsOf(kPlan, {3, 1, 3, 1, 3, 1, 3, 1})));
        for (int row = 0; row < model.rowCount(); ++row) {
            QCOMPARE(model.index(row, ComparisonModel::KeyColumn).data(ComparisonModel::VerdictRole).toInt(),
                     int(ComparisonModel::Unchanged));
            QVERIFY(!model.index(row, ComparisonModel::KeyColumn).data(Qt::BackgroundRole).isValid());
        }
        QCOMPARE(model.index(2, ComparisonModel::KeyColumn).data().toString(), QStringLiteral("gelu"));
        const QString tip = model.index(2, ComparisonModel::SpeedupColumn).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.startsWith(QStringLiteral("too noisy to judge")) && tip.contains(QStringLiteral("25% bound")),
                 qPrintable(tip));
    }

    // While a measurement runs the worker tells the UI thread of its first and last step and otherwise at most every
    // 100 ms: each message repaints on the UI thread, which competes with the forwards for the cores.
    void progressIsThrottledWhileMeasuring()
    {
        kforge::ui::ProgressThrottle throttle;
        QVERIFY(throttle.due(1, 26));
        int told = 0;
        for (int done = 2; done < 26; ++done)
            told += throttle.due(done, 26);
        QCOMPARE(told, 0); // 24 steps in well under 100 ms
        QVERIFY(throttle.due(26, 26));
        QTest::qWait(kforge::ui::kProgressIntervalMs + 20);
        QVERIFY(throttle.due(3, 26));
    }

    // One iteration per side is no evidence: a large change is shown but not coloured.
    void comparisonWithoutEnoughIterationsColoursNothing()
    {
        ComparisonModel model;
        model.setComparison(kforge::compare(*runOf(kBaseline), *runOf(kPlan)));
        for (int row = 0; row < model.rowCount(); ++row)
            QCOMPARE(model.index(row, ComparisonModel::KeyColumn).data(ComparisonModel::VerdictRole).toInt(),
                     int(ComparisonModel::Unchanged));
        QVERIFY(model.index(2, ComparisonModel::SpeedupColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .startsWith(QStringLiteral("No verdict")));
    }

    // The whole forward gets one verdict per plan: with a benchmark of the compared plan the comparison's line keeps
    // its profiled times and leaves the verdict to the benchmark, even when the two measurements disagree (here the
    // profiled rounds say faster and the benchmark's say no detectable change); results of different plans say which
    // is of an earlier plan.
    void comparisonAndBenchmarkGiveOneVerdictPerPlan()
    {
        kforge::Comparison comparison;
        comparison.baselineTotalUs = 1000;
        comparison.planTotalUs = 800;
        comparison.speed = kforge::compareSpeed(std::vector<double>(20, 10.0), std::vector<double>(20, 8.0));
        QCOMPARE(comparison.speed.verdict, kforge::SpeedVerdict::Faster);
        kforge::BenchmarkResult benchmark;
        benchmark.baselineMs = benchmark.planMs = std::vector<double>(20, 1.0);
        for (size_t i = 0; i < benchmark.planMs.size(); ++i)
            benchmark.planMs[i] = i % 2 ? 0.9 : 1.1; // half the rounds each way
        benchmark.speed = kforge::compareSpeed(benchmark.baselineMs, benchmark.planMs);
        QCOMPARE(benchmark.speed.verdict, kforge::SpeedVerdict::NoDetectableChange);

        kforge::Plan plan;
        plan.entries.push_back(kforge::parseProvideSpec("blocks.0:gelu:AtenGeluProvider"));
        kforge::Plan samePlan = plan;
        samePlan.entries.front().note = "a note changes nothing that runs";
        samePlan.entries.push_back(kforge::parseProvideSpec(":relu:AtenReluProvider"));
        samePlan.entries.back().enabled = false;
        QVERIFY(kforge::ui::sameEnabledEntries(plan, samePlan));
        kforge::Plan otherPlan = plan;
        otherPlan.entries.front().scope = "blocks.1";
        QVERIFY(!kforge::ui::sameEnabledEntries(plan, otherPlan));

        const QString faster = QStringLiteral("faster"), noChange = QStringLiteral("no detectable change");
        auto lines = wholeForwardLines(&comparison, plan, &benchmark, samePlan, NewerResult::Benchmark, "0");
        QVERIFY2(!lines.comparison.contains(faster) && !lines.comparison.contains(noChange),
                 qPrintable(lines.comparison));
        QVERIFY2(lines.comparison.contains(QStringLiteral("profiled")), qPrintable(lines.comparison));
        QVERIFY2(lines.benchmark.contains(noChange), qPrintable(lines.benchmark));
        // Whichever came last: still one verdict.
        lines = wholeForwardLines(&comparison, plan, &benchmark, samePlan, NewerResult::Comparison, "0");
        QVERIFY2(!lines.comparison.contains(faster), qPrintable(lines.comparison));

        lines = wholeForwardLines(&comparison, plan, &benchmark, otherPlan, NewerResult::Benchmark, "0");
        QVERIFY2(lines.comparison.startsWith(QStringLiteral("Of an earlier plan")) && lines.comparison.contains(faster),
                 qPrintable(lines.comparison));
        QVERIFY2(!lines.benchmark.startsWith(QStringLiteral("Of an earlier plan")), qPrintable(lines.benchmark));
        lines = wholeForwardLines(&comparison, plan, &benchmark, otherPlan, NewerResult::Comparison, "0");
        QVERIFY2(lines.benchmark.startsWith(QStringLiteral("Of an earlier plan")), qPrintable(lines.benchmark));
        QVERIFY2(!lines.comparison.startsWith(QStringLiteral("Of an earlier plan")), qPrintable(lines.comparison));

        // Alone, each keeps its verdict.
        lines = wholeForwardLines(&comparison, plan, nullptr, {}, NewerResult::Comparison, "0");
        QVERIFY2(lines.comparison.contains(faster), qPrintable(lines.comparison));
        QVERIFY(lines.benchmark.isEmpty());
        lines = wholeForwardLines(nullptr, {}, &benchmark, plan, NewerResult::Benchmark, "0");
        QVERIFY(lines.comparison.isEmpty());
        QVERIFY2(lines.benchmark.contains(noChange), qPrintable(lines.benchmark));
    }

    // The timeline's details: a record's own fields with its forward counted from 1, and a span's time per function
    // and module from the records inside it, clipped to it.
    void timelineDetails()
    {
        kforge::ProfileRun run;
        const auto add = [&](const char* name, const char* function, const char* module, std::int64_t start,
                             std::int64_t duration) {
            kforge::KernelRecord r;
            r.name = r.op = name;
            r.function = function;
            r.modulePath = module;
            r.provider = *function ? "original" : "";
            r.startNs = start;
            r.durationNs = duration;
            r.iteration = 1;
            run.records.push_back(r);
        };
        add("aten::addmm", "linear", "blocks.0.mlp", 0, 4000);
        add("aten::gelu", "gelu", "blocks.0.mlp", 4000, 2000);
        add("aten::add", "", "", 6000, 4000);
        const QString record = kforge::ui::recordDetails(run, 1);
        QVERIFY2(record.startsWith(QStringLiteral("aten::gelu — cpu_op · module blocks.0.mlp · function gelu served by "
                                                  "original")) &&
                     record.endsWith(QStringLiteral("forward 2")),
                 qPrintable(record));
        QVERIFY(kforge::ui::recordDetails(run, 7).isEmpty());

        // 2 µs of addmm, all of gelu, 1 µs of add: 5 µs recorded.
        const QString span = kforge::ui::spanSummary(run, 2000, 7000);
        QVERIFY2(span.contains(QStringLiteral("(5.00 µs), 5.00 µs recorded")), qPrintable(span));
        QVERIFY2(span.contains(QStringLiteral("linear 2.00 µs (40.0%)")) &&
                     span.contains(QStringLiteral("(no function) 1.00 µs (20.0%)")) &&
                     span.contains(QStringLiteral("blocks.0.mlp 4.00 µs (80.0%)")),
                 qPrintable(span));
        QVERIFY2(kforge::ui::spanSummary(run, 20000, 30000).contains(QStringLiteral("nothing recorded")),
                 qPrintable(kforge::ui::spanSummary(run, 20000, 30000)));
    }
};

QTEST_GUILESS_MAIN(TestProfileModels)
#include "tst_profile_models.moc"
