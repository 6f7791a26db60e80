// SPDX-License-Identifier: Apache-2.0
// The module tree's columns: sized to every row (collapsed ones too) with a cap, widths the user set remembered.
#include "item_models/module_tree_model.h"
#include "test_window.h"
#include "views/module_tree_page.h"
#include "views/module_tree_view.h"

#include <kforge/module_info.h>
#include <kforge/plan.h>

#include <QFontMetrics>
#include <QHeaderView>
#include <QLineEdit>
#include <QTest>

#include <string>
#include <vector>

using kforge::ModuleInfo;
using kforge::ui::ModuleTreeModel;
using kforge::ui::ModuleTreeView;

namespace {

// A chain seven modules deep, as a transformer's model.layers.0.self_attn.rotary.inv_freq_proj is, each with a name
// of its own and the deepest calling many functions.
std::vector<ModuleInfo> deepChain()
{
    const std::vector<std::string> names{
        "", "model", "layers", "0", "self_attn", "rotary_embedding", "inv_freq_projection"};
    std::vector<ModuleInfo> modules;
    for (size_t depth = 0; depth < names.size(); ++depth) {
        ModuleInfo m;
        m.name = names[depth];
        m.path = depth == 0 ? "" : (depth == 1 ? m.name : modules.back().path + "." + m.name);
        m.typeName = depth == 0 ? "LlamaForCausalLM" : "Level" + std::to_string(depth);
        m.qualifiedTypeName = "__torch__." + m.typeName;
        m.depth = int(depth);
        if (!modules.empty())
            modules.back().children.push_back(m.path);
        modules.push_back(m);
    }
    modules.back().functions = {{"batch_norm", 12}, {"conv2d", 12}, {"linear", 4}, {"relu", 9}};
    for (ModuleInfo& m : modules)
        m.subtreeFunctions = modules.back().functions;
    return modules;
}

} // namespace

class TestModuleTreeView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { kforge::ui::test::useTestSettings(); }
    void init() { QSettings().clear(); }

    // Names at depth 6 are readable on a 1920-wide window though only two levels are expanded (they were blank:
    // columns were fitted to the rows on screen), and the Functions column shows its longest cell.
    void deepNamesAndFunctionsFitTheirColumns()
    {
        ModuleTreeModel model;
        model.setModules(deepChain(), QStringLiteral("llama"));
        ModuleTreeView view;
        view.setModel(&model);
        view.resize(1920, 800);
        view.show();
        view.expandAndFit(1);
        const QFontMetrics metrics(view.font());
        const int deepest = 7 * view.indentation() + metrics.horizontalAdvance(QStringLiteral("inv_freq_projection"));
        QVERIFY2(
            view.columnWidth(ModuleTreeModel::ModuleColumn) >= deepest,
            qPrintable(QStringLiteral("%1 < %2").arg(view.columnWidth(ModuleTreeModel::ModuleColumn)).arg(deepest)));
        QVERIFY(view.columnWidth(ModuleTreeModel::ModuleColumn) <= ModuleTreeView::kMaxFittedWidth);
        const QString functions = model.indexOfPath(QString(), ModuleTreeModel::FunctionsColumn).data().toString();
        QVERIFY(view.columnWidth(ModuleTreeModel::FunctionsColumn) >= metrics.horizontalAdvance(functions));
        QCOMPARE(view.textElideMode(), Qt::ElideLeft);
        QCOMPARE(view.cellElision(ModuleTreeModel::ModuleColumn), Qt::ElideLeft);
        for (const int column : {int(ModuleTreeModel::TopFunctionColumn), int(ModuleTreeModel::PlanColumn),
                                 int(ModuleTreeModel::FunctionsColumn)})
            QCOMPARE(view.cellElision(column), Qt::ElideRight);
    }

    // The Hook column is fitted when the model opens, before any plan: empty then, it read "…ed" once an entry was
    // added (icon and "hooked" in a column the width of its title). Every state's text fits it from the start.
    void theHookColumnFitsEveryStateBeforeAnyPlan()
    {
        ModuleTreeModel model;
        model.setModules(deepChain(), QStringLiteral("llama"));
        const QIcon icon(QStringLiteral(":/icons/hooked.svg"));
        model.setIcons(icon, icon, icon, icon);
        ModuleTreeView view;
        view.setModel(&model);
        view.resize(1920, 800);
        view.show();
        view.expandAndFit(-1);
        const int fitted = view.columnWidth(ModuleTreeModel::HookColumn);
        kforge::PlanEntry entry;
        entry.scope = "model.layers.0.self_attn";
        entry.function = "linear";
        entry.provider = {{"type", "AtenLinearProvider"}};
        model.setPlan(kforge::Plan{{entry}});
        const QModelIndex hooked =
            model.indexOfPath(QStringLiteral("model.layers.0.self_attn"), ModuleTreeModel::HookColumn);
        QCOMPARE(hooked.data().toString(), QStringLiteral("hooked"));
        QVERIFY2(view.sizeHintForIndex(hooked).width() <= fitted,
                 qPrintable(QStringLiteral("%1 > %2").arg(view.sizeHintForIndex(hooked).width()).arg(fitted)));
        QCOMPARE(view.columnWidth(ModuleTreeModel::HookColumn), fitted);
    }

    // A width the user sets by hand outlives the model and the window (the next model's fit kept resetting it).
    void widthsSetByTheUserAreKept()
    {
        {
            ModuleTreeModel model;
            model.setModules(deepChain());
            ModuleTreeView view;
            view.setModel(&model);
            view.show();
            view.expandAndFit(1);
            view.header()->resizeSection(ModuleTreeModel::TypeColumn, 333);
        }
        ModuleTreeModel model;
        model.setModules(deepChain());
        ModuleTreeView view;
        view.setModel(&model);
        view.show();
        view.expandAndFit(1);
        QCOMPARE(view.columnWidth(ModuleTreeModel::TypeColumn), 333);
        QVERIFY(view.columnWidth(ModuleTreeModel::ModuleColumn) != 333);
    }

    // The keyboard path to a module's menu: Return (or Down) in the filter puts the tree's focus on the first module
    // matching the filter itself, not on an ancestor kept for it; an empty filter, on the first row.
    void returnInTheFilterTakesTheTreeToTheFirstMatch()
    {
        ModuleTreeModel model;
        model.setModules(deepChain(), QStringLiteral("llama"));
        kforge::ui::ModuleTreePage page(&model);
        page.show();
        page.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&page));
        page.focusFilter();
        QTest::keyClicks(page.filterEdit(), QStringLiteral("self_attn"));
        QTest::keyClick(page.filterEdit(), Qt::Key_Return);
        QCOMPARE(page.currentPath(), QStringLiteral("model.layers.0.self_attn"));
        QVERIFY(page.view()->hasFocus());

        page.focusFilter();
        QTest::keyClicks(page.filterEdit(), QStringLiteral("Level5")); // a type: rotary_embedding's
        QTest::keyClick(page.filterEdit(), Qt::Key_Down);
        QCOMPARE(page.currentPath(), QStringLiteral("model.layers.0.self_attn.rotary_embedding"));
        QVERIFY(page.view()->hasFocus());

        page.focusFilter();
        page.filterEdit()->clear();
        QTest::keyClick(page.filterEdit(), Qt::Key_Return);
        QCOMPARE(page.currentPath(), QString()); // the root
        QVERIFY(page.view()->hasFocus());
    }
};

QTEST_MAIN(TestModuleTreeView)
#include "tst_module_tree_view.moc"
