// SPDX-License-Identifier: Apache-2.0
// The profile page's two pictures of a run, on synthetic runs written as text fixtures: the time-share chart
// (top N + "other", by function, module or kernel, empty states) and the timeline (lanes, click to select,
// wheel zoom around the cursor, drag to pan, selection scrolled into view, PNG export, a 100k-record run).
#include "item_models/profile_results.h"
#include "item_models/time_axis.h"
#include "item_models/time_share.h"
#include "item_models/timeline_details.h"
#include "item_models/timeline_layout.h"
#include "views/time_share_chart.h"
#include "item_models/semantic_colors.h"
#include "views/timeline_view.h"
#include "views/flame_graph_view.h"

#include <QApplication>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <memory>
#include <sstream>

using kforge::GroupBy;
using kforge::ProfileRun;
using kforge::ui::TimelineLayout;
using kforge::ui::TimelineView;
using kforge::ui::TimeShareChart;

namespace {

// One item per line: KIND START_NS DURATION_NS WHERE NAME [MODULE FUNCTION PROVIDER] ("-" is empty).
// KIND module/function is a host range (NAME is the module path or the function; only PROVIDER is read),
// kernel/cpu_op a record. WHERE is tN (host thread N) or D:S (device D, stream S).
std::shared_ptr<ProfileRun> parseRun(const char* text)
{
    auto run = std::make_shared<ProfileRun>();
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        std::string kind, where, name, module = "-", function = "-", provider = "-";
        std::int64_t start = 0, duration = 0;
        if (!(fields >> kind >> start >> duration >> where >> name))
            continue;
        fields >> module >> function >> provider;
        for (std::string* s : {&name, &module, &function, &provider})
            if (*s == "-")
                s->clear();
        std::uint64_t thread = 0;
        int device = -1;
        std::uint32_t stream = 0;
        if (where[0] == 't')
            thread = std::stoull(where.substr(1));
        else {
            device = std::stoi(where.substr(0, where.find(':')));
            stream = static_cast<std::uint32_t>(std::stoul(where.substr(where.find(':') + 1)));
        }
        if (kind == "module" || kind == "function") {
            run->ranges.push_back({kind, name, provider, start, duration, thread, 0});
            continue;
        }
        kforge::KernelRecord r;
        r.kind = kind;
        r.name = name;
        r.modulePath = module;
        r.function = function;
        r.op = name;
        r.provider = provider;
        r.startNs = start;
        r.durationNs = duration;
        r.thread = thread;
        r.device = device;
        r.stream = stream;
        run->records.push_back(r);
    }
    return run;
}

// A GPU forward on host thread 7: root scope, enc nested in it, a gelu call, kernels on device 0 stream 7
// (records 0..2) and one on stream 9 (record 3).
const char* const kGpuRun = R"(
module   0      100000 t7   -
module   10000  80000  t7   enc
function 20000  10000  t7   gelu    - - original
function 50000  20000  t7   linear  - - cublas_lt
kernel   20000  10000  0:7  k_gelu  enc gelu original
kernel   50000  20000  0:7  k_gemm  enc linear cublas_lt
kernel   72000  1000   0:7  k_add   enc - -
kernel   60000  30000  0:9  k_copy  -   - -
)";

// Function shares: (no function) 50 %, gelu 30 %, linear 20 %; modules: enc 70 %, root 30 %.
const char* const kShareRun = R"(
cpu_op 0    5000 t1 aten::add    -   -      -
cpu_op 5000 3000 t1 aten::gelu   enc gelu   original
cpu_op 8000 2000 t1 aten::addmm  enc linear original
)";

std::shared_ptr<ProfileRun> manyFunctionsRun(int functions)
{
    // Function f<i> takes (functions - i) µs, so the order of the bars is known.
    auto run = std::make_shared<ProfileRun>();
    std::int64_t t = 0;
    for (int i = 0; i < functions; ++i) {
        kforge::KernelRecord r;
        r.name = "aten::op";
        r.function = "f" + std::to_string(i);
        r.modulePath = "m" + std::to_string(i % 3);
        r.startNs = t;
        r.durationNs = (functions - i) * 1000;
        t += r.durationNs;
        run->records.push_back(r);
    }
    return run;
}

// Eight iterations of gelu and silu at the root: gelu takes `geluUs` (±10% noise, the same in every run), silu 100 µs
// with the noise of `silu` (a stall multiplies one iteration).
std::shared_ptr<ProfileRun> flameRounds(double geluUs, const std::vector<double>& silu)
{
    const std::vector<double> noise{1.0, 1.1, 0.9, 1.05, 0.95, 1.08, 0.92, 1.02};
    auto run = std::make_shared<ProfileRun>();
    run->iterations = int(noise.size());
    std::int64_t t = 0;
    for (size_t i = 0; i < noise.size(); ++i)
        for (const auto& [function, us] : {std::pair{"gelu", geluUs * noise[i]}, std::pair{"silu", 100.0 * silu[i]}}) {
            kforge::KernelRecord r;
            r.name = std::string("aten::") + function;
            r.function = function;
            r.iteration = int(i);
            r.startNs = t;
            r.durationNs = std::int64_t(us * 1000);
            t += r.durationNs;
            run->records.push_back(r);
        }
    return run;
}

void sendWheel(QWidget* widget, QPoint pos, QPoint angle, Qt::KeyboardModifiers modifiers = Qt::NoModifier)
{
    QWheelEvent event(pos, widget->mapToGlobal(pos), QPoint(), angle, Qt::NoButton, modifiers, Qt::NoScrollPhase,
                      false);
    QApplication::sendEvent(widget, &event);
}

// `run` with what a profile's results derive from it (flame graphs, whole-run tables).
kforge::ui::RunResults resultsOf(std::shared_ptr<const ProfileRun> run)
{
    return kforge::ui::makeProfileResults(std::move(run), nullptr, kforge::ui::tablesToCompute(false, {}))->baseline;
}

} // namespace

class TestProfileWidgets : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void timeShareSlicesKeepTopAndSumTheRest();
    void chartGroupsByFunctionAndModule();
    void chartShowsEmptyStates();
    void chartFollowsPalette();
    void timeAxisTicksUseNiceStepsAndUnits();
    void layoutPutsLanesAndNestsScopes();
    void clickOnRecordEmitsItsIndex();
    void wheelZoomKeepsTimeUnderCursor();
    void dragPansAndIsNoClick();
    void keysZoomPanAndReset();
    void selectRecordScrollsIntoView();
    void savePngWritesFileOrReportsError();
    void hundredThousandRecordsPaint();
    void forwardsAreMarkedAndZoomable();
    void semanticColorsFollowThePalette();
    void shiftDragMeasuresASpan();
    void memoryLaneDrawsLiveBytesWithThePeakMarked();
    void differentialFlameGraphColoursOnlyVerdicts();
    void flameGraphLabelsSayWhichModule();
};

void TestProfileWidgets::timeShareSlicesKeepTopAndSumTheRest()
{
    const auto run = manyFunctionsRun(16);
    const auto slices = kforge::ui::timeShareSlices(run->records, GroupBy::Function, 12);
    QCOMPARE(slices.size(), size_t(13));
    QCOMPARE(slices.front().key, QStringLiteral("f0"));
    QCOMPARE(slices[11].key, QStringLiteral("f11"));
    QVERIFY(slices.back().isOther);
    QCOMPARE(slices.back().groups, 4);
    QCOMPARE(slices.back().totalUs, 4.0 + 3 + 2 + 1);
    double shares = 0;
    for (const auto& s : slices)
        shares += s.share;
    QVERIFY(qAbs(shares - 1.0) < 1e-9);
    // One group beyond the top keeps its name: "other" would hide it for nothing.
    QCOMPARE(kforge::ui::timeShareSlices(manyFunctionsRun(13)->records, GroupBy::Function, 12).back().key,
             QStringLiteral("f12"));
    // Geometry grouping is treated as kernel grouping: every record is "aten::op".
    QCOMPARE(kforge::ui::timeShareSlices(run->records, GroupBy::KernelGeometry, 12).size(), size_t(1));
}

void TestProfileWidgets::chartGroupsByFunctionAndModule()
{
    TimeShareChart chart;
    QSignalSpy grouping(&chart, &TimeShareChart::groupingChanged);
    chart.setRun(resultsOf(parseRun(kShareRun)));
    QCOMPARE(chart.grouping(), GroupBy::Function);
    QCOMPARE(chart.sliceLabels(), (QStringList{"(no function)  50.0 %", "gelu  30.0 %", "linear  20.0 %"}));
    QVERIFY(chart.emptyText().isEmpty());

    chart.setGrouping(GroupBy::Module);
    QCOMPARE(grouping.count(), 1);
    QCOMPARE(chart.sliceLabels(), (QStringList{"(root)  50.0 %", "enc  50.0 %"}));

    chart.setGrouping(GroupBy::KernelGeometry); // treated as Kernel
    QCOMPARE(chart.grouping(), GroupBy::Kernel);
    QCOMPARE(chart.sliceCount(), 3);
    QCOMPARE(chart.sliceLabels().front(), QStringLiteral("aten::add  50.0 %"));

    chart.setGrouping(GroupBy::Function);
    chart.setRun(resultsOf(manyFunctionsRun(20)));
    QCOMPARE(chart.sliceCount(), TimeShareChart::DefaultTopCount + 1);
    QVERIFY(chart.sliceLabels().back().startsWith("other  "));
    // "other" (f12..f19: 36 of 210 µs) is larger than the first bar (f0: 20 µs): the axis reaches it.
    QVERIFY(chart.slices().back().share > chart.slices().front().share);
    QVERIFY2(chart.percentAxisMax() >= chart.slices().back().share * 100.0,
             qPrintable(QString::number(chart.percentAxisMax())));
    chart.setTopCount(3);
    QCOMPARE(chart.sliceCount(), 4);
}

void TestProfileWidgets::chartShowsEmptyStates()
{
    TimeShareChart chart;
    QCOMPARE(chart.sliceCount(), 0);
    QVERIFY(!chart.emptyText().isEmpty());
    chart.setRun(resultsOf(parseRun(kShareRun)));
    QCOMPARE(chart.sliceCount(), 3);
    chart.setRun(resultsOf(std::make_shared<ProfileRun>())); // a run without records
    QCOMPARE(chart.sliceCount(), 0);
    QVERIFY(chart.emptyText().contains("no kernels"));
    chart.setRun(resultsOf(nullptr));
    QCOMPARE(chart.sliceCount(), 0);
    QVERIFY(chart.emptyText().contains("No profile"));
}

void TestProfileWidgets::chartFollowsPalette()
{
    TimeShareChart chart;
    chart.setRun(resultsOf(parseRun(kShareRun)));
    QPalette dark = chart.palette();
    dark.setColor(QPalette::Window, QColor(30, 30, 30));
    dark.setColor(QPalette::Base, QColor(20, 20, 20));
    chart.setPalette(dark);
    QVERIFY(chart.usesDarkTheme());
    QCOMPARE(chart.sliceCount(), 3); // the bars survive the theme change
    QPalette light = dark;
    light.setColor(QPalette::Window, QColor(240, 240, 240));
    light.setColor(QPalette::Base, Qt::white);
    chart.setPalette(light);
    QVERIFY(!chart.usesDarkTheme());
}

void TestProfileWidgets::timeAxisTicksUseNiceStepsAndUnits()
{
    auto ticks = kforge::ui::timeTicks(0, 1e6, 5); // 1 ms in about 5 steps: every 200 µs
    QCOMPARE(ticks.size(), size_t(6));
    QCOMPARE(ticks[0].label, QStringLiteral("0.0 ms"));
    QCOMPARE(ticks[1].label, QStringLiteral("0.2 ms"));
    ticks = kforge::ui::timeTicks(0, 900e3, 9);
    QCOMPARE(ticks[1].label, QStringLiteral("100 µs"));
    ticks = kforge::ui::timeTicks(1.5e6, 3.5e6, 4); // every 0.5 ms
    QCOMPARE(ticks.front().label, QStringLiteral("1.5 ms"));
    QCOMPARE(ticks[1].ns, 2e6);
    ticks = kforge::ui::timeTicks(0, 50, 5);
    QCOMPARE(ticks[1].label, QStringLiteral("10 ns"));
}

void TestProfileWidgets::layoutPutsLanesAndNestsScopes()
{
    const auto run = parseRun(kGpuRun);
    const TimelineLayout layout(*run);
    QCOMPARE(layout.lanes().size(), size_t(4));
    QCOMPARE(layout.lanes()[0].label, QStringLiteral("Thread 1 · modules"));
    QCOMPARE(layout.lanes()[0].rowCount, 2); // enc one row below the root
    QCOMPARE(layout.lanes()[1].label, QStringLiteral("Thread 1 · functions"));
    QCOMPARE(layout.lanes()[2].label, QStringLiteral("GPU 0 · stream 7"));
    QCOMPARE(layout.lanes()[3].label, QStringLiteral("GPU 0 · stream 9"));
    QCOMPARE(layout.locate(1), std::make_pair(layout.lanes()[2].firstRow, 1));
    QCOMPARE(layout.locate(3).first, layout.lanes()[3].firstRow);
    QCOMPARE(layout.locate(99), std::make_pair(-1, -1));
    QCOMPARE(layout.beginNs(), std::int64_t(0));
    QCOMPARE(layout.endNs(), std::int64_t(100000));
    const int streamRow = layout.lanes()[2].firstRow;
    QCOMPARE(layout.firstEndingAfter(streamRow, 30000), size_t(1)); // k_gelu ends at 30000 exactly
    QCOMPARE(layout.firstEndingAfter(streamRow, 80000), size_t(3));

    // A CPU run: ops per host thread, nested ops one row down.
    const auto cpu = parseRun(R"(
cpu_op 0   100 t5 aten::linear
cpu_op 10  50  t5 aten::addmm
cpu_op 0   20  t6 aten::gelu
)");
    const TimelineLayout cpuLayout(*cpu);
    QCOMPARE(cpuLayout.lanes().size(), size_t(2));
    QCOMPARE(cpuLayout.lanes()[0].label, QStringLiteral("CPU ops · thread 1"));
    QCOMPARE(cpuLayout.lanes()[0].rowCount, 2);
    QCOMPARE(cpuLayout.locate(1).first, cpuLayout.lanes()[0].firstRow + 1);
}

void TestProfileWidgets::clickOnRecordEmitsItsIndex()
{
    TimelineView view;
    view.resize(900, 300);
    view.setRun(parseRun(kGpuRun));
    QSignalSpy clicked(&view, &TimelineView::recordClicked);

    const QRect gemm = view.recordRect(1);
    QVERIFY(view.plotRect().contains(gemm.center()));
    // The record really is painted there: not the background colour.
    const QImage image = view.grab().toImage();
    QVERIFY(image.pixelColor(gemm.center()) != view.palette().color(QPalette::Base));

    QTest::mouseClick(&view, Qt::LeftButton, {}, gemm.center());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.at(0).at(0).toInt(), 1);
    QCOMPARE(view.selectedRecord(), 1);
    QVERIFY(view.grab().toImage().pixelColor(gemm.center()) != image.pixelColor(gemm.center())); // highlighted

    // A click on a module scope selects it as a click on an op does, and says which range it is.
    QSignalSpy rangeClicked(&view, &TimelineView::rangeClicked);
    const QPoint onRange(gemm.center().x(), view.plotRect().top() + 3);
    QCOMPARE(view.recordAt(onRange), -1);
    const QImage before = view.grab().toImage();
    QTest::mouseClick(&view, Qt::LeftButton, {}, onRange);
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(view.selectedRecord(), -1);
    QCOMPARE(rangeClicked.count(), 1);
    const int range = rangeClicked.at(0).at(0).toInt();
    QCOMPARE(view.selectedRange(), range);
    QVERIFY(view.rangeRect(range).contains(onRange));
    QVERIFY(view.grab().toImage().pixelColor(onRange) != before.pixelColor(onRange)); // highlighted
    const auto run = parseRun(kGpuRun);
    QVERIFY2(kforge::ui::rangeDetails(*run, range).startsWith(QStringLiteral("(root) — module scope")) ||
                 kforge::ui::rangeDetails(*run, range).startsWith(QStringLiteral("enc — module scope")),
             qPrintable(kforge::ui::rangeDetails(*run, range)));
    // A function call's bar names its provider.
    QVERIFY2(kforge::ui::rangeDetails(*run, 3).startsWith(QStringLiteral("linear — function call · served by "
                                                                         "cublas_lt")),
             qPrintable(kforge::ui::rangeDetails(*run, 3)));
    QVERIFY(kforge::ui::rangeDetails(*run, 3).contains(QStringLiteral("forward 1")));

    // The stream-9 copy starts under the gemm: the click picks the lane under the cursor.
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.recordRect(3).center());
    QCOMPARE(clicked.last().at(0).toInt(), 3);
}

void TestProfileWidgets::wheelZoomKeepsTimeUnderCursor()
{
    TimelineView view;
    view.resize(900, 300);
    view.setRun(parseRun(kGpuRun));
    const double span = view.visibleEndNs() - view.visibleStartNs();
    const QPoint cursor(view.plotRect().left() + view.plotRect().width() / 3, view.plotRect().center().y());
    const double under = view.timeForX(cursor.x());

    sendWheel(&view, cursor, QPoint(0, 240)); // two notches in
    const double zoomed = view.visibleEndNs() - view.visibleStartNs();
    QVERIFY2(zoomed < span * 0.7, qPrintable(QString("%1 -> %2").arg(span).arg(zoomed)));
    QVERIFY(qAbs(view.timeForX(cursor.x()) - under) < 1e-6 * span);

    sendWheel(&view, cursor, QPoint(0, -240)); // and out again
    QVERIFY(qAbs((view.visibleEndNs() - view.visibleStartNs()) - span) < 1e-6 * span);

    // Horizontal scrolling pans without zooming.
    sendWheel(&view, cursor, QPoint(0, 480));
    const double before = view.visibleStartNs();
    const double width = view.visibleEndNs() - view.visibleStartNs();
    sendWheel(&view, cursor, QPoint(-120, 0));
    QVERIFY(view.visibleStartNs() > before);
    QVERIFY(qAbs((view.visibleEndNs() - view.visibleStartNs()) - width) < 1e-6 * width);
}

void TestProfileWidgets::dragPansAndIsNoClick()
{
    TimelineView view;
    view.resize(900, 300);
    view.setRun(parseRun(kGpuRun));
    view.setVisibleRange(40000, 60000);
    QSignalSpy clicked(&view, &TimelineView::recordClicked);
    const double nsPerPixel = (view.visibleEndNs() - view.visibleStartNs()) / view.plotRect().width();

    const QPoint from = view.recordRect(1).center(); // starts on a record: still a drag, not a click
    QTest::mousePress(&view, Qt::LeftButton, {}, from);
    QTest::mouseMove(&view, from + QPoint(50, 0));
    QTest::mouseMove(&view, from + QPoint(100, 0));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, from + QPoint(100, 0));
    QVERIFY(qAbs(view.visibleStartNs() - (40000 - 100 * nsPerPixel)) < 1e-6 * nsPerPixel * 100);
    QCOMPARE(clicked.count(), 0);
    QCOMPARE(view.selectedRecord(), -1);

    // A double-click fits the whole run again.
    QTest::mouseDClick(&view, Qt::LeftButton, {}, from);
    QVERIFY(view.visibleStartNs() <= 0);
    QVERIFY(view.visibleEndNs() >= 100000);
}

void TestProfileWidgets::keysZoomPanAndReset()
{
    TimelineView view;
    view.resize(900, 300);
    view.setRun(parseRun(kGpuRun));
    const double span = view.visibleEndNs() - view.visibleStartNs();
    QTest::keyClick(&view, Qt::Key_Plus);
    QVERIFY(view.visibleEndNs() - view.visibleStartNs() < span);
    const double start = view.visibleStartNs();
    QTest::keyClick(&view, Qt::Key_Right);
    QVERIFY(view.visibleStartNs() > start);
    QTest::keyClick(&view, Qt::Key_Left);
    QVERIFY(qAbs(view.visibleStartNs() - start) < 1e-6 * span);
    QTest::keyClick(&view, Qt::Key_Home);
    QVERIFY(qAbs(view.visibleEndNs() - view.visibleStartNs() - span) < 1e-6 * span);
}

void TestProfileWidgets::selectRecordScrollsIntoView()
{
    // Forty streams: the last lanes lie below the bottom of a 200 px view.
    std::string text;
    for (int s = 0; s < 40; ++s)
        text += "kernel " + std::to_string(s * 1000) + " 500 0:" + std::to_string(s) + " k" + std::to_string(s) + "\n";
    TimelineView view;
    view.resize(700, 200);
    view.setRun(parseRun(text.c_str()));
    QCOMPARE(view.laneLabels().size(), 40);
    view.setVisibleRange(0, 2000);
    QVERIFY(!view.plotRect().intersects(view.recordRect(39)));

    view.selectRecord(39);
    QCOMPARE(view.selectedRecord(), 39);
    const QRect box = view.recordRect(39);
    QVERIFY2(view.plotRect().contains(box),
             qPrintable(QString("%1,%2 %3x%4").arg(box.x()).arg(box.y()).arg(box.width()).arg(box.height())));
    QVERIFY(view.visibleEndNs() - view.visibleStartNs() < 2100); // the zoom is kept

    view.selectRecord(-1);
    QCOMPARE(view.selectedRecord(), -1);
    view.selectRecord(1000); // out of range clears too
    QCOMPARE(view.selectedRecord(), -1);
}

void TestProfileWidgets::savePngWritesFileOrReportsError()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TimelineView timeline;
    timeline.setRun(parseRun(kGpuRun));
    TimeShareChart chart;
    chart.setRun(resultsOf(parseRun(kShareRun)));
    const std::pair<QWidget*, std::function<bool(const QString&, QString*)>> widgets[] = {
        {&timeline, [&](const QString& p, QString* e) { return timeline.savePng(p, e); }},
        {&chart, [&](const QString& p, QString* e) { return chart.savePng(p, e); }},
    };
    int n = 0;
    for (const auto& [widget, save] : widgets) {
        const QString path = dir.filePath(QString("view%1.png").arg(n++));
        QString error;
        QVERIFY2(save(path, &error), qPrintable(error));
        const QImage image(path);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), widget->size() * widget->devicePixelRatio());
        QVERIFY(image.width() > 100 && image.height() > 50);

        error.clear();
        QVERIFY(!save(dir.filePath("missing/folder/view.png"), &error));
        QVERIFY(error.contains("missing/folder/view.png"));
    }
}

void TestProfileWidgets::hundredThousandRecordsPaint()
{
    // 100k CPU ops on two threads, each pair an op with one nested op, plus one GPU stream.
    auto run = std::make_shared<ProfileRun>();
    run->records.reserve(100000);
    for (int i = 0; i < 100000; ++i) {
        kforge::KernelRecord r;
        r.name = i % 2 ? "aten::addmm" : "aten::linear";
        r.function = "linear";
        r.provider = "original";
        r.thread = 1 + (i / 2) % 2;
        r.startNs = std::int64_t(i / 2) * 1000 + (i % 2 ? 100 : 0);
        r.durationNs = i % 2 ? 600 : 900;
        run->records.push_back(r);
    }
    TimelineView view;
    view.resize(1000, 400);
    view.setRun(run);
    QCOMPARE(view.laneLabels(), (QStringList{"CPU ops · thread 1", "CPU ops · thread 2"}));
    QVERIFY(!view.grab().isNull());
    sendWheel(&view, view.plotRect().center(), QPoint(0, 120 * 30)); // deep in: wide boxes with names
    QVERIFY(!view.grab().isNull());
    view.selectRecord(99999);
    QVERIFY(view.plotRect().intersects(view.recordRect(99999)));
    QCOMPARE(view.recordAt(view.recordRect(99999).center()), 99999);
    QVERIFY(!view.grab().isNull());
}

// Three measured forwards: the view knows where each begins and ends, F zooms to the forward in the middle of the
// view, Page Down/Up to the next/previous one, Home back to the whole run; painting the markers works.
void TestProfileWidgets::forwardsAreMarkedAndZoomable()
{
    auto run = std::make_shared<ProfileRun>();
    run->device = "cpu";
    run->iterations = 3;
    for (int iteration = 0; iteration < 3; ++iteration)
        for (int op = 0; op < 4; ++op) {
            kforge::KernelRecord r;
            r.name = "aten::op" + std::to_string(op);
            r.modulePath = "blocks." + std::to_string(op % 2) + ".attn";
            r.startNs = iteration * 10'000 + op * 2'000;
            r.durationNs = 1'500;
            r.iteration = iteration;
            run->records.push_back(r);
        }
    TimelineView view;
    view.resize(900, 300);
    view.setRun(run);
    QCOMPARE(view.forwardCount(), 3);
    QCOMPARE(view.forwardSpanNs(1), (std::pair<double, double>{10'000.0, 17'500.0}));
    QCOMPARE(view.forwardAt(12'000), 1);
    QCOMPARE(view.forwardAt(9'000), -1);
    const double whole = view.visibleEndNs() - view.visibleStartNs();

    QTest::keyClick(&view, Qt::Key_F); // the middle of the whole run lies in forward 2 (index 1)
    QVERIFY(view.visibleStartNs() < 10'000 && view.visibleStartNs() > 9'000);
    QVERIFY(view.visibleEndNs() > 17'500 && view.visibleEndNs() < 18'500);
    QTest::keyClick(&view, Qt::Key_PageDown);
    QCOMPARE(view.forwardAt((view.visibleStartNs() + view.visibleEndNs()) / 2), 2);
    QTest::keyClick(&view, Qt::Key_PageUp);
    QTest::keyClick(&view, Qt::Key_PageUp);
    QCOMPARE(view.forwardAt((view.visibleStartNs() + view.visibleEndNs()) / 2), 0);
    QTest::keyClick(&view, Qt::Key_Home);
    QVERIFY(qAbs(view.visibleEndNs() - view.visibleStartNs() - whole) < 1e-6 * whole);
    QVERIFY(!view.grab().isNull());
}

// Colours that carry meaning come from one helper and follow the theme: text that reads on a light base is dark,
// on a dark base light; faster is green and slower red in both; speedup 1 is the neutral button tone.
void TestProfileWidgets::semanticColorsFollowThePalette()
{
    using kforge::ui::Semantic;
    QPalette light(QColor(240, 240, 240));
    light.setColor(QPalette::Base, Qt::white);
    QPalette dark(QColor(50, 50, 50));
    dark.setColor(QPalette::Base, QColor(30, 30, 30));
    for (Semantic meaning :
         {Semantic::Leftover, Semantic::Error, Semantic::Stale, Semantic::Faster, Semantic::Slower}) {
        QVERIFY(kforge::ui::semanticTextColor(meaning, light).lightness() < 128);
        QVERIFY(kforge::ui::semanticTextColor(meaning, dark).lightness() > 128);
    }
    for (const QPalette& palette : {light, dark}) {
        const int faster = kforge::ui::speedupColor(2.0, palette).hslHue();
        const int slower = kforge::ui::speedupColor(0.5, palette).hslHue();
        QVERIFY2(faster > 90 && faster < 170, qPrintable(QString::number(faster)));
        QVERIFY2(slower < 20 || slower > 340, qPrintable(QString::number(slower)));
        QCOMPARE(kforge::ui::speedupColor(1.0, palette), palette.color(QPalette::Button));
        QVERIFY(kforge::ui::semanticTint(Semantic::Faster, palette).alpha() < 255);
    }
    QCOMPARE(kforge::ui::textColorOn(Qt::white), QColor(Qt::black));
    QCOMPARE(kforge::ui::textColorOn(QColor(20, 20, 60)), QColor(Qt::white));
}

// Shift+drag marks a time span (the view does not pan), Escape clears it; a plain drag still pans.
void TestProfileWidgets::shiftDragMeasuresASpan()
{
    TimelineView view;
    view.resize(900, 300);
    view.setRun(parseRun(kGpuRun));
    view.show();
    const QRect plot = view.plotRect();
    const QPoint from(plot.left() + 100, plot.center().y()), to(plot.left() + 300, plot.center().y());
    const double start = view.visibleStartNs();
    QTest::mousePress(&view, Qt::LeftButton, Qt::ShiftModifier, from);
    QTest::mouseMove(&view, to);
    QTest::mouseRelease(&view, Qt::LeftButton, Qt::ShiftModifier, to);
    QVERIFY(view.hasMeasuredSpan());
    QCOMPARE(view.visibleStartNs(), start); // measuring does not pan
    const auto [a, b] = view.measuredSpanNs();
    QVERIFY(qAbs(a - view.timeForX(from.x())) < 1e-6 * (b - a + 1));
    QVERIFY(qAbs(b - view.timeForX(to.x())) < 1e-6 * (b - a + 1));
    QVERIFY(!view.grab().isNull());
    QTest::keyClick(&view, Qt::Key_Escape);
    QVERIFY(!view.hasMeasuredSpan());
}

// The differential flame graph colours a frame only when its speed verdict is faster or slower: gelu, twice as fast
// in every iteration, is coloured; silu, 1.6x "faster" on average from one 6x stall in the baseline, stays grey.
void TestProfileWidgets::differentialFlameGraphColoursOnlyVerdicts()
{
    const std::vector<double> steady{1.0, 0.97, 1.03, 1.0, 0.98, 1.02, 1.01, 0.99};
    std::vector<double> stalled{1.0, 1.03, 0.97, 1.0, 1.02, 0.98, 0.99, 1.01};
    stalled[2] *= 6.0;
    kforge::ui::FlameGraphView view;
    view.resize(800, 200);
    view.setResults(kforge::ui::makeProfileResults(flameRounds(100.0, stalled), flameRounds(50.0, steady), {}), true,
                    true);
    QVERIFY(view.isDifferential());
    int gelu = -1, silu = -1;
    for (size_t i = 0; i < view.frames().size(); ++i) {
        if (view.frames()[i].name == "gelu")
            gelu = int(i);
        if (view.frames()[i].name == "silu")
            silu = int(i);
    }
    QVERIFY(gelu > 0 && silu > 0);
    QVERIFY(view.baselineUs(silu) > 1.5 * view.frames()[size_t(silu)].us); // the mean says 1.6x
    QCOMPARE(view.verdictOf(gelu), kforge::SpeedVerdict::Faster);
    QCOMPARE(view.verdictOf(silu), kforge::SpeedVerdict::NoDetectableChange);
    QVERIFY(view.frameToolTip(silu).contains(QStringLiteral("no detectable change")));
    // Which statistic a width is, and of how many forwards (the comparison's are medians).
    QVERIFY2(view.frameToolTip(silu).contains(QStringLiteral("per forward (the mean of 8 forward")),
             qPrintable(view.frameToolTip(silu)));
    const QImage image = view.grab().toImage();
    const QPoint siluCentre = view.frameRect(silu).center().toPoint();
    const QPoint geluCentre = view.frameRect(gelu).center().toPoint();
    // Labels are drawn from the left: sample each frame near its right edge, away from the text.
    const QColor grey = image.pixelColor(QPoint(int(view.frameRect(silu).right()) - 2, siluCentre.y()));
    const QColor green = image.pixelColor(QPoint(int(view.frameRect(gelu).right()) - 2, geluCentre.y()));
    QCOMPARE(grey.rgb(), view.palette().color(QPalette::Mid).rgb());
    QVERIFY2(green.green() > green.red(), qPrintable(green.name()));
}

// A module frame says which module it is: a list index with its container ("layer1.0", not "0") and the module's
// type; functions keep their names.
void TestProfileWidgets::flameGraphLabelsSayWhichModule()
{
    auto run = std::make_shared<ProfileRun>();
    run->iterations = 1;
    for (const auto& [path, type] : {std::pair{"", "ResNet"},
                                     {"layer1", "Sequential"},
                                     {"layer1.0", "Bottleneck"},
                                     {"layer1.0.conv2", "Conv2d"}}) {
        kforge::ModuleInfo m;
        m.path = path;
        m.typeName = type;
        run->modules.push_back(m);
    }
    kforge::KernelRecord r;
    r.modulePath = "layer1.0.conv2";
    r.function = "conv2d";
    r.name = "aten::conv2d";
    r.durationNs = 1000;
    run->records.push_back(r);
    r.modulePath = "";
    r.function = "linear";
    r.name = "aten::linear";
    r.durationNs = 3000;
    run->records.push_back(r);
    kforge::ui::FlameGraphView view;
    view.setResults(kforge::ui::makeProfileResults(run, nullptr, {}), false);
    // A search matches labels, types included, and says what share of the time its matches hold, counted once.
    view.setSearch(QStringLiteral("conv"));
    QCOMPARE(view.matchCount(), 3); // the module conv2, its function conv2d, the op aten::conv2d
    QCOMPARE(view.matchedShare(), 0.25);
    view.setSearch(QStringLiteral("bottleneck"));
    QCOMPARE(view.matchCount(), 1);
    QCOMPARE(view.matchedShare(), 0.25);
    view.setSearch(QString());
    QStringList labels;
    for (size_t i = 0; i < view.frames().size(); ++i)
        labels << view.frameLabel(int(i));
    const QString dot(QChar(0x00B7));
    QCOMPARE(labels,
             (QStringList{QStringLiteral("(root) %1 ResNet").arg(dot), QStringLiteral("layer1 %1 Sequential").arg(dot),
                          QStringLiteral("layer1.0 %1 Bottleneck").arg(dot), QStringLiteral("conv2 %1 Conv2d").arg(dot),
                          QStringLiteral("conv2d"), QStringLiteral("aten::conv2d"), QStringLiteral("linear"),
                          QStringLiteral("aten::linear")}));

    // A narrow frame shows what can be read: the module's name without its type, then that name cut while three of
    // its characters stay, then nothing ("l…" and a lone "…" were noise on a wide graph).
    const QFontMetrics metrics(view.font());
    const int bottleneck = 2;
    const auto widthOf = [&](const QString& text) { return metrics.horizontalAdvance(text); };
    QCOMPARE(view.paintedLabel(bottleneck, metrics, 1000), labels[bottleneck]);
    QCOMPARE(view.paintedLabel(bottleneck, metrics, widthOf(QStringLiteral("layer1.0 "))), QStringLiteral("layer1.0"));
    const QString cut = view.paintedLabel(bottleneck, metrics, widthOf(QStringLiteral("lay…")));
    QVERIFY2(cut.startsWith(QStringLiteral("lay")) && cut.endsWith(QChar(0x2026)), qPrintable(cut));
    QCOMPARE(view.paintedLabel(bottleneck, metrics, widthOf(QStringLiteral("la…")) - 1), QString());
    QCOMPARE(view.paintedLabel(4, metrics, widthOf(QStringLiteral("co…"))), QString()); // "conv2d": 2 would stay
}

// A run that recorded memory has a lane of its device's live bytes: a step curve as tall as the peak, the peak marked
// and labelled with its bytes, the bytes live at any moment in the tooltip. 4 KiB then 8 KiB allocated, the 8 KiB
// freed, then the 4 KiB: the peak is 12 KiB, from 5 µs to 6 µs.
void TestProfileWidgets::memoryLaneDrawsLiveBytesWithThePeakMarked()
{
    const auto run = parseRun(kShareRun);
    run->device = "cpu";
    for (const auto& [timeNs, bytes] :
         std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 4096}, {5000, 8192}, {6000, -8192}, {9000, -4096}}) {
        kforge::MemoryRecord event;
        event.timeNs = timeNs;
        event.bytes = bytes;
        event.device = "cpu";
        run->memory.push_back(event);
    }
    const TimelineLayout layout(*run);
    QCOMPARE(layout.lanes().size(), size_t(2));
    QCOMPARE(layout.lanes()[0].label, QStringLiteral("Memory · cpu"));
    QCOMPARE(layout.lanes()[0].kind, kforge::ui::TimelineLane::Kind::Memory);
    QCOMPARE(layout.lanes()[0].rowCount, TimelineLayout::MemoryLaneRows);
    QCOMPARE(layout.lanes()[1].label, QStringLiteral("CPU ops · thread 1"));
    QCOMPARE(layout.liveBytesAt(-1), std::int64_t(0));
    QCOMPARE(layout.liveBytesAt(5500), std::int64_t(12288));
    QCOMPARE(layout.liveBytesAt(7000), std::int64_t(4096));
    QCOMPARE(layout.liveBytesAt(9500), std::int64_t(0));
    QCOMPARE(layout.liveBytes().peak, 1);

    TimelineView view;
    view.resize(900, 300);
    view.setRun(run);
    QCOMPARE(view.laneLabels().first(), QStringLiteral("Memory · cpu"));
    const QImage image = view.grab().toImage();
    const QColor base = view.palette().color(QPalette::Base);
    const int laneBottom = view.plotRect().top() + TimelineLayout::MemoryLaneRows * (view.fontMetrics().height() + 4);
    const int nearBottom = laneBottom - 4;
    const int atPeak = int(std::lround(view.xForTime(5500))), afterAll = int(std::lround(view.xForTime(9800)));
    QVERIFY(image.pixelColor(atPeak, nearBottom) != base);  // the curve is filled under 12 KiB
    QCOMPARE(image.pixelColor(afterAll, nearBottom), base); // and empty once everything was freed
    // The peak's label sits above the curve right of where the peak begins, and nowhere else in that band.
    const auto inkIn = [&](int x0, int x1) { // coloured ink: the axis' grey grid lines cross the band too
        for (int x = x0; x < x1; ++x)
            for (int y = view.plotRect().top() + 2; y < view.plotRect().top() + view.fontMetrics().height(); ++y) {
                const QColor c = image.pixelColor(x, y);
                if (std::abs(c.red() - c.green()) > 40 || std::abs(c.red() - c.blue()) > 40)
                    return true;
            }
        return false;
    };
    const int peakX = int(std::lround(view.xForTime(5000)));
    QVERIFY(inkIn(peakX + 3, peakX + 60));
    QVERIFY(!inkIn(int(std::lround(view.xForTime(1000))), peakX - 2));

    const QString tip = view.toolTipAt({atPeak, nearBottom});
    QVERIFY2(tip.contains(QStringLiteral("12.00 KiB live")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("peak")), qPrintable(tip));
    QVERIFY(view.toolTipAt({afterAll, nearBottom}).contains(QStringLiteral("0 B live")));

    // Without memory records there is no such lane.
    view.setRun(parseRun(kShareRun));
    QVERIFY(!view.laneLabels().contains(QStringLiteral("Memory · cpu")));
}

QTEST_MAIN(TestProfileWidgets)
#include "tst_profile_widgets.moc"
