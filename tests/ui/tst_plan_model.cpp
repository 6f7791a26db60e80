// SPDX-License-Identifier: Apache-2.0
// The plan editor's models without windows: PlanModel under the model tester, PlanDocument's undo history,
// plan files through the engine's plan I/O.
#include "item_models/format.h"
#include "item_models/plan_document.h"
#include "item_models/plan_model.h"

#include <kforge/plan.h>

#include <QAbstractItemModelTester>
#include <QFile>
#include <QLocale>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cstdint>
#include <functional>
#include <vector>

using kforge::ui::PlanDocument;
using kforge::ui::PlanModel;

namespace {

// The fixture as a user would write it: three entries, the second one disabled.
const char* const kPlan = R"({
  "format": "kforge-plan", "version": 1,
  "model": {"name": "tiny-gpt"},
  "entries": [
    {"scope": "blocks.0.mlp", "function": "gelu", "provider": {"type": "AtenGeluProvider"}},
    {"scope": "blocks.0.attn", "function": "scaled_dot_product_attention",
     "provider": {"type": "TorchSDPAKernelProvider", "backend": "MATH"}, "enabled": false, "note": "reference"},
    {"scope": "", "function": "softmax", "provider": {"type": "AtenSoftmaxProvider"}}
  ]
})";

kforge::Plan fixture() { return kforge::parsePlan(kPlan, "fixture"); }

kforge::PlanEntry entry(const char* scope, const char* function, const char* provider)
{
    kforge::PlanEntry e;
    e.scope = scope;
    e.function = function;
    e.provider = {{"type", provider}};
    return e;
}

QStringList column(const PlanModel& model, int column)
{
    QStringList values;
    for (int row = 0; row < model.rowCount(); ++row)
        values << model.index(row, column).data().toString();
    return values;
}

} // namespace

class TestPlanModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void columnsOfFixture()
    {
        PlanModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setPlan(fixture());
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), int(PlanModel::ColumnCount));
        QCOMPARE(column(model, PlanModel::ScopeColumn), (QStringList{"blocks.0.mlp", "blocks.0.attn", "(root)"}));
        QCOMPARE(column(model, PlanModel::ProviderColumn),
                 (QStringList{"AtenGeluProvider", "TorchSDPAKernelProvider", "AtenSoftmaxProvider"}));
        QCOMPARE(model.index(1, PlanModel::SettingsColumn).data().toString(), QStringLiteral(R"({"backend":"MATH"})"));
        QCOMPARE(model.index(1, PlanModel::NoteColumn).data().toString(), QStringLiteral("reference"));
        QCOMPARE(model.index(0, PlanModel::EnabledColumn).data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
        QCOMPARE(model.index(1, PlanModel::EnabledColumn).data(Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
        QVERIFY(model.flags(model.index(0, PlanModel::EnabledColumn)) & Qt::ItemIsUserCheckable);
        QVERIFY(!(model.flags(model.index(0, PlanModel::ProblemsColumn)) & Qt::ItemIsEditable));
        QCOMPARE(model.index(2, PlanModel::ScopeColumn).data(Qt::EditRole).toString(), QString());

        // Problems land in their entry's row; plan-wide ones are kept apart.
        model.setProblems({{0, "/entries/0/scope", "unknown-scope", "no module 'blocks.0.mlp'", "did you mean mlp"},
                           {-1, "", "bad", "plan-wide", ""}});
        QCOMPARE(model.index(0, PlanModel::ProblemsColumn).data().toString(),
                 QStringLiteral("no module 'blocks.0.mlp' — did you mean mlp"));
        QCOMPARE(model.index(0, 0).data(PlanModel::ProblemCountRole).toInt(), 1);
        QCOMPARE(model.index(1, PlanModel::ProblemsColumn).data().toString(), QString());
        QCOMPARE(model.planProblems(), QStringList{"plan-wide"});
    }

    // The calls a run's providers declined, per entry: a count in the Declined column, the reason in the tooltip,
    // gone with any change of the plan (a new revision); entries that do not match their row are left out.
    void declinedColumn()
    {
        PlanDocument document;
        PlanModel* model = document.model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        document.setPlan(fixture());
        QCOMPARE(model->headerData(PlanModel::DeclinedColumn, Qt::Horizontal).toString(), QStringLiteral("Declined"));
        QVERIFY(!model->headerData(PlanModel::DeclinedColumn, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
        QVERIFY(!(model->flags(model->index(0, PlanModel::DeclinedColumn)) & Qt::ItemIsEditable));
        QVERIFY(!model->setData(model->index(0, PlanModel::DeclinedColumn), QStringLiteral("5")));
        QCOMPARE(column(*model, PlanModel::DeclinedColumn), (QStringList{"", "", ""}));
        QVERIFY(model->index(0, PlanModel::DeclinedColumn).data(Qt::ToolTipRole).isNull()); // nothing ran yet

        QSignalSpy changed(model, &QAbstractItemModel::dataChanged);
        model->setDeclines({{0, "blocks.0.mlp", "gelu", "AtenGeluProvider", 1234, "a dtype other than float32"},
                            {2, "", "softmax", "AtenSoftmaxProvider", 0, ""},                  // no call: no row
                            {1, "blocks.1.attn", "scaled_dot_product_attention", "P", 3, "x"}, // not that row's
                            {7, "", "gelu", "P", 3, "x"}});                                    // no such row
        QCOMPARE(changed.count(), 1);
        QCOMPARE(column(*model, PlanModel::DeclinedColumn), (QStringList{QLocale().toString(1234), "", ""}));
        QCOMPARE(model->index(0, 0).data(PlanModel::DeclinedCallsRole).toULongLong(), 1234ULL);
        QCOMPARE(model->index(1, 0).data(PlanModel::DeclinedCallsRole).toULongLong(), 0ULL);
        QCOMPARE(model->declines().size(), size_t(1));
        const QString tooltip = model->index(0, PlanModel::DeclinedColumn).data(Qt::ToolTipRole).toString();
        QVERIFY2(tooltip.startsWith(QStringLiteral("AtenGeluProvider declined ")) &&
                     tooltip.endsWith(QStringLiteral("\nLast reason: a dtype other than float32")),
                 qPrintable(tooltip));
        QVERIFY(!model->index(2, PlanModel::DeclinedColumn).data(Qt::ToolTipRole).toString().isEmpty());
        QVERIFY(model->index(0, PlanModel::DeclinedColumn).data(Qt::ForegroundRole).isValid());

        // Every kind of edit, and its undo, is a new revision and clears the column.
        const std::uint64_t before = model->revision();
        document.setEntryEnabled(2, false);
        QVERIFY(model->revision() > before);
        QVERIFY(model->declines().empty());
        QCOMPARE(column(*model, PlanModel::DeclinedColumn), (QStringList{"", "", ""}));
        QVERIFY(model->index(0, PlanModel::DeclinedColumn).data(Qt::ToolTipRole).isNull());
        for (const auto& edit : std::vector<std::function<void()>>{
                 [&] { document.undoStack()->undo(); }, [&] { document.moveEntry(0, 1); },
                 [&] { document.removeEntry(0); }, [&] { document.addEntry(entry("", "gelu", "P")); },
                 [&] { document.setPlan(fixture()); }}) {
            model->setDeclines({{0, model->entry(0).scope, model->entry(0).function, "P", 2, "r"}});
            QCOMPARE(model->declines().size(), size_t(1));
            const std::uint64_t revision = model->revision();
            edit();
            QVERIFY(model->revision() > revision);
            QVERIFY(model->declines().empty());
        }
    }

    // The status bar's line: one entry with its reason, several with a count each.
    // The Measured column: the speedup the plan records, and what re-validation found here beside it; a later
    // change of the plan drops what was found here (it was of the plan before the change).
    void measuredColumn()
    {
        PlanDocument document;
        PlanModel* model = document.model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        kforge::Plan plan = fixture();
        plan.entries[0].measured =
            kforge::EntryMeasurement{{"float32[1,16,1024]", "float32[1,8,1024]"}, 1.5, 1.25, 1.75};
        plan.entries[2].measured = kforge::EntryMeasurement{{"float32[1,4,16,16]"}, 1.2, 1.1, 1.3};
        document.setPlan(plan);
        const auto text = [&](int row) { return model->index(row, PlanModel::MeasuredColumn).data().toString(); };
        QCOMPARE(model->headerData(PlanModel::MeasuredColumn, Qt::Horizontal).toString(), QStringLiteral("Measured"));
        QCOMPARE(text(0), QStringLiteral("1.50× where measured"));
        QCOMPARE(text(1), QString());
        const QString tip = model->index(0, PlanModel::MeasuredColumn).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("1.25× to 1.75×")) && tip.contains(QStringLiteral("float32[1,16,1024]")) &&
                     tip.contains(QStringLiteral("1 more signature")),
                 qPrintable(tip));
        QVERIFY(!(model->flags(model->index(0, PlanModel::MeasuredColumn)) & Qt::ItemIsEditable));

        kforge::EntryRevalidation faster{
            0, {"measured with the CPU ISA level AVX512"}, true, "correct, 1.31x here", 2, 1.31, 0.5};
        kforge::EntryRevalidation notFaster{2, {"torch 2.10.0"}, false, "not faster here", 1, 0.98, 0.4};
        kforge::EntryRevalidation wrong{1, {"torch 2.10.0"}, false, "incorrect here", 1, 0, 0.1};
        QSignalSpy changed(model, &QAbstractItemModel::dataChanged);
        model->setRevalidation({faster, notFaster, wrong, {7, {}, true, "no such row", 0, 0, 0}});
        QVERIFY(changed.count() > 0);
        QCOMPARE(text(0), QStringLiteral("1.31× here · 1.50× where measured"));
        QCOMPARE(text(1), QStringLiteral("disabled here"));
        QCOMPARE(text(2), QStringLiteral("disabled: 0.98× here · 1.20× where measured"));
        QVERIFY(model->index(0, PlanModel::MeasuredColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("Re-validated here (measured with the CPU ISA level AVX512): correct")));
        QVERIFY(model->index(1, PlanModel::MeasuredColumn).data(Qt::ForegroundRole).isValid());
        QVERIFY(!model->revalidationOf(7));

        document.removeEntry(1);
        QCOMPARE(text(0), QStringLiteral("1.50× where measured"));
        QCOMPARE(text(1), QStringLiteral("1.20× where measured"));
    }

    void declinesMessage()
    {
        QCOMPARE(kforge::ui::formatDeclines({}), QString());
        QCOMPARE(kforge::ui::formatDeclines({{1, "act", "gelu", "CpuGeluProvider", 0, ""}}), QString());
        QCOMPARE(kforge::ui::formatDeclines({{1, "act", "gelu", "CpuGeluProvider", 1, "a float64 input"}}),
                 QStringLiteral("1 call declined by CpuGeluProvider: a float64 input; the original served it"));
        QCOMPARE(kforge::ui::formatDeclines({{1, "act", "gelu", "CpuGeluProvider", 3, "a float64 input"}}),
                 QStringLiteral("3 calls declined by CpuGeluProvider: a float64 input; the original served them"));
        QCOMPARE(kforge::ui::formatDeclines(
                     {{0, "", "gelu", "CpuGeluProvider", 3, "a"}, {2, "", "silu", "CpuSiluProvider", 4, "b"}}),
                 QStringLiteral("7 calls declined (CpuGeluProvider: 3, CpuSiluProvider: 4; see the plan's Declined "
                                "column); the original served them"));
    }

    void editsWithoutHandlerApplyDirectly()
    {
        PlanModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setPlan(fixture());
        QVERIFY(model.setData(model.index(0, PlanModel::ScopeColumn), QStringLiteral("blocks.1.mlp")));
        QCOMPARE(model.entry(0).scope, std::string("blocks.1.mlp"));
        QVERIFY(model.setData(model.index(1, PlanModel::SettingsColumn),
                              QStringLiteral(R"({"backend": "FLASH_ATTENTION"})")));
        QCOMPARE(model.entry(1).provider.value("backend", std::string()), std::string("FLASH_ATTENTION"));
        QCOMPARE(model.entry(1).providerType(), std::string("TorchSDPAKernelProvider"));

        QSignalSpy rejected(&model, &PlanModel::editRejected);
        QVERIFY(!model.setData(model.index(1, PlanModel::SettingsColumn), QStringLiteral("{not json")));
        QCOMPARE(rejected.count(), 1);
        QVERIFY(!model.setData(model.index(1, PlanModel::SettingsColumn), QStringLiteral("[1, 2]")));

        // A new provider type starts from its defaults.
        QVERIFY(model.setData(model.index(1, PlanModel::ProviderColumn), QStringLiteral("OtherSDPA")));
        QVERIFY(model.entry(1).provider == nlohmann::json({{"type", "OtherSDPA"}}));
        QVERIFY(model.setData(model.index(1, PlanModel::EnabledColumn), Qt::Checked, Qt::CheckStateRole));
        QVERIFY(model.entry(1).enabled);

        model.moveEntry(0, 2);
        QCOMPARE(column(model, PlanModel::FunctionColumn),
                 (QStringList{"scaled_dot_product_attention", "softmax", "gelu"}));
        model.moveEntry(2, 0);
        QCOMPARE(column(model, PlanModel::FunctionColumn),
                 (QStringList{"gelu", "scaled_dot_product_attention", "softmax"}));
        const kforge::PlanEntry taken = model.takeEntry(1);
        QCOMPARE(taken.function, std::string("scaled_dot_product_attention"));
        model.insertEntry(5, taken); // clamped to the end
        QCOMPARE(model.entry(2).function, std::string("scaled_dot_product_attention"));
    }

    void undoRedoEveryEdit()
    {
        PlanDocument document;
        QAbstractItemModelTester tester(document.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy modified(&document, &PlanDocument::modifiedChanged);
        QUndoStack* undo = document.undoStack();
        document.setPlan(fixture());
        QVERIFY(!document.isModified());
        QCOMPARE(undo->count(), 0);

        document.addEntry(entry("head", "linear", "AtenLinearProvider"));
        QVERIFY(document.isModified());
        QCOMPARE(modified.count(), 1);
        QCOMPARE(document.plan().entries.size(), size_t(4));
        QCOMPARE(undo->undoText(), QStringLiteral("Add linear in head"));

        document.moveEntry(3, 0);
        QCOMPARE(document.plan().entries.front().scope, std::string("head"));
        document.setEntryEnabled(0, false);
        QVERIFY(!document.plan().entries.front().enabled);
        // An edit in the table is a command too.
        PlanModel* model = document.model();
        QVERIFY(model->setData(model->index(0, PlanModel::NoteColumn), QStringLiteral("try me")));
        QCOMPARE(document.plan().entries.front().note, std::string("try me"));
        document.removeEntry(1);
        QCOMPARE(document.plan().entries.size(), size_t(3));
        QCOMPARE(undo->count(), 5);

        const kforge::Plan edited = document.plan();
        for (int i = 0; i < 5; ++i)
            undo->undo();
        QCOMPARE(kforge::toJson(document.plan()), kforge::toJson(fixture()));
        QVERIFY(!document.isModified());
        for (int i = 0; i < 5; ++i)
            undo->redo();
        QCOMPARE(kforge::toJson(document.plan()), kforge::toJson(edited));
        QVERIFY(document.isModified());

        // Out-of-range requests are ignored, not pushed.
        document.removeEntry(17);
        document.moveEntry(0, 9);
        document.setEntryEnabled(5, true);
        QCOMPARE(undo->count(), 5);
    }

    void saveAndReload()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        PlanDocument document;
        QSignalSpy path(&document, &PlanDocument::filePathChanged);
        document.setPlan(fixture());
        document.addEntry(entry("head", "linear", "AtenLinearProvider"));
        const QString file = dir.filePath(QStringLiteral("tiny.kfplan.json"));
        QString error;
        QVERIFY2(document.save(file, &error), qPrintable(error));
        QVERIFY(!document.isModified());
        QCOMPARE(document.filePath(), file);
        QCOMPARE(path.count(), 1);

        PlanDocument reopened;
        QVERIFY2(reopened.load(file, &error), qPrintable(error));
        QCOMPARE(kforge::toJson(reopened.plan()), kforge::toJson(document.plan()));
        QCOMPARE(reopened.filePath(), file);
        QVERIFY(!reopened.isModified());
        QCOMPARE(reopened.undoStack()->count(), 0);

        // Undoing past the save point makes the document modified again.
        document.undoStack()->undo();
        QVERIFY(document.isModified());

        QFile broken(dir.filePath(QStringLiteral("broken.kfplan.json")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"format\": \"kforge-plan\", \"entries\": [\n  {\"scope\": }\n]}");
        broken.close();
        QVERIFY(!reopened.load(broken.fileName(), &error));
        QVERIFY2(error.contains(QStringLiteral("broken.kfplan.json")), qPrintable(error));
        QVERIFY2(!error.contains(QLatin1Char('\n')), qPrintable(error));
        QCOMPARE(reopened.filePath(), file); // a failed open changes nothing
    }

    void exportAitune()
    {
        QTemporaryDir dir;
        PlanDocument document;
        kforge::Plan plan;
        plan.entries.push_back(entry("", "scaled_dot_product_attention", "TorchSDPAKernelProvider"));
        document.setPlan(plan);
        const QString file = dir.filePath(QStringLiteral("aitune.json"));
        QString error;
        QVERIFY2(document.exportAitune(file, &error), qPrintable(error));
        QFile written(file);
        QVERIFY(written.open(QIODevice::ReadOnly));
        const nlohmann::json json = nlohmann::json::parse(written.readAll().toStdString());
        QCOMPARE(json["providers"][0]["type"].get<std::string>(), std::string("TorchSDPAKernelProvider"));
        QVERIFY(document.filePath().isEmpty());

        // AITune plans have no scopes: the export refuses with the reason.
        document.addEntry(entry("blocks.0.mlp", "gelu", "AtenGeluProvider"));
        QVERIFY(!document.exportAitune(dir.filePath(QStringLiteral("scoped.json")), &error));
        QVERIFY2(error.contains(QStringLiteral("scope")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestPlanModel)
#include "tst_plan_model.moc"
