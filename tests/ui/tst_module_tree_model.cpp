// SPDX-License-Identifier: Apache-2.0
#include "item_models/module_tree_filter_model.h"
#include "item_models/module_tree_model.h"
#include "item_models/run_statistics.h"

#include <kforge/model_session.h>
#include <kforge/plan.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

#include <sstream>
#include <string>
#include <vector>

using kforge::ModuleInfo;
using kforge::ui::ModuleTreeFilterModel;
using kforge::ui::ModuleTreeModel;

namespace {

// One module per line, indented two spaces per level: NAME TYPE OWN_PARAMETERS [FUNCTION:CALLS,...].
// "-" names the root. Parameters are float32 (4 bytes each); subtree totals are derived.
const char* const kFixture = R"(
-           Net         16  softmax:1
  embed     Embedding   64
  blocks    ModuleList  0
    0       Block       0
      attn  Attention   48  linear:2,scaled_dot_product_attention:1
      mlp   MLP         0   gelu:1
        fc    Linear    40  linear:1
        proj  Linear    36  linear:1
  head      Linear      20  linear:1
)";

std::vector<ModuleInfo> parseFixture(const char* text)
{
    std::vector<ModuleInfo> modules;
    std::vector<int> parentOf;
    std::vector<int> lastAtDepth;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const auto indent = line.find_first_not_of(' ');
        if (indent == std::string::npos)
            continue;
        const int depth = int(indent / 2);
        std::istringstream fields(line.substr(indent));
        std::string name, type, functions;
        ModuleInfo module;
        fields >> name >> type >> module.parameterCount >> functions;
        module.name = name == "-" ? "" : name;
        module.typeName = type;
        module.qualifiedTypeName = "__torch__." + type;
        module.parameterBytes = module.parameterCount * 4;
        module.depth = depth;
        std::istringstream calls(functions);
        for (std::string entry; std::getline(calls, entry, ',');) {
            const auto colon = entry.find(':');
            module.functions[entry.substr(0, colon)] = std::stoi(entry.substr(colon + 1));
        }
        const int parent = depth == 0 ? -1 : lastAtDepth[depth - 1];
        if (parent >= 0) {
            const std::string& parentPath = modules[parent].path;
            module.path = parentPath.empty() ? module.name : parentPath + "." + module.name;
            modules[parent].children.push_back(module.path);
        }
        lastAtDepth.resize(depth + 1);
        lastAtDepth[depth] = int(modules.size());
        modules.push_back(module);
        parentOf.push_back(parent);
    }
    for (ModuleInfo& module : modules) {
        module.subtreeParameterCount = module.parameterCount;
        module.subtreeParameterBytes = module.parameterBytes;
        module.subtreeFunctions = module.functions;
    }
    // Pre-order: every child comes after its parent, so walking backwards sums whole subtrees.
    for (int i = int(modules.size()) - 1; i > 0; --i) {
        ModuleInfo& parent = modules[parentOf[i]];
        parent.subtreeParameterCount += modules[i].subtreeParameterCount;
        parent.subtreeParameterBytes += modules[i].subtreeParameterBytes;
        for (const auto& [function, count] : modules[i].subtreeFunctions)
            parent.subtreeFunctions[function] += count;
    }
    return modules;
}

QStringList childNames(const QAbstractItemModel& model, const QModelIndex& parent)
{
    QStringList names;
    for (int row = 0; row < model.rowCount(parent); ++row)
        names << model.index(row, ModuleTreeModel::ModuleColumn, parent).data().toString();
    return names;
}

int countRows(const QAbstractItemModel& model, const QModelIndex& parent = {})
{
    int count = model.rowCount(parent);
    for (int row = 0; row < model.rowCount(parent); ++row)
        count += countRows(model, model.index(row, 0, parent));
    return count;
}

QString cell(const ModuleTreeModel& model, const QString& path, int column, int role = Qt::DisplayRole)
{
    return model.indexOfPath(path, column).data(role).toString();
}

kforge::Plan planOf(const char* json) { return kforge::parsePlan(json, "fixture plan"); }

// A plan as a reader sees it: gelu replaced in the MLP, the attention's linears in the attention (off).
const char* const kPlan = R"({
  "format": "kforge-plan", "version": 1,
  "entries": [
    {"scope": "blocks.0.mlp", "function": "gelu", "provider": {"type": "AtenGeluProvider"}},
    {"scope": "blocks.0.attn", "function": "linear", "provider": {"type": "AtenLinearProvider"}, "enabled": false}
  ]
})";

QStringList visiblePaths(const QAbstractItemModel& model, const QModelIndex& parent = {})
{
    QStringList paths;
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex index = model.index(row, 0, parent);
        paths << index.data(ModuleTreeModel::PathRole).toString();
        paths << visiblePaths(model, index);
    }
    return paths;
}

} // namespace

class TestModuleTreeModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fixtureTree()
    {
        ModuleTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setModules(parseFixture(kFixture), QStringLiteral("net"));

        // and five time columns, filled after a profile, the Error column and four memory columns
        QCOMPARE(model.columnCount(), 17);
        QCOMPARE(model.rowCount(), 1);
        const QModelIndex root = model.index(0, 0);
        QCOMPARE(root.data().toString(), QStringLiteral("net"));
        QCOMPARE(root.data(ModuleTreeModel::PathRole).toString(), QString());
        QCOMPARE(childNames(model, root), (QStringList{"embed", "blocks", "head"}));
        QCOMPARE(countRows(model), 9);

        const QModelIndex block = model.indexOfPath(QStringLiteral("blocks.0"));
        QVERIFY(block.isValid());
        QCOMPARE(block.parent(), model.indexOfPath(QStringLiteral("blocks")));
        QCOMPARE(block.parent().parent(), root);
        QCOMPARE(childNames(model, block), (QStringList{"attn", "mlp"}));
        QCOMPARE(childNames(model, model.indexOfPath(QStringLiteral("blocks.0.mlp"))), (QStringList{"fc", "proj"}));

        const QModelIndex proj = model.indexOfPath(QStringLiteral("blocks.0.mlp.proj"), ModuleTreeModel::TypeColumn);
        QCOMPARE(proj.row(), 1);
        QCOMPARE(proj.column(), int(ModuleTreeModel::TypeColumn));
        QCOMPARE(proj.data().toString(), QStringLiteral("Linear"));
        QCOMPARE(model.moduleAt(proj)->path, std::string("blocks.0.mlp.proj"));
        QVERIFY(!model.indexOfPath(QStringLiteral("blocks.7")).isValid());
        QCOMPARE(model.rowCount(model.indexOfPath(QStringLiteral("head"))), 0);
    }

    void fixtureColumns()
    {
        ModuleTreeModel model;
        model.setModules(parseFixture(kFixture));

        QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("(root)"));
        QCOMPARE(cell(model, "blocks.0.mlp", ModuleTreeModel::FunctionsColumn), QStringLiteral("gelu×1, linear×2"));
        QCOMPARE(cell(model, "", ModuleTreeModel::FunctionsColumn),
                 QStringLiteral("gelu×1, linear×5, scaled_dot_product_attention×1, softmax×1"));
        QCOMPARE(cell(model, "embed", ModuleTreeModel::FunctionsColumn), QString());
        QCOMPARE(cell(model, "blocks.0.attn", ModuleTreeModel::TypeColumn), QStringLiteral("Attention"));

        QCOMPARE(model.indexOfPath("", ModuleTreeModel::ParametersColumn).data(ModuleTreeModel::SortRole).toLongLong(),
                 224);
        QCOMPARE(model.indexOfPath("blocks.0.mlp", ModuleTreeModel::ParametersColumn)
                     .data(ModuleTreeModel::SortRole)
                     .toLongLong(),
                 76);
        QCOMPARE(cell(model, "blocks", ModuleTreeModel::ParametersColumn), QLocale().toString(124));
        const int alignment =
            model.indexOfPath("head", ModuleTreeModel::ParametersColumn).data(Qt::TextAlignmentRole).toInt();
        QVERIFY(alignment & Qt::AlignRight);

        const QString tip = cell(model, "blocks.0.attn", ModuleTreeModel::ModuleColumn, Qt::ToolTipRole);
        QVERIFY2(tip.contains(QStringLiteral("__torch__.Attention")), qPrintable(tip));
        QVERIFY2(tip.contains(QLocale().formattedDataSize(192)), qPrintable(tip));
        QVERIFY2(tip.startsWith(QStringLiteral("blocks.0.attn")), qPrintable(tip));
        const QString rootTip = cell(model, "", ModuleTreeModel::TypeColumn, Qt::ToolTipRole);
        QVERIFY2(rootTip.contains(QStringLiteral("Own parameters: 16")), qPrintable(rootTip));

        QCOMPARE(model.headerData(ModuleTreeModel::FunctionsColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Functions"));
    }

    void resetAndClear()
    {
        ModuleTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!model.index(0, 0).isValid());
        model.setModules(parseFixture(kFixture));
        QCOMPARE(countRows(model), 9);
        model.setModules(parseFixture("-  Leaf  3  relu:1\n"));
        QCOMPARE(countRows(model), 1);
        QCOMPARE(cell(model, "", ModuleTreeModel::FunctionsColumn), QStringLiteral("relu×1"));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!model.indexOfPath(QString()).isValid());
    }

    void inconsistentInputIsContained()
    {
        std::vector<ModuleInfo> modules = parseFixture(kFixture);
        ModuleInfo orphan; // listed by nobody: must not appear, nor crash the model
        orphan.path = "ghost";
        orphan.name = "ghost";
        modules.push_back(orphan);
        modules[0].children.push_back("missing"); // names a module that is not there
        modules[0].children.push_back("embed");   // listed twice

        ModuleTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setModules(std::move(modules));
        QCOMPARE(childNames(model, model.index(0, 0)), (QStringList{"embed", "blocks", "head"}));
        QCOMPARE(countRows(model), 9);
        QVERIFY(!model.indexOfPath(QStringLiteral("ghost")).isValid());
    }

    void planHooksAndEntries()
    {
        ModuleTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setModules(parseFixture(kFixture));
        model.setPlan(planOf(kPlan));

        QCOMPARE(model.hookState("blocks.0.mlp"), ModuleTreeModel::Hooked);
        QCOMPARE(model.hookState("blocks.0.mlp.fc"), ModuleTreeModel::InScope);
        QCOMPARE(model.hookState("blocks.0.attn"), ModuleTreeModel::NotHooked); // its only entry is off
        QCOMPARE(model.hookState("blocks.0"), ModuleTreeModel::NotHooked);
        QCOMPARE(cell(model, "blocks.0.mlp", ModuleTreeModel::PlanColumn), QStringLiteral("gelu → AtenGeluProvider"));
        QCOMPARE(cell(model, "blocks.0.attn", ModuleTreeModel::PlanColumn),
                 QStringLiteral("linear → AtenLinearProvider (off)"));
        QCOMPARE(cell(model, "blocks.0.mlp", ModuleTreeModel::HookColumn), QStringLiteral("hooked"));
        QCOMPARE(cell(model, "blocks.0.mlp.proj", ModuleTreeModel::HookColumn), QStringLiteral("in scope"));
        // Without icons the model paints plain colours: still a decoration.
        QVERIFY(model.indexOfPath("blocks.0.mlp", ModuleTreeModel::HookColumn).data(Qt::DecorationRole).isValid());
        QVERIFY(!model.indexOfPath("embed", ModuleTreeModel::HookColumn).data(Qt::DecorationRole).isValid());

        // Survives a reload of the same modules (the plan is keyed by path).
        model.setModules(parseFixture(kFixture));
        QCOMPARE(model.hookState("blocks.0.mlp"), ModuleTreeModel::Hooked);
        model.setPlan(kforge::Plan{});
        QCOMPARE(model.hookState("blocks.0.mlp"), ModuleTreeModel::NotHooked);
        QCOMPARE(cell(model, "blocks.0.mlp", ModuleTreeModel::PlanColumn), QString());
    }

    void runStatisticsAndPause()
    {
        ModuleTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setModules(parseFixture(kFixture));
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        std::unordered_map<std::string, kforge::ui::ModuleRunStats> stats;
        stats["blocks.0.mlp"] = {3, 1, 2'000'000, 1};
        stats["blocks.0.attn"] = {2, 0, 0, 0};
        stats[""] = {1, 0, 0, 0};
        model.setRunStatistics(stats);
        QVERIFY(changed.count() > 0);
        QCOMPARE(cell(model, "blocks.0.mlp", ModuleTreeModel::CallsColumn), QStringLiteral("3"));
        QCOMPARE(cell(model, "blocks.0", ModuleTreeModel::CallsColumn), QStringLiteral("5"));
        QCOMPARE(cell(model, "", ModuleTreeModel::CallsColumn), QStringLiteral("6"));
        QCOMPARE(cell(model, "embed", ModuleTreeModel::CallsColumn), QString());
        QCOMPARE(model.indexOfPath("blocks", ModuleTreeModel::CallsColumn).data(ModuleTreeModel::SortRole).toLongLong(),
                 5);
        const QString tip = cell(model, "blocks.0.mlp", ModuleTreeModel::CallsColumn, Qt::ToolTipRole);
        QVERIFY2(tip.contains(QStringLiteral("2.000 ms")), qPrintable(tip));
        changed.clear();
        model.setRunStatistics(stats); // unchanged: no signal
        QCOMPARE(changed.count(), 0);

        model.setPausedPath(QStringLiteral("blocks.0.mlp"));
        QCOMPARE(model.hookState("blocks.0.mlp"), ModuleTreeModel::Inside);
        QCOMPARE(model.hookState("blocks.0"), ModuleTreeModel::Inside);
        QCOMPARE(model.hookState(""), ModuleTreeModel::Inside);
        QCOMPARE(model.hookState("blocks.0.mlp.fc"), ModuleTreeModel::NotHooked);
        QCOMPARE(model.hookState("blocks.0.attn"), ModuleTreeModel::NotHooked);
        QVERIFY(model.indexOfPath("blocks.0.mlp").data(Qt::BackgroundRole).isValid());
        QVERIFY(!model.indexOfPath("blocks.0").data(Qt::BackgroundRole).isValid());
        model.setPausedPath({}, false);
        QCOMPARE(model.hookState("blocks.0"), ModuleTreeModel::NotHooked);

        model.setBreakpoints({QStringLiteral("head")});
        QVERIFY(model.indexOfPath("head").data(ModuleTreeModel::BreakpointRole).toBool());
        QVERIFY(model.indexOfPath("head").data(Qt::DecorationRole).isValid());
        QVERIFY(!model.indexOfPath("embed").data(ModuleTreeModel::BreakpointRole).toBool());
    }

    void filterSubstringAndRegex()
    {
        ModuleTreeModel model;
        model.setModules(parseFixture(kFixture));
        ModuleTreeFilterModel filter;
        filter.setSourceModel(&model);
        QAbstractItemModelTester tester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(countRows(filter), 9);

        filter.setFilter(QStringLiteral("MLP"), false); // case-insensitive substring of path or type
        QCOMPARE(visiblePaths(filter),
                 (QStringList{"", "blocks", "blocks.0", "blocks.0.mlp", "blocks.0.mlp.fc", "blocks.0.mlp.proj"}));
        filter.setFilter(QStringLiteral("softmax"), false); // a function of the root's own forward
        QCOMPARE(visiblePaths(filter), QStringList{""});
        filter.setFilter(QStringLiteral("scaled_dot"), false);
        QCOMPARE(visiblePaths(filter), (QStringList{"", "blocks", "blocks.0", "blocks.0.attn"}));

        filter.setFilter(QStringLiteral("^(head|embed)$"), true); // anchored: whole paths
        QCOMPARE(visiblePaths(filter), (QStringList{"", "embed", "head"}));
        filter.setFilter(QStringLiteral("\\.(fc|proj)$"), true);
        QCOMPARE(visiblePaths(filter),
                 (QStringList{"", "blocks", "blocks.0", "blocks.0.mlp", "blocks.0.mlp.fc", "blocks.0.mlp.proj"}));
        QVERIFY(filter.filterError().isEmpty());
        filter.setFilter(QStringLiteral("(unclosed"), true); // invalid: nothing hidden, the error is reported
        QVERIFY(!filter.filterError().isEmpty());
        QCOMPARE(countRows(filter), 9);
        filter.setFilter(QString(), false);
        QCOMPARE(countRows(filter), 9);
    }

    void tinyGpt()
    {
        const std::unique_ptr<kforge::ModelSession> session = kforge::ModelSession::open("builtin:tiny-gpt");
        ModuleTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setModules(session->modules(), QString::fromStdString(session->displayName()));

        QCOMPARE(model.rowCount(), 1);
        const QModelIndex root = model.index(0, 0);
        QCOMPARE(root.data().toString(), QStringLiteral("tiny-gpt"));
        const QStringList top = childNames(model, root);
        QVERIFY2(top.startsWith(QStringLiteral("embed")), qPrintable(top.join(',')));
        QVERIFY2(top.contains(QStringLiteral("blocks")), qPrintable(top.join(',')));
        QVERIFY2(top.contains(QStringLiteral("head")), qPrintable(top.join(',')));
        QCOMPARE(countRows(model), int(session->modules().size()));

        QCOMPARE(childNames(model, model.indexOfPath(QStringLiteral("blocks"))), (QStringList{"0", "1"}));
        QCOMPARE(cell(model, "blocks.0.mlp", ModuleTreeModel::FunctionsColumn), QStringLiteral("gelu×1, linear×2"));
        QCOMPARE(cell(model, "blocks.1.attn.qkv", ModuleTreeModel::FunctionsColumn), QStringLiteral("linear×1"));
        const QString all = cell(model, "", ModuleTreeModel::FunctionsColumn);
        QVERIFY2(all.contains(QStringLiteral("scaled_dot_product_attention×2")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("softmax×1")), qPrintable(all));

        const ModuleInfo& rootInfo = session->modules().front();
        QVERIFY(rootInfo.subtreeParameterCount > 0);
        QCOMPARE(model.indexOfPath("", ModuleTreeModel::ParametersColumn).data(ModuleTreeModel::SortRole).toLongLong(),
                 qint64(rootInfo.subtreeParameterCount));
        const QString tip = cell(model, "blocks.0.attn", ModuleTreeModel::ModuleColumn, Qt::ToolTipRole);
        QVERIFY2(tip.contains(QString::fromStdString(session->findModule("blocks.0.attn")->qualifiedTypeName)),
                 qPrintable(tip));
    }
};

QTEST_GUILESS_MAIN(TestModuleTreeModel) // the models library needs no windows, nor a display
#include "tst_module_tree_model.moc"
