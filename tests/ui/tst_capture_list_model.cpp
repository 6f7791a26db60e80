// SPDX-License-Identifier: Apache-2.0
// The graph-captures model without windows: synthetic capture records (what ModelSession::captures() hands
// out), stale marks that follow plan edits through the plan document's undo stack, and the leftovers of a
// failed capture, in effect or unwound.
#include "item_models/capture_list_model.h"
#include "item_models/plan_document.h"
#include "item_models/semantic_colors.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>
#include <QUndoStack>

using kforge::CaptureRecord;
using kforge::LeftoverPatch;
using kforge::ui::CaptureListModel;

namespace {

kforge::PlanEntry sdpa(const std::string& scope, const std::string& backend)
{
    kforge::PlanEntry entry;
    entry.scope = scope;
    entry.function = "scaled_dot_product_attention";
    entry.provider = {{"type", "TorchSDPAKernelProvider"}, {"backend", backend}};
    return entry;
}

// capture-1 baked in the MATH backend in blocks.0; capture-2 failed and left gelu replaced in blocks.1.mlp.
std::vector<CaptureRecord> fixture()
{
    CaptureRecord good;
    good.id = "capture-1";
    good.ok = true;
    good.replays = 3;
    good.providers = {{"blocks.0", "scaled_dot_product_attention", "TorchSDPAKernelProvider(backend=MATH)"}};

    CaptureRecord failed;
    failed.id = "capture-2";
    failed.ok = false;
    failed.error = "operation not permitted when stream is capturing";
    LeftoverPatch patch;
    patch.function = "gelu";
    patch.provider = "AtenGeluProvider";
    patch.modulePath = "blocks.1.mlp";
    patch.thread = 7;
    patch.runtimeId = 2;
    patch.capture = "capture-2";
    failed.leftovers = {patch};
    return {good, failed};
}

QString cell(const CaptureListModel& model, int row, int column, const QModelIndex& parent = {})
{
    return model.index(row, column, parent).data().toString();
}

} // namespace

class TestCaptureListModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rowsOfFixture()
    {
        CaptureListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCaptures(fixture());
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(cell(model, 0, CaptureListModel::CaptureColumn), QStringLiteral("capture-1"));
        QCOMPARE(cell(model, 1, CaptureListModel::StateColumn), QStringLiteral("failed"));
        QVERIFY(cell(model, 1, CaptureListModel::DetailColumn).contains(QStringLiteral("stream is capturing")));

        // The recorded provider, per scope.
        const QModelIndex good = model.index(0, 0);
        QCOMPARE(model.rowCount(good), 1);
        QCOMPARE(model.kindOf(model.index(0, 0, good)), CaptureListModel::RowKind::Provider);
        QCOMPARE(cell(model, 0, CaptureListModel::ScopeColumn, good), QStringLiteral("blocks.0"));
        QCOMPARE(cell(model, 0, CaptureListModel::FunctionColumn, good),
                 QStringLiteral("scaled_dot_product_attention"));
        QCOMPARE(cell(model, 0, CaptureListModel::ProviderColumn, good),
                 QStringLiteral("TorchSDPAKernelProvider(backend=MATH)"));

        // The failed capture's leftover, in the warning colour, with the module whose exit never ran and the error.
        const QModelIndex failed = model.index(1, 0);
        QCOMPARE(model.rowCount(failed), 1);
        const QModelIndex leftover = model.index(0, CaptureListModel::DetailColumn, failed);
        QCOMPARE(model.kindOf(leftover), CaptureListModel::RowKind::Leftover);
        QVERIFY2(leftover.data().toString().contains(QStringLiteral("exit of blocks.1.mlp never ran")),
                 qPrintable(leftover.data().toString()));
        QVERIFY(leftover.data().toString().contains(QStringLiteral("stream is capturing")));
        QCOMPARE(leftover.data(Qt::ForegroundRole).value<QBrush>().color(),
                 kforge::ui::semanticTextColor(kforge::ui::Semantic::Leftover)); // the theme's leftover colour
    }

    void staleMarkFollowsPlanEdits()
    {
        CaptureListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        kforge::ui::PlanDocument document;
        connect(&document, &kforge::ui::PlanDocument::planChanged, &model, [&] { model.setPlan(document.plan()); });
        model.setCaptures(fixture());
        QVERIFY(model.isStale(0)); // the empty plan installs nothing, the capture baked in MATH

        document.addEntry(sdpa("blocks.0", "MATH"));
        QVERIFY(!model.isStale(0));
        QCOMPARE(cell(model, 0, CaptureListModel::StateColumn), QStringLiteral("current"));
        QVERIFY(!model.isStale(1)); // a failed capture has nothing to replay: never stale

        // Changing the recorded provider's settings makes the capture stale; undo makes it current again.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        document.editEntry(0, sdpa("blocks.0", "FLASH_ATTENTION"), QStringLiteral("backend"));
        QVERIFY(model.isStale(0));
        QVERIFY(changed.count() > 0);
        QCOMPARE(cell(model, 0, CaptureListModel::StateColumn), QStringLiteral("stale"));
        QVERIFY(model.index(0, 0).data(CaptureListModel::StaleRole).toBool());
        document.undoStack()->undo();
        QVERIFY(!model.isStale(0));

        // Another scope is another provider installation too.
        document.editEntry(0, sdpa("blocks.1", "MATH"), QStringLiteral("scope"));
        QVERIFY(model.isStale(0));
    }

    void unknownProviderTypeIsStaleWithReason()
    {
        CaptureListModel model;
        model.setCaptures(fixture());
        kforge::Plan plan;
        kforge::PlanEntry entry = sdpa("blocks.0", "MATH");
        entry.provider = {{"type", "NoSuchProvider"}};
        plan.entries = {entry};
        model.setPlan(plan);
        QVERIFY(model.isStale(0));
        QVERIFY(model.index(0, CaptureListModel::StateColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("NoSuchProvider")));
    }

    void leftoversInEffectUntilUnwound()
    {
        CaptureListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCaptures(fixture());
        const QModelIndex failed = model.index(1, 0);
        QCOMPARE(model.leftoversInEffect(), 0);
        QCOMPARE(cell(model, 0, CaptureListModel::StateColumn, failed), QStringLiteral("unwound"));

        // The runtime reports the patch as still installed (keep-leftovers mode): in effect.
        model.setLiveLeftovers(fixture()[1].leftovers);
        QCOMPARE(model.leftoversInEffect(), 1);
        QCOMPARE(cell(model, 0, CaptureListModel::StateColumn, failed), QStringLiteral("in effect"));
        QVERIFY(model.index(0, 0, failed).data(CaptureListModel::InEffectRole).toBool());

        // A live patch of another thread is not this one.
        LeftoverPatch other = fixture()[1].leftovers.front();
        other.thread = 8;
        model.setLiveLeftovers({other});
        QCOMPARE(model.leftoversInEffect(), 0);

        // Unwound: the runtime reports nothing.
        model.setLiveLeftovers({});
        QCOMPARE(cell(model, 0, CaptureListModel::StateColumn, failed), QStringLiteral("unwound"));
    }

    void resetToEmpty()
    {
        CaptureListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCaptures(fixture());
        model.setCaptures({});
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!model.isStale(0));
    }
};

QTEST_GUILESS_MAIN(TestCaptureListModel)
#include "tst_capture_list_model.moc"
