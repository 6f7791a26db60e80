// SPDX-License-Identifier: Apache-2.0
// The main window's flows, driven the way a user drives them: the tree's context menu, the plan editor, the
// plan files, Run/Step/Continue/Abort, leftovers and Unwind. Real engine, real models, offscreen.
#include "build_path.h"
#include "application/application_identity.h"
#include "startup_script.h"
#include "controllers/profile_controller.h"
#include "test_window.h"
#include "window_parts.h"
#include "main_window.h"
#include "item_models/event_log_model.h"
#include "item_models/function_stacks_model.h"
#include "item_models/module_tree_filter_model.h"
#include "item_models/module_tree_model.h"
#include "item_models/plan_document.h"
#include "item_models/plan_model.h"
#include "controllers/run_controller.h"
#include "views/event_log_view.h"
#include "views/function_stacks_view.h"
#include "views/module_tree_page.h"
#include "views/plan_editor_view.h"
#include "views/provider_settings_form.h"

#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/runtime.h>
#include <kforge/stepping.h>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QTimer>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QImage>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QUndoStack>

#include <memory>
#include <sstream>

using kforge::ui::FunctionStacksModel;
using kforge::ui::MainWindow;
using kforge::ui::ModuleTreeModel;
using kforge::ui::PlanModel;
using namespace kforge::ui::test; // part(), and the parts tests use most by name
using namespace kforge::ui::test;

namespace {

constexpr int kTimeoutMs = 60'000;
const QString kTinyGpt = QStringLiteral("builtin:tiny-gpt");
const QString kThrowingMlp = QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/throwing_mlp.pt");
const QString kFloat64Gelu =
    QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/float64_gelu.pt"); // gelu in `act`, no parameters

std::unique_ptr<MainWindow> openWindow(const QString& source) { return openInTestWindow(source, kTimeoutMs); }

// The action of the tree's "Add provider for FUNCTION here" submenu that picks PROVIDER.
QAction* addProviderAction(QMenu* menu, const QString& function, const QString& provider)
{
    auto* sub = menu->findChild<QMenu*>(QStringLiteral("addProvider:%1").arg(function));
    if (!sub)
        return nullptr;
    for (QAction* action : sub->actions()) {
        if (action->data().toString() == provider)
            return action;
    }
    return nullptr;
}

QStringList planRow(const MainWindow& window, int row)
{
    const PlanModel* model = planDocument(window)->model();
    QStringList cells;
    for (int column : {PlanModel::ScopeColumn, PlanModel::FunctionColumn, PlanModel::ProviderColumn})
        cells << model->index(row, column).data().toString();
    return cells;
}

// Waits for the window's next runFinished; returns (ok, message).
std::pair<bool, QString> waitForRun(QSignalSpy& finished)
{
    if (!QTest::qWaitFor([&] { return finished.count() > 0; }, kTimeoutMs))
        return {false, QStringLiteral("timeout")};
    const QList<QVariant> args = finished.takeFirst();
    return {args.at(0).toBool(), args.at(1).toString()};
}

// Threads as the stacks view keeps them (something in effect or inside a forward), in one comparable text.
QString describe(std::vector<kforge::ThreadStacksSnapshot> threads)
{
    std::erase_if(threads, [](const auto& t) { return t.functions.empty() && !t.insideForward; });
    std::sort(threads.begin(), threads.end(), [](const auto& a, const auto& b) { return a.thread < b.thread; });
    std::ostringstream out;
    for (const auto& t : threads) {
        out << "thread " << t.thread << (t.insideForward ? " inside" : " idle") << "\n";
        for (const auto& f : t.functions) {
            out << "  " << f.function << " = " << f.inEffect << "\n";
            for (const auto& e : f.entries)
                out << "    " << e.saved << " -> " << e.installed << " @" << e.modulePath << " #" << e.planEntry
                    << "\n";
        }
    }
    return QString::fromStdString(out.str());
}

QString cell(const ModuleTreeModel& model, const QString& path, int column)
{
    return model.indexOfPath(path, column).data().toString();
}

} // namespace

class TestStudio : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        useTestSettings();
        QVERIFY2(QFileInfo::exists(kThrowingMlp), qPrintable(kThrowingMlp));
        QVERIFY2(QFileInfo::exists(kFloat64Gelu), qPrintable(kFloat64Gelu));
    }

    void addProviderFromTreeMenu()
    {
        const auto window = openWindow(kTinyGpt);
        QVERIFY(window->session());
        ModuleTreeModel* tree = part<kforge::ui::ModuleTreeModel>(*window, "moduleModel");
        const std::unique_ptr<QMenu> menu(part<kforge::ui::ModuleTreePage>(*window, "modulePage")
                                              ->createContextMenu(tree->indexOfPath(QStringLiteral("blocks.0.mlp"))));
        // One submenu per function the MLP's subtree calls, each listing the catalog's providers of it.
        QVERIFY(menu->findChild<QMenu*>(QStringLiteral("addProvider:linear")));
        QAction* add = addProviderAction(menu.get(), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        QVERIFY(add);
        QVERIFY(!addProviderAction(menu.get(), QStringLiteral("softmax"), QStringLiteral("AtenSoftmaxProvider")));
        add->trigger();

        QCOMPARE(planDocument(*window)->model()->rowCount(), 1);
        QCOMPARE(planRow(*window, 0), (QStringList{"blocks.0.mlp", "gelu", "AtenGeluProvider"}));
        QTableView* table = part<kforge::ui::PlanEditorView>(*window, "planEditorView")->view();
        QCOMPARE(table->model()->rowCount(), 1);
        QCOMPARE(table->currentIndex().row(), 0);
        QVERIFY(window->dockNamed(QStringLiteral("plan"))->isVisible());
        // Validated against the model: a correct entry has no problem.
        QCOMPARE(table->model()->index(0, PlanModel::ProblemsColumn).data().toString(), QString());
        // The settings form follows the selected entry.
        QCOMPARE(part<kforge::ui::PlanEditorView>(*window, "planEditorView")->settingsForm()->row(), 0);
        // The tree shows the hook and the entry.
        QCOMPARE(tree->hookState(QStringLiteral("blocks.0.mlp")), ModuleTreeModel::Hooked);
        QCOMPARE(tree->hookState(QStringLiteral("blocks.0.mlp.fc")), ModuleTreeModel::InScope);
        QCOMPARE(cell(*tree, "blocks.0.mlp", ModuleTreeModel::PlanColumn), QStringLiteral("gelu → AtenGeluProvider"));
        QVERIFY(window->isWindowModified());
        QVERIFY2(window->windowTitle().contains(QStringLiteral("Untitled plan[*]")), qPrintable(window->windowTitle()));
    }

    void undoRedo()
    {
        const auto window = openWindow(kTinyGpt);
        const MainWindow::Actions& actions = window->actions();
        QCOMPARE(actions.undo->shortcut(), QKeySequence(QKeySequence::Undo));
        QVERIFY(actions.redo->shortcuts().contains(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)));
        QVERIFY(!actions.undo->isEnabled());

        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        window->addPlanEntry(QStringLiteral("head"), QStringLiteral("linear"), QStringLiteral("AtenLinearProvider"));
        // An edit in the table: the enable box.
        PlanModel* model = planDocument(*window)->model();
        QVERIFY(model->setData(model->index(0, PlanModel::EnabledColumn), Qt::Unchecked, Qt::CheckStateRole));
        QCOMPARE(part<kforge::ui::ModuleTreeModel>(*window, "moduleModel")->hookState(QStringLiteral("blocks.0.mlp")),
                 ModuleTreeModel::NotHooked);
        // Move down, from the editor's toolbar.
        part<kforge::ui::PlanEditorView>(*window, "planEditorView")->selectRow(0);
        part<kforge::ui::PlanEditorView>(*window, "planEditorView")->actions().moveDown->trigger();
        QCOMPARE(planRow(*window, 1), (QStringList{"blocks.0.mlp", "gelu", "AtenGeluProvider"}));

        actions.undo->trigger(); // move
        QCOMPARE(planRow(*window, 0), (QStringList{"blocks.0.mlp", "gelu", "AtenGeluProvider"}));
        actions.undo->trigger(); // disable
        QVERIFY(planDocument(*window)->plan().entries.front().enabled);
        QCOMPARE(part<kforge::ui::ModuleTreeModel>(*window, "moduleModel")->hookState(QStringLiteral("blocks.0.mlp")),
                 ModuleTreeModel::Hooked);
        actions.undo->trigger();
        actions.undo->trigger();
        QCOMPARE(model->rowCount(), 0);
        QVERIFY(!window->isWindowModified());
        QVERIFY(!actions.undo->isEnabled());

        for (int i = 0; i < 4; ++i)
            actions.redo->trigger();
        QCOMPARE(model->rowCount(), 2);
        QCOMPARE(planRow(*window, 1), (QStringList{"blocks.0.mlp", "gelu", "AtenGeluProvider"}));
        QVERIFY(!planDocument(*window)->plan().entries.back().enabled);
        QVERIFY(window->isWindowModified());

        // The settings form edits through the undo stack too.
        auto* undo = planDocument(*window)->undoStack();
        const int before = undo->count();
        planDocument(*window)->editEntry(0, planDocument(*window)->plan().entries.front(), QStringLiteral("noop"));
        QCOMPARE(undo->count(), before + 1);
        part<kforge::ui::PlanEditorView>(*window, "planEditorView")->selectRow(0);
        part<kforge::ui::PlanEditorView>(*window, "planEditorView")->actions().remove->trigger();
        QCOMPARE(model->rowCount(), 1);
        actions.undo->trigger();
        QCOMPARE(model->rowCount(), 2);
    }

    void savePlanAndReopen()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString file = dir.filePath(QStringLiteral("tiny-gpt.kfplan.json"));
        const auto window = openWindow(kTinyGpt);
        QSignalSpy prompted(window.get(), &MainWindow::unsavedChangesPrompted);
        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        window->addPlanEntry(QStringLiteral("blocks.1.attn"), QStringLiteral("scaled_dot_product_attention"),
                             QStringLiteral("TorchSDPAKernelProvider"));
        QVERIFY(window->savePlanAs(file));
        QVERIFY(!window->isWindowModified());
        QVERIFY2(window->windowTitle().startsWith(QDir::toNativeSeparators(file)), qPrintable(window->windowTitle()));
        QCOMPARE(kforge::readPlan(file.toStdString()).entries.size(), size_t(2));

        QVERIFY(window->newPlan()); // nothing unsaved: no prompt
        QCOMPARE(prompted.count(), 0);
        QCOMPARE(planDocument(*window)->model()->rowCount(), 0);
        QVERIFY(window->windowTitle().startsWith(QStringLiteral("Untitled plan")));

        QVERIFY(window->openPlan(file));
        QCOMPARE(planDocument(*window)->model()->rowCount(), 2);
        QCOMPARE(planRow(*window, 1),
                 (QStringList{"blocks.1.attn", "scaled_dot_product_attention", "TorchSDPAKernelProvider"}));
        QCOMPARE(part<kforge::ui::ModuleTreeModel>(*window, "moduleModel")->hookState(QStringLiteral("blocks.1.attn")),
                 ModuleTreeModel::Hooked);
        QCOMPARE(planDocument(*window)->filePath(), QFileInfo(file).absoluteFilePath());

        // Unsaved edits: Cancel keeps them (open refused, close refused); Discard lets the open go on.
        window->addPlanEntry(QStringLiteral("head"), QStringLiteral("linear"), QStringLiteral("AtenLinearProvider"));
        window->setUnsavedChanges(MainWindow::UnsavedChanges::Cancel);
        QVERIFY(!window->openPlan(file));
        QCOMPARE(prompted.count(), 1);
        QCOMPARE(planDocument(*window)->model()->rowCount(), 3);
        QVERIFY(!window->close());
        QVERIFY(window->isVisible());
        window->setUnsavedChanges(MainWindow::UnsavedChanges::Discard);
        QVERIFY(window->openPlan(file));
        QCOMPARE(planDocument(*window)->model()->rowCount(), 2);

        // Save writes to the plan's file (Ctrl+S) without asking.
        QCOMPARE(window->actions().savePlan->shortcut(), QKeySequence(QKeySequence::Save));
        planDocument(*window)->removeEntry(0);
        window->actions().savePlan->trigger();
        QVERIFY(!window->isWindowModified());
        QCOMPARE(kforge::readPlan(file.toStdString()).entries.size(), size_t(1));

        // A broken file is reported, the plan stays.
        QSignalSpy planError(window.get(), &MainWindow::planError);
        QVERIFY(!window->openPlan(dir.filePath(QStringLiteral("missing.kfplan.json"))));
        QCOMPARE(planError.count(), 1);
        QVERIFY2(planError.first().first().toString().contains(QStringLiteral("missing.kfplan.json")),
                 qPrintable(planError.first().first().toString()));
        QCOMPARE(planDocument(*window)->model()->rowCount(), 1);

        // AITune export refuses scoped entries with the reason, accepts a root plan.
        QVERIFY(!window->exportAitunePlan(dir.filePath(QStringLiteral("aitune.json"))));
        QCOMPARE(planError.count(), 2);
        window->newPlan();
        window->addPlanEntry(QString(), QStringLiteral("scaled_dot_product_attention"),
                             QStringLiteral("TorchSDPAKernelProvider"));
        QVERIFY(window->exportAitunePlan(dir.filePath(QStringLiteral("aitune.json"))));
    }

    void settingsFormEditsThroughUndo()
    {
        const auto window = openWindow(kTinyGpt);
        window->addPlanEntry(QStringLiteral("blocks.0.attn"), QStringLiteral("scaled_dot_product_attention"),
                             QStringLiteral("TorchSDPAKernelProvider"));
        kforge::ui::ProviderSettingsForm* form =
            part<kforge::ui::PlanEditorView>(*window, "planEditorView")->settingsForm();
        QCOMPARE(form->row(), 0);
        QVERIFY(form->fieldCount() >= 1);
        auto* backend = form->findChild<QComboBox*>(QStringLiteral("setting:backend"));
        QVERIFY(backend);
        QCOMPARE(backend->currentText(), QStringLiteral("MATH")); // the schema's default
        const int flash = backend->findText(QStringLiteral("FLASH_ATTENTION"));
        QVERIFY(flash >= 0);
        backend->setCurrentIndex(flash);
        Q_EMIT backend->activated(flash);
        const auto provider = [&] { return planDocument(*window)->plan().entries.front().provider; };
        QCOMPARE(provider().value("backend", std::string()), std::string("FLASH_ATTENTION"));
        QCOMPARE(planDocument(*window)->model()->index(0, PlanModel::SettingsColumn).data().toString(),
                 QStringLiteral(R"({"backend":"FLASH_ATTENTION"})"));
        window->actions().undo->trigger();
        QVERIFY(!provider().contains("backend"));
        // The form follows the undo (same entry, same type: the field is updated in place).
        QTRY_COMPARE(form->findChild<QComboBox*>(QStringLiteral("setting:backend"))->currentText(),
                     QStringLiteral("MATH"));
    }

    void validationMessagesInline()
    {
        const auto window = openWindow(kTinyGpt);
        window->addPlanEntry(QStringLiteral("blocks.7"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        window->addPlanEntry(QStringLiteral("embed"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        const PlanModel* model = planDocument(*window)->model();
        QVERIFY(model->index(0, 0).data(PlanModel::ProblemCountRole).toInt() > 0);
        QVERIFY2(!model->index(0, PlanModel::ProblemsColumn).data().toString().isEmpty(), "unknown scope not reported");
        QVERIFY(model->index(1, 0).data(PlanModel::ProblemCountRole).toInt() > 0); // gelu is not called in embed
        planDocument(*window)->undoStack()->undo();
        planDocument(*window)->undoStack()->undo();
        window->addPlanEntry(QStringLiteral("blocks.0"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        QCOMPARE(model->index(0, 0).data(PlanModel::ProblemCountRole).toInt(), 0);
    }

    // An entry that can never fire: the Problems column says why before anything runs, and a forward with the plan
    // names the entry and the reason in the status bar (and planWarningsChanged) without failing.
    void entryThatCanNeverFireIsReportedWhenRunning()
    {
        const auto window = openWindow(kTinyGpt);
        window->addPlanEntry(QStringLiteral("blocks"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        const PlanModel* model = planDocument(*window)->model();
        const QString problems = model->index(0, PlanModel::ProblemsColumn).data().toString();
        QVERIFY2(problems.contains(QStringLiteral("'blocks' (ModuleList) has no forward of its own")),
                 qPrintable(problems));
        QCOMPARE(model->index(1, 0).data(PlanModel::ProblemCountRole).toInt(), 0);

        QSignalSpy warned(window.get(), &MainWindow::planWarningsChanged);
        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        const QString expected = QStringLiteral(
            "plan entry 0 (scope 'blocks', gelu -> AtenGeluProvider) can never fire: 'blocks' (ModuleList) has no "
            "forward of its own: the model calls its children directly, so the scope is never entered");
        QCOMPARE(warned.count(), 1);
        QCOMPARE(warned.first().first().toStringList(), QStringList{expected});
        QCOMPARE(window->planWarnings(), QStringList{expected});
        const auto [ok, message] = waitForRun(finished);
        QVERIFY2(ok, qPrintable(message));
        const QString status = statusMessage(*window);
        QVERIFY2(status.startsWith(message) && status.contains(expected), qPrintable(status));
        // The other entry served its call; the one that cannot fire served none.
        QCOMPARE(runController(*window)->statistics().modules().at("blocks.0.mlp").providerCalls, std::int64_t(1));

        // Fixed: the next forward has nothing to warn about.
        planDocument(*window)->undoStack()->undo();
        planDocument(*window)->undoStack()->undo();
        window->addPlanEntry(QStringLiteral("blocks.1"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        QVERIFY(window->runForward());
        QVERIFY(warned.last().first().toStringList().isEmpty());
        QVERIFY(waitForRun(finished).first);
        QVERIFY2(!statusMessage(*window).contains(QStringLiteral("can never fire")),
                 qPrintable(statusMessage(*window)));
    }

    // Issue 68 in the desktop: an entry for a function the exported program decomposed (run_decompositions() left each
    // linear as permute + addmm) and an entry on a module inside a torch.cond branch can never fire; the plan editor's
    // Problems column says why and what to do, as every CLI command does (tests/data/models/make_*.py made both), and a
    // forward with the plan runs and names the entry as one that can never fire.
    void entriesThatCanNeverFireInExportedProgramsSayWhy()
    {
        const QString models = QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/../../data/models/");
        const auto runWarns = [](MainWindow& window, const QString& expected) {
            QSignalSpy finished(&window, &MainWindow::runFinished);
            QVERIFY2(window.runForward(), qPrintable(statusMessage(window)));
            const QStringList warnings = window.planWarnings();
            QVERIFY2(warnings.size() == 1 && warnings.first().startsWith(expected),
                     qPrintable(QStringLiteral("plan warnings: [") + warnings.join(QStringLiteral(" | ")) + u']'));
            const auto [ok, message] = waitForRun(finished);
            QVERIFY2(ok, qPrintable(message));
        };
        const auto decomposed = openWindow(models + QStringLiteral("decomposed_mlp.pt2"));
        decomposed->addPlanEntry(QStringLiteral("fc1"), QStringLiteral("linear"), QStringLiteral("AtenLinearProvider"));
        const QString linear =
            planDocument(*decomposed)->model()->index(0, PlanModel::ProblemsColumn).data().toString();
        QVERIFY2(linear.contains(QStringLiteral("linear is decomposed into permute + addmm in this program")),
                 qPrintable(linear));
        runWarns(*decomposed, QStringLiteral("plan entry 0 (scope 'fc1', linear -> AtenLinearProvider) can never fire: "
                                             "linear is decomposed into permute + addmm in this program"));
        if (QTest::currentTestFailed())
            return;

        const auto cond = openWindow(models + QStringLiteral("cond_branches.pt2"));
        cond->addPlanEntry(QStringLiteral("gate.cold"), QStringLiteral("linear"), QStringLiteral("AtenLinearProvider"));
        const QString branch = planDocument(*cond)->model()->index(0, PlanModel::ProblemsColumn).data().toString();
        QVERIFY2(branch.contains(QStringLiteral("'gate.cold' runs inside a torch.cond branch of 'gate'")),
                 qPrintable(branch));
        runWarns(*cond, QStringLiteral("plan entry 0 (scope 'gate.cold', linear -> AtenLinearProvider) can never fire: "
                                       "'gate.cold' runs inside a torch.cond branch of 'gate'"));
    }

    // Issue 68 item 4 in the desktop: opening a program whose module calls torch.cond says once, in the status bar,
    // that export records no module stack inside cond branches and which scope plans the branches' calls.
    void modulesInsideCondBranchesAreExplainedWhenTheProgramOpens()
    {
        const QString models = QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/../../data/models/");
        const auto cond = openWindow(models + QStringLiteral("cond_branches.pt2"));
        const QString status = QStringLiteral("status bar: ") + statusMessage(*cond);
        QVERIFY2(status.count(QStringLiteral("run inside torch.cond branches of 'gate'")) == 1, qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("export records no module stack inside cond branches")),
                 qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("plan them with scope 'gate' (the module holding the cond)")),
                 qPrintable(status));
    }

    // CpuGeluProvider computes float32 and bfloat16 only: it declines a float64 call, the original serves it and is
    // credited with it. The plan editor's Declined column counts the entry's declines (the reason in the tooltip),
    // the event log shows the decline on the original's call, and the run's message says so.
    void declinedCallsAreShownPerEntry()
    {
        const auto window = openWindow(kFloat64Gelu);
        QVERIFY(window->session());
        QString error;
        QVERIFY2(window->setInputSpecs({QStringLiteral("float64[2,8]")}, &error), qPrintable(error));
        // A disabled entry first: the runtime numbers entries as the plan does, disabled ones included.
        window->addPlanEntry(QString(), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        planDocument(*window)->setEntryEnabled(0, false);
        window->addPlanEntry(QStringLiteral("act"), QStringLiteral("gelu"), QStringLiteral("CpuGeluProvider"));
        PlanModel* model = planDocument(*window)->model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->headerData(PlanModel::DeclinedColumn, Qt::Horizontal).toString(), QStringLiteral("Declined"));
        QCOMPARE(model->index(1, PlanModel::DeclinedColumn).data().toString(), QString()); // nothing ran yet

        const QString reason = QStringLiteral("a dtype other than float32 and bfloat16");
        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        const auto [ok, message] = waitForRun(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("1 call declined by CpuGeluProvider")) && message.contains(reason) &&
                     message.endsWith(QStringLiteral("; the original served it")),
                 qPrintable(message));
        QVERIFY2(statusMessage(*window).contains(QStringLiteral("1 call declined by CpuGeluProvider")),
                 qPrintable(statusMessage(*window)));

        // The entry that declined, and only it.
        const QModelIndex declined = model->index(1, PlanModel::DeclinedColumn);
        QCOMPARE(declined.data().toString(), QStringLiteral("1"));
        QCOMPARE(declined.data(PlanModel::DeclinedCallsRole).toULongLong(), 1ULL);
        const QString tooltip = declined.data(Qt::ToolTipRole).toString();
        QVERIFY2(tooltip.contains(QStringLiteral("declined 1 call of gelu")) &&
                     tooltip.contains(QStringLiteral("Last reason: ") + reason),
                 qPrintable(tooltip));
        QCOMPARE(model->index(0, PlanModel::DeclinedColumn).data().toString(), QString());
        QCOMPARE(model->index(0, PlanModel::DeclinedColumn).data(PlanModel::DeclinedCallsRole).toULongLong(), 0ULL);
        QCOMPARE(runController(*window)->declines().size(), size_t(1));
        QCOMPARE(runController(*window)->declines().front().entry, 1);
        // Credited to the original: the tree counts no provider call under `act`.
        QCOMPARE(runController(*window)->statistics().modules().at("act").providerCalls, std::int64_t(0));

        // The event log: the original's call of gelu, with the decline as its detail (and the filter finds it).
        const kforge::ui::EventLogModel* log = runController(*window)->eventLog();
        QString detail;
        for (int row = 0; row < log->rowCount(); ++row)
            if (log->event(row).kind == kforge::EventKind::OriginalCall && log->event(row).function == "gelu")
                detail = log->index(row, kforge::ui::EventLogModel::DetailColumn).data().toString();
        QVERIFY2(detail.startsWith(QStringLiteral("declined by CpuGeluProvider")) && detail.endsWith(reason),
                 qPrintable(detail));
        part<kforge::ui::EventLogView>(*window, "eventLogView")
            ->findChild<QLineEdit*>(QStringLiteral("eventFilter"))
            ->setText(QStringLiteral("declined by"));
        QVERIFY(part<kforge::ui::EventLogView>(*window, "eventLogView")->filterModel()->rowCount() >= 1);

        // A new run starts the column over (cleared while it runs); the count is that run's, not a total.
        QVERIFY(window->runForward());
        QCOMPARE(model->index(1, PlanModel::DeclinedColumn).data().toString(), QString());
        QVERIFY(waitForRun(finished).first);
        QCOMPARE(model->index(1, PlanModel::DeclinedColumn).data().toString(), QStringLiteral("1"));

        // A plan edit clears it: the counts belong to the plan that ran.
        kforge::PlanEntry entry = model->entry(1);
        entry.note = "float64 here";
        planDocument(*window)->editEntry(1, entry, QStringLiteral("Edit note"));
        QCOMPARE(model->index(1, PlanModel::DeclinedColumn).data().toString(), QString());
        QVERIFY(model->declines().empty());

        // An edit while a forward runs: its declines are not shown on a plan that did not run.
        QVERIFY(window->runForward());
        planDocument(*window)->undoStack()->undo();
        const auto [editedOk, editedMessage] = waitForRun(finished);
        QVERIFY2(editedOk && editedMessage.contains(QStringLiteral("declined")), qPrintable(editedMessage));
        QVERIFY(model->declines().empty());

        // A served call declines nothing: a float32 input.
        QVERIFY2(window->setInputSpecs({QStringLiteral("float32[2,8]")}, &error), qPrintable(error));
        QVERIFY(window->runForward());
        const auto [servedOk, servedMessage] = waitForRun(finished);
        QVERIFY2(servedOk && !servedMessage.contains(QStringLiteral("declined")), qPrintable(servedMessage));
        QCOMPARE(model->index(1, PlanModel::DeclinedColumn).data().toString(), QString());
        QVERIFY(!model->index(1, PlanModel::DeclinedColumn).data(Qt::ToolTipRole).toString().isEmpty());
        QCOMPARE(runController(*window)->statistics().modules().at("act").providerCalls, std::int64_t(1));
    }

    void runWithPlanCountsCalls()
    {
        const auto window = openWindow(kTinyGpt);
        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        QCOMPARE(window->actions().run->shortcut(), QKeySequence(Qt::Key_F5));
        window->actions().run->trigger();
        QVERIFY(runController(*window)->isRunning()); // off the UI thread: run() returns at once
        const auto [ok, message] = waitForRun(finished);
        QVERIFY2(ok, qPrintable(message));

        const ModuleTreeModel* tree = part<kforge::ui::ModuleTreeModel>(*window, "moduleModel");
        const QModelIndex mlp = tree->indexOfPath(QStringLiteral("blocks.0.mlp"), ModuleTreeModel::CallsColumn);
        // gelu by the provider, the two linears inside the hooked MLP by the originals.
        QVERIFY2(mlp.data(ModuleTreeModel::SortRole).toLongLong() >= 3, qPrintable(mlp.data().toString()));
        QVERIFY(
            tree->indexOfPath(QString(), ModuleTreeModel::CallsColumn).data(ModuleTreeModel::SortRole).toLongLong() >
            mlp.data(ModuleTreeModel::SortRole).toLongLong());
        const auto& stats = runController(*window)->statistics().modules();
        QCOMPARE(stats.at("blocks.0.mlp").providerCalls, std::int64_t(1));
        QCOMPARE(stats.at("blocks.0.mlp").entries, std::int64_t(1));

        // The event log has the run, provider call included.
        const kforge::ui::EventLogModel* log = runController(*window)->eventLog();
        QAbstractItemModelTester tester(part<kforge::ui::EventLogView>(*window, "eventLogView")->filterModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        bool providerCall = false;
        for (int row = 0; row < log->rowCount(); ++row)
            providerCall |= log->event(row).kind == kforge::EventKind::ProviderCall &&
                            log->event(row).provider == "AtenGeluProvider";
        QVERIFY(providerCall);
        QVERIFY2(part<kforge::ui::EventLogView>(*window, "eventLogView")
                     ->countersText()
                     .contains(QStringLiteral("0 dropped")),
                 qPrintable(part<kforge::ui::EventLogView>(*window, "eventLogView")->countersText()));
        // Deactivated after a clean run, nothing left over.
        QVERIFY(!runController(*window)->runtimeActive());
        QVERIFY(runController(*window)->leftovers().empty());

        // A second run starts the statistics over.
        window->runForward();
        QVERIFY(waitForRun(finished).first);
        QCOMPARE(runController(*window)->statistics().modules().at("blocks.0.mlp").providerCalls, std::int64_t(1));
    }

    void leftoverShownAndUnwound()
    {
        const auto window = openWindow(kThrowingMlp);
        QVERIFY(window->session());
        QString error;
        QVERIFY2(window->setInputSpecs({QStringLiteral("float32[2]")}, &error), qPrintable(error));
        window->addPlanEntry(QStringLiteral("act"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        window->actions().keepLeftovers->setChecked(true);
        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        const auto [ok, message] = waitForRun(finished);
        QVERIFY2(!ok, qPrintable(message));

        // The stacks view shows the leftover with its reason, in the warning colour, and offers Unwind.
        FunctionStacksModel* stacks = runController(*window)->stacksModel();
        QAbstractItemModelTester tester(stacks, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(stacks->leftovers().size(), size_t(1));
        const kforge::LeftoverPatch& patch = stacks->leftovers().front();
        QCOMPARE(patch.function, std::string("gelu"));
        QCOMPARE(patch.provider, std::string("AtenGeluProvider"));
        QCOMPARE(patch.modulePath, std::string("act"));
        QVERIFY2(!patch.error.empty(), "the leftover's error text is missing");
        const QModelIndex group = stacks->index(stacks->rowCount() - 1, 0);
        QCOMPARE(stacks->kindOf(group), FunctionStacksModel::RowKind::LeftoverGroup);
        const QModelIndex row = stacks->index(0, FunctionStacksModel::DetailColumn, group);
        QVERIFY2(row.data().toString().contains(QStringLiteral("exit of act never ran")),
                 qPrintable(row.data().toString()));
        QVERIFY(row.data(Qt::ForegroundRole).isValid());
        QPushButton* unwind = part<kforge::ui::FunctionStacksView>(*window, "functionStacksView")->unwindButton();
        QVERIFY(unwind->isEnabled());
        QVERIFY(window->actions().unwind->isEnabled());
        QVERIFY(runController(*window)->runtimeActive());
        // The patch really is in effect on the forward thread.
        bool inEffect = false;
        for (const auto& thread : kforge::snapshotFunctionStacks())
            for (const auto& f : thread.functions)
                inEffect |= thread.thread == patch.thread && f.function == "gelu" && f.inEffect == "AtenGeluProvider";
        QVERIFY(inEffect);

        QTest::mouseClick(unwind, Qt::LeftButton);
        QVERIFY(runController(*window)->leftovers().empty());
        QCOMPARE(stacks->leftovers().size(), size_t(0));
        QVERIFY(!unwind->isEnabled());
        for (const auto& thread : kforge::snapshotFunctionStacks())
            for (const auto& f : thread.functions)
                QVERIFY2(!(thread.thread == patch.thread && f.function == "gelu"), "gelu still replaced after Unwind");
        QVERIFY(!runController(*window)->runtimeActive());

        // Without keep-leftovers the call guard unwinds at once: nothing to show.
        window->actions().keepLeftovers->setChecked(false);
        QVERIFY(window->runForward());
        QVERIFY(!waitForRun(finished).first);
        QCOMPARE(stacks->leftovers().size(), size_t(0));
    }

    void steppingPausesAtBreakpoint()
    {
        const auto window = openWindow(kTinyGpt);
        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        ModuleTreeModel* tree = part<kforge::ui::ModuleTreeModel>(*window, "moduleModel");
        {
            const std::unique_ptr<QMenu> menu(
                part<kforge::ui::ModuleTreePage>(*window, "modulePage")
                    ->createContextMenu(tree->indexOfPath(QStringLiteral("blocks.0.mlp"))));
            QAction* toggle = menu->findChild<QAction*>(QStringLiteral("toggleModuleBreakpoint"));
            QVERIFY(toggle);
            QVERIFY(!toggle->isChecked());
            toggle->trigger();
        }
        QVERIFY(tree->indexOfPath(QStringLiteral("blocks.0.mlp")).data(ModuleTreeModel::BreakpointRole).toBool());

        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        kforge::ui::RunController* run = runController(*window);
        QTRY_VERIFY_WITH_TIMEOUT(run->isPaused(), kTimeoutMs);
        QCOMPARE(window->runStatusText(), QStringLiteral("paused at blocks.0.mlp (module enter)"));
        QCOMPARE(tree->hookState(QStringLiteral("blocks.0.mlp")), ModuleTreeModel::Inside);
        QCOMPARE(tree->hookState(QStringLiteral("blocks")), ModuleTreeModel::Inside);
        QCOMPARE(tree->hookState(QStringLiteral("blocks.1")), ModuleTreeModel::NotHooked);
        QCOMPARE(part<kforge::ui::ModuleTreePage>(*window, "modulePage")->currentPath(),
                 QStringLiteral("blocks.0.mlp"));
        QVERIFY(window->actions().continueRun->isEnabled());
        QVERIFY(window->actions().abort->isEnabled());
        QVERIFY(!window->actions().run->isEnabled());

        // The stacks view shows that moment: what the runtime reports now, the MLP's gelu provider installed.
        const QString shown = describe(run->stacksModel()->threads());
        QCOMPARE(shown, describe(kforge::snapshotFunctionStacks()));
        QVERIFY2(shown.contains(QStringLiteral("gelu = AtenGeluProvider")), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("original -> AtenGeluProvider @blocks.0.mlp")), qPrintable(shown));
        QCOMPARE(part<kforge::ui::FunctionStacksView>(*window, "functionStacksView")->caption(),
                 QStringLiteral("Paused at blocks.0.mlp (module enter)"));

        // Step: the next pause point, the forward still inside the MLP.
        QCOMPARE(window->actions().step->shortcut(), QKeySequence(Qt::Key_F10));
        const kforge::PausePoint first = *run->pausePoint();
        window->actions().step->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(run->isPaused(), kTimeoutMs);
        const kforge::PausePoint second = *run->pausePoint();
        QVERIFY(second.kind != first.kind || second.modulePath != first.modulePath ||
                second.function != first.function);
        QVERIFY2(window->runStatusText().startsWith(QStringLiteral("paused at")), qPrintable(window->runStatusText()));
        QCOMPARE(describe(run->stacksModel()->threads()), describe(kforge::snapshotFunctionStacks()));
        // Stepping on to the first call: its pause names the module it runs in, below the plan's scope (it named the
        // scope, or the root without a plan).
        for (int steps = 0; run->pausePoint()->kind == kforge::PausePoint::Kind::ModuleEnter && steps < 8; ++steps) {
            window->actions().step->trigger();
            QTRY_VERIFY_WITH_TIMEOUT(run->isPaused(), kTimeoutMs);
        }
        QCOMPARE(window->runStatusText(), QStringLiteral("paused at blocks.0.mlp.fc (linear call)"));

        // Continue: the forward finishes (the breakpoint is not hit again in this forward).
        QCOMPARE(window->actions().continueRun->shortcut(), QKeySequence(Qt::Key_F8));
        window->actions().continueRun->trigger();
        const auto [ok, message] = waitForRun(finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY(!run->isPaused());
        QCOMPARE(window->runStatusText(), QString());
        QCOMPARE(tree->hookState(QStringLiteral("blocks")), ModuleTreeModel::NotHooked);

        // Abort at the breakpoint: the forward throws, the call guard unwinds. Asked for, so no "Forward Failed" box
        // (with modal errors on, as users have them; a box that comes is counted and closed).
        QVERIFY(window->runForward());
        QTRY_VERIFY_WITH_TIMEOUT(run->isPaused(), kTimeoutMs);
        window->setModalErrors(true);
        int boxes = 0;
        QTimer closer;
        connect(&closer, &QTimer::timeout, [&boxes] {
            if (QWidget* modal = QApplication::activeModalWidget()) {
                ++boxes;
                modal->close();
            }
        });
        closer.start(20);
        window->actions().abort->trigger();
        const auto [aborted, why] = waitForRun(finished);
        QTest::qWait(200); // a box would come right after the run's end
        closer.stop();
        window->setModalErrors(false);
        QCOMPARE(boxes, 0);
        QVERIFY(!aborted);
        QVERIFY2(why.contains(QStringLiteral("aborted")), qPrintable(why));
        QVERIFY(run->leftovers().empty());
        run->toggleModuleBreakpoint(QStringLiteral("blocks.0.mlp"));
        QVERIFY(run->moduleBreakpoints().isEmpty());

        // Step from idle pauses at the root's entry.
        QVERIFY(window->stepForward());
        QTRY_VERIFY_WITH_TIMEOUT(run->isPaused(), kTimeoutMs);
        QCOMPARE(window->runStatusText(), QStringLiteral("paused at (root) (module enter)"));
        window->continueForward();
        QVERIFY(waitForRun(finished).first);
    }

    void closingWhilePausedIsSafe()
    {
        auto window = openWindow(kTinyGpt);
        runController(*window)->toggleModuleBreakpoint(QStringLiteral("blocks.1"));
        QVERIFY(window->runForward());
        QTRY_VERIFY_WITH_TIMEOUT(runController(*window)->isPaused(), kTimeoutMs);
        window.reset(); // aborts the paused forward and waits for it, rather than hang or crash
        QVERIFY(!kforge::Stepper::instance().paused());
        // Its breakpoints went with it: a new window's forward runs through.
        window = openWindow(kTinyGpt);
        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        QVERIFY(waitForRun(finished).first);
    }

    void functionBreakpointFromStacksView()
    {
        const auto window = openWindow(kTinyGpt);
        QMenu* menu = part<kforge::ui::FunctionStacksView>(*window, "functionStacksView")->breakpointMenu();
        Q_EMIT menu->aboutToShow();
        QAction* softmax = nullptr; // under its category's submenu
        for (QAction* category : menu->actions())
            if (category->menu())
                for (QAction* action : category->menu()->actions())
                    if (action->data().toString() == QLatin1String("softmax"))
                        softmax = action;
        QVERIFY(softmax);
        softmax->trigger();
        QVERIFY(runController(*window)->functionBreakpoints().contains(QStringLiteral("softmax")));

        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        QTRY_VERIFY_WITH_TIMEOUT(runController(*window)->isPaused(), kTimeoutMs);
        QVERIFY2(window->runStatusText().endsWith(QStringLiteral("(softmax call)")),
                 qPrintable(window->runStatusText()));
        runController(*window)->clearBreakpoints(); // also lets the forward go on
        window->continueForward();
        QVERIFY(waitForRun(finished).first);
    }

    void filterAndDocks()
    {
        const auto window = openWindow(kTinyGpt);
        kforge::ui::ModuleTreePage* page = part<kforge::ui::ModuleTreePage>(*window, "modulePage");
        QCOMPARE(window->actions().filter->shortcut(), QKeySequence(QKeySequence::Find));
        window->activateWindow();
        window->actions().filter->trigger();
        QTRY_VERIFY(page->filterEdit()->hasFocus());
        QTest::keyClicks(page->filterEdit(), QStringLiteral("attn.qkv"));
        kforge::ui::ModuleTreeFilterModel* proxy = page->filterModel();
        const QModelIndex root = proxy->index(0, 0);
        QCOMPARE(proxy->rowCount(root), 1); // blocks
        page->regexBox()->setChecked(true);
        page->filterEdit()->setText(QStringLiteral("^blocks\\.[01]\\.mlp$"));
        QCOMPARE(proxy->rowCount(proxy->index(0, 0, root)), 2); // blocks.0, blocks.1

        // Docks have names, so their layout survives in QSettings.
        for (const QString& name : {QStringLiteral("stacks"), QStringLiteral("plan"), QStringLiteral("events")}) {
            QVERIFY(window->dockNamed(name));
            QVERIFY(!window->dockNamed(name)->objectName().isEmpty());
            QVERIFY(window->viewNamed(name));
        }
    }

    void dockLayoutIsRestored()
    {
        QSettings().clear();
        {
            auto window = std::make_unique<MainWindow>();
            window->setModalErrors(false);
            window->show();
            window->dockNamed(QStringLiteral("events"))->close();
            QVERIFY(window->close());
        }
        QVERIFY(!QSettings().value(QStringLiteral("mainWindow/state")).toByteArray().isEmpty());
        auto window = std::make_unique<MainWindow>();
        window->restoreSettings();
        window->show();
        QVERIFY(window->dockNamed(QStringLiteral("stacks"))->isVisible());
        QVERIFY(!window->dockNamed(QStringLiteral("events"))->isVisible());
        QSettings().clear();
    }
    // kforge-studio's command line (--run, --profile, --screenshot): the steps run in order, each after the last
    // has ended, and the batch run ends with the picture written and exit code 0.
    void startupScriptRunsItsStepsInOrderThenSavesTheScreenshot()
    {
        QTemporaryDir dir;
        MainWindow window;
        kforge::ui::StartupSteps steps;
        steps.model = kTinyGpt;
        steps.run = true;
        steps.profile = true;
        steps.screenshot = dir.filePath(QStringLiteral("shot.png"));
        kforge::ui::StartupScript script(window, steps);
        QStringList order;
        connect(&window, &MainWindow::runFinished, this, [&order] { order << QStringLiteral("run"); });
        connect(&window, &MainWindow::profileFinished, this, [&order] { order << QStringLiteral("profile"); });
        connect(&script, &kforge::ui::StartupScript::finished, this, [&order] { order << QStringLiteral("end"); });
        QSignalSpy finished(&script, &kforge::ui::StartupScript::finished);
        QSignalSpy errors(&script, &kforge::ui::StartupScript::error);
        script.start();
        QVERIFY(finished.wait(120'000));
        QCOMPARE(finished.first().first().toInt(), 0);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QCOMPARE(order, (QStringList{QStringLiteral("run"), QStringLiteral("profile"), QStringLiteral("end")}));
        QVERIFY(profileResults(window)->baseline.run);
        QCOMPARE(QImage(steps.screenshot).size(), window.size()); // the whole window, as laid out for the picture
    }

    // --compare: the plan against a baseline in alternating rounds, in place of the baseline alone; the batch run ends
    // with the comparison held (what the Comparison and differential views then show).
    void startupScriptComparesThePlanWhenAsked()
    {
        QTemporaryDir dir;
        MainWindow window;
        window.addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        kforge::ui::StartupSteps steps;
        steps.model = kTinyGpt;
        steps.compare = true;
        steps.screenshot = dir.filePath(QStringLiteral("shot.png"));
        kforge::ui::StartupScript script(window, steps);
        QSignalSpy finished(&script, &kforge::ui::StartupScript::finished);
        QSignalSpy errors(&script, &kforge::ui::StartupScript::error);
        script.start();
        QVERIFY(finished.wait(120'000));
        QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().first().toString()));
        QCOMPARE(finished.first().first().toInt(), 0);
        QVERIFY(profileResults(window)->baseline.run && profileResults(window)->plan.run);
        QVERIFY(profileResults(window)->comparison != nullptr);
    }

    // Inputs that do not parse end the run with exit code 1 and say why; nothing is run or written.
    void startupScriptStopsAtInputsThatDoNotParse()
    {
        QTemporaryDir dir;
        MainWindow window;
        kforge::ui::StartupSteps steps;
        steps.model = kTinyGpt;
        steps.inputs = {QStringLiteral("float32[1,")};
        steps.run = true;
        steps.screenshot = dir.filePath(QStringLiteral("shot.png"));
        kforge::ui::StartupScript script(window, steps);
        QSignalSpy finished(&script, &kforge::ui::StartupScript::finished);
        QSignalSpy errors(&script, &kforge::ui::StartupScript::error);
        QSignalSpy ran(&window, &MainWindow::runFinished);
        script.start();
        QVERIFY(finished.wait(120'000));
        QCOMPARE(finished.first().first().toInt(), 1);
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors.first().first().toString().contains(QStringLiteral("float32[1,")),
                 qPrintable(errors.first().first().toString()));
        QVERIFY(ran.isEmpty());
        QVERIFY(!QFileInfo::exists(steps.screenshot));
    }

    // A picture that cannot be written is exit code 2, with the file named.
    void startupScriptReportsAScreenshotItCannotWrite()
    {
        QTemporaryDir dir;
        MainWindow window;
        kforge::ui::StartupSteps steps;
        steps.model = kTinyGpt;
        steps.screenshot = dir.filePath(QStringLiteral("missing-folder/shot.png"));
        kforge::ui::StartupScript script(window, steps);
        QSignalSpy finished(&script, &kforge::ui::StartupScript::finished);
        QSignalSpy errors(&script, &kforge::ui::StartupScript::error);
        script.start();
        QVERIFY(finished.wait(120'000));
        QCOMPARE(finished.first().first().toInt(), 2);
        QCOMPARE(errors.size(), 1);
        QVERIFY(errors.first().first().toString().contains(steps.screenshot));
    }
};

QTEST_MAIN(TestStudio)
#include "tst_studio.moc"
