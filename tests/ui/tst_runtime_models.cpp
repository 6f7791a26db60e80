// SPDX-License-Identifier: Apache-2.0
// The models fed by the runtime, without windows: the event log, the function stacks and the run statistics,
// from fixtures written the way the runtime would report them.
#include "item_models/event_log_model.h"
#include "item_models/function_stacks_model.h"
#include "item_models/run_statistics.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

#include <sstream>

using kforge::Event;
using kforge::EventKind;
using kforge::ui::EventLogModel;
using kforge::ui::FunctionStacksModel;
using kforge::ui::RunStatistics;

namespace {

// One event per line: TIME_US THREAD KIND MODULE [FUNCTION PROVIDER]; "-" is empty. Sequence numbers follow
// the line order.
std::vector<Event> parseEvents(const char* text)
{
    std::vector<Event> events;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        std::int64_t us = 0;
        std::string kind;
        Event e;
        if (!(fields >> us >> e.thread >> kind >> e.modulePath))
            continue;
        fields >> e.function >> e.provider;
        for (std::string* s : {&e.modulePath, &e.function, &e.provider})
            if (*s == "-")
                s->clear();
        e.timeNs = us * 1000;
        e.sequence = events.size() + 1;
        const std::pair<const char*, EventKind> kinds[] = {
            {"enter", EventKind::ModuleEnter}, {"exit", EventKind::ModuleExit},   {"push", EventKind::Push},
            {"pop", EventKind::Pop},           {"call", EventKind::ProviderCall}, {"orig", EventKind::OriginalCall},
            {"leftover", EventKind::Leftover}, {"activate", EventKind::Activate},
        };
        for (const auto& [name, value] : kinds)
            if (kind == name)
                e.kind = value;
        events.push_back(e);
    }
    return events;
}

// A forward on thread 2 with gelu replaced in blocks.0.mlp; thread 3 runs outside any hooked module.
const char* const kRun = R"(
0    1 activate  -
10   2 enter     blocks.0.mlp
11   2 push      blocks.0.mlp  gelu     AtenGeluProvider
12   2 orig      -             linear   original
13   2 call      blocks.0.mlp  gelu     AtenGeluProvider
14   2 orig      -             linear   original
15   2 pop       blocks.0.mlp  gelu     AtenGeluProvider
20   2 exit      blocks.0.mlp
21   2 orig      -             softmax  original
22   3 orig      -             linear   original
)";

kforge::ThreadStacksSnapshot thread7()
{
    kforge::ThreadStacksSnapshot t;
    t.thread = 7;
    t.insideForward = true;
    kforge::FunctionStackSnapshot gelu{"gelu", "AtenGeluProvider", {}};
    gelu.entries.push_back({"original", "AtenGeluProvider", "act", 0, 5, 2'000'000});
    t.functions.push_back(gelu);
    return t;
}

kforge::LeftoverPatch leftoverOfThread7(std::string error = {})
{
    return {"gelu", "AtenGeluProvider", "act", 7, 5, 2'000'000, std::move(error), false, {}};
}

int countRows(const QAbstractItemModel& model, const QModelIndex& parent = {})
{
    int count = model.rowCount(parent);
    for (int row = 0; row < model.rowCount(parent); ++row)
        count += countRows(model, model.index(row, 0, parent));
    return count;
}

} // namespace

class TestRuntimeModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void eventLogColumns()
    {
        EventLogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.append(parseEvents(kRun));
        QCOMPARE(model.rowCount(), 10);
        QCOMPARE(model.columnCount(), 9);
        const auto cell = [&](int row, int column) { return model.index(row, column).data().toString(); };
        QCOMPARE(cell(4, EventLogModel::KindColumn), QStringLiteral("provider_call"));
        QCOMPARE(cell(4, EventLogModel::ModuleColumn), QStringLiteral("blocks.0.mlp"));
        QCOMPARE(cell(3, EventLogModel::ModuleColumn), QString()); // an original outside every hooked scope
        QCOMPARE(cell(0, EventLogModel::ModuleColumn), QString()); // activation happens in no module
        Event rootCall = parseEvents(kRun)[4];
        rootCall.modulePath.clear(); // a root-scoped entry's call
        model.append({rootCall});
        QCOMPARE(cell(10, EventLogModel::ModuleColumn), QStringLiteral("(root)"));
        QCOMPARE(cell(4, EventLogModel::FunctionColumn), QStringLiteral("gelu"));
        QCOMPARE(cell(4, EventLogModel::ProviderColumn), QStringLiteral("AtenGeluProvider"));
        QCOMPARE(cell(4, EventLogModel::ThreadColumn), QStringLiteral("2"));
        QCOMPARE(cell(4, EventLogModel::TimeColumn), QStringLiteral("0.013")); // ms since the first event
        QCOMPARE(cell(0, EventLogModel::SequenceColumn), QStringLiteral("1"));
        QCOMPARE(model.index(4, 0).data(EventLogModel::KindRole).toInt(), int(EventKind::ProviderCall));
        QCOMPARE(model.headerData(EventLogModel::DetailColumn, Qt::Horizontal).toString(), QStringLiteral("Detail"));
    }

    void eventLogCapAndCounters()
    {
        EventLogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCapacity(6);
        QSignalSpy counters(&model, &EventLogModel::countersChanged);
        model.append(parseEvents(kRun)); // 10 events, only the newest 6 kept
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(model.event(0).sequence, std::uint64_t(5));
        QCOMPARE(model.discarded(), std::uint64_t(4));
        model.append(parseEvents(kRun)); // trims the old rows first
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(model.discarded(), std::uint64_t(14));
        QCOMPARE(model.total(), std::uint64_t(20));
        model.setDropped(3);
        QCOMPARE(model.dropped(), std::uint64_t(3));
        QVERIFY(counters.count() >= 3);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.discarded(), std::uint64_t(0));
        QCOMPARE(EventLogModel::kDefaultCapacity, 100'000);
    }

    void runStatistics()
    {
        RunStatistics stats;
        for (const Event& e : parseEvents(kRun))
            stats.add(e);
        const auto& modules = stats.modules();
        // The linear calls inside the hooked MLP count for it, though their events name no scope.
        QCOMPARE(modules.at("blocks.0.mlp").calls, std::int64_t(3));
        QCOMPARE(modules.at("blocks.0.mlp").providerCalls, std::int64_t(1));
        QCOMPARE(modules.at("blocks.0.mlp").entries, std::int64_t(1));
        QCOMPARE(modules.at("blocks.0.mlp").timeNs, std::int64_t(10'000));
        QCOMPARE(modules.at("").calls, std::int64_t(2)); // softmax after the exit, and thread 3
        QCOMPARE(stats.totalCalls(), std::int64_t(5));
        QCOMPARE(stats.currentModule(2), std::string());

        // A leftover ends the frames of its thread: the exit will never come.
        RunStatistics failed;
        for (const Event& e :
             parseEvents("0 2 enter act\n1 2 call act gelu P\n2 2 leftover act gelu P\n3 2 orig - relu original\n"))
            failed.add(e);
        QCOMPARE(failed.modules().at("act").calls, std::int64_t(1));
        QCOMPARE(failed.modules().at("").calls, std::int64_t(1));
    }

    void stacksTree()
    {
        FunctionStacksModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        kforge::ThreadStacksSnapshot idle;
        idle.thread = 1; // nothing in effect, outside any forward: left out
        QVERIFY(model.setSnapshot({idle, thread7()}, {}));
        QCOMPARE(model.rowCount(), 1);
        const QModelIndex thread = model.index(0, 0);
        QCOMPARE(thread.data().toString(), QStringLiteral("Thread 7"));
        QCOMPARE(model.index(0, FunctionStacksModel::CallableColumn).data().toString(),
                 QStringLiteral("inside a forward"));
        const QModelIndex gelu = model.index(0, 0, thread);
        QCOMPARE(gelu.data().toString(), QStringLiteral("gelu"));
        QCOMPARE(gelu.siblingAtColumn(FunctionStacksModel::CallableColumn).data().toString(),
                 QStringLiteral("AtenGeluProvider"));
        QCOMPARE(gelu.data(FunctionStacksModel::FunctionRole).toString(), QStringLiteral("gelu"));
        const QModelIndex entry = model.index(0, 0, gelu);
        QCOMPARE(entry.data().toString(), QStringLiteral("#0"));
        QCOMPARE(entry.siblingAtColumn(FunctionStacksModel::SavedColumn).data().toString(), QStringLiteral("original"));
        QCOMPARE(entry.siblingAtColumn(FunctionStacksModel::ModuleColumn).data().toString(), QStringLiteral("act"));
        QCOMPARE(entry.siblingAtColumn(FunctionStacksModel::TimeColumn).data().toString(), QStringLiteral("0.000"));
        QVERIFY(!entry.data(FunctionStacksModel::LeftoverRole).toBool());

        model.setForwardThread(7);
        QCOMPARE(thread.data().toString(), QStringLiteral("Thread 7 (forward)"));
        model.setFunctionBreakpoints({QStringLiteral("gelu")});
        QVERIFY(gelu.data(FunctionStacksModel::BreakpointRole).toBool());

        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QVERIFY(!model.setSnapshot({thread7()}, {})); // the same moment: no reset, the view keeps its state
        QCOMPARE(reset.count(), 0);
    }

    void leftoversWithReasons()
    {
        FunctionStacksModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        kforge::ThreadStacksSnapshot stale = thread7();
        stale.insideForward = false;
        const std::vector<kforge::LeftoverPatch> reports{
            {"gelu", "AtenGeluProvider", "other", 7, 5, 1, "not this one", false, {}},
            leftoverOfThread7("shape '[3]' is invalid for input of size 2"),
        };
        const auto leftovers = FunctionStacksModel::withReasons({leftoverOfThread7()}, reports);
        QCOMPARE(leftovers.front().error, std::string("shape '[3]' is invalid for input of size 2"));
        QVERIFY(model.setSnapshot({stale}, leftovers));

        QCOMPARE(model.rowCount(), 2);
        const QModelIndex group = model.index(1, 0);
        QCOMPARE(model.kindOf(group), FunctionStacksModel::RowKind::LeftoverGroup);
        QCOMPARE(group.data().toString(), QStringLiteral("Leftover patches"));
        const QModelIndex leftover = model.index(0, 0, group);
        QCOMPARE(leftover.data().toString(), QStringLiteral("gelu"));
        QVERIFY(leftover.data(FunctionStacksModel::LeftoverRole).toBool());
        QVERIFY(leftover.data(Qt::ForegroundRole).isValid()); // the warning colour
        const QString reason = leftover.siblingAtColumn(FunctionStacksModel::DetailColumn).data().toString();
        QVERIFY2(reason.contains(QStringLiteral("exit of act never ran")), qPrintable(reason));
        QVERIFY2(reason.contains(QStringLiteral("is invalid for input of size 2")), qPrintable(reason));
        // The stack entry the leftover is shows in the warning colour too.
        const QModelIndex entry = model.index(0, 0, model.index(0, 0, model.index(0, 0)));
        QVERIFY(entry.data(FunctionStacksModel::LeftoverRole).toBool());
        QVERIFY(entry.data(Qt::ForegroundRole).isValid());
        QCOMPARE(countRows(model), 5);

        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestRuntimeModels)
#include "tst_runtime_models.moc"
