// SPDX-License-Identifier: Apache-2.0
// Dragging a provider from the plan editor's catalog onto a module of the tree: the catalog's mime data, the
// tree's refusal where the module never calls the provider's function, and the drop adding an undoable plan
// entry, through the model and through drag events on the tree view.
#include "application/application_identity.h"
#include "test_window.h"
#include "window_parts.h"
#include "main_window.h"
#include "item_models/module_tree_model.h"
#include "item_models/plan_document.h"
#include "item_models/plan_model.h"
#include "item_models/provider_catalog_model.h"
#include "item_models/provider_mime.h"
#include "views/module_tree_view.h"
#include "views/plan_editor_view.h"
#include "views/provider_catalog_view.h"

#include <kforge/model_session.h>

#include <QAbstractItemModelTester>
#include <QAbstractProxyModel>
#include <QDragEnterEvent>
#include <QDragMoveEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QUndoStack>

#include <memory>

using kforge::ui::MainWindow;
using kforge::ui::ModuleTreeModel;
using kforge::ui::PlanModel;
using kforge::ui::ProviderCatalogModel;
using namespace kforge::ui::test; // part(), and the parts tests use most by name
using namespace kforge::ui::test;

namespace {

constexpr int kTimeoutMs = 60'000;

std::unique_ptr<MainWindow> openTinyGpt() { return openInTestWindow(QStringLiteral("builtin:tiny-gpt"), kTimeoutMs); }

// The catalog's own drag data for provider type `type`.
std::unique_ptr<QMimeData> dragOf(const ProviderCatalogModel& catalog, const QString& type)
{
    for (int row = 0; row < catalog.rowCount(); ++row) {
        const QModelIndex index = catalog.index(row, ProviderCatalogModel::ProviderColumn);
        if (index.data().toString() == type)
            return std::unique_ptr<QMimeData>(catalog.mimeData({index}));
    }
    return nullptr;
}

// A module of the model whose subtree never calls `function`.
QString moduleWithout(const kforge::ModelSession& session, const std::string& function)
{
    for (const kforge::ModuleInfo& module : session.modules()) {
        if (!module.subtreeFunctions.contains(function))
            return QString::fromStdString(module.path);
    }
    return {};
}

// What a real drag over the tree delivers at `index`'s row: enter and move; returns whether the view would
// drop there (the drop indicator shows), and drops when `drop` is set.
bool dragOnto(QAbstractItemView* view, const QModelIndex& index, const QMimeData& mime, bool drop)
{
    view->scrollTo(index);
    const QPoint at = view->visualRect(index).center();
    QWidget* viewport = view->viewport();
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(viewport, &enter);
    QDragMoveEvent move(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(viewport, &move);
    if (!move.isAccepted() || !drop)
        return move.isAccepted();
    QDropEvent dropEvent(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(viewport, &dropEvent);
    return dropEvent.isAccepted();
}

} // namespace

class TestProviderDrop : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { useTestSettings(); }

    void catalogIsADragSource()
    {
        ProviderCatalogModel catalog;
        QAbstractItemModelTester tester(&catalog, QAbstractItemModelTester::FailureReportingMode::QtTest);
        kforge::ProviderCatalogEntry cudaOnly{"FastGelu", "gelu", {"cuda"}, "a CUDA kernel", "{}", ""};
        kforge::ProviderCatalogEntry anywhere{"AtenGeluProvider", "gelu", {"cpu", "cuda"}, "ATen", "{}", ""};
        catalog.setCatalog({cudaOnly, anywhere});
        QCOMPARE(catalog.rowCount(), 2);
        QCOMPARE(catalog.mimeTypes(), QStringList{QStringLiteral("application/x-kforge-provider")});

        const std::unique_ptr<QMimeData> mime = dragOf(catalog, QStringLiteral("AtenGeluProvider"));
        QVERIFY(mime);
        QVERIFY(mime->hasFormat(QStringLiteral("application/x-kforge-provider")));
        const auto provider = kforge::ui::providerFromMimeData(mime.get());
        QVERIFY(provider);
        QCOMPARE(provider->type, QStringLiteral("AtenGeluProvider"));
        QCOMPARE(provider->function, QStringLiteral("gelu"));

        // On the CPU, the CUDA-only provider is greyed out and cannot be dragged; on CUDA it can.
        catalog.setDevice(QStringLiteral("cpu"));
        QVERIFY(!(catalog.flags(catalog.index(0, 0)) & Qt::ItemIsDragEnabled));
        QVERIFY(catalog.flags(catalog.index(1, 0)) & Qt::ItemIsDragEnabled);
        QVERIFY(!dragOf(catalog, QStringLiteral("FastGelu")));
        catalog.setDevice(QStringLiteral("cuda:0"));
        QVERIFY(catalog.flags(catalog.index(0, 0)) & Qt::ItemIsDragEnabled);
        QVERIFY(dragOf(catalog, QStringLiteral("FastGelu")));

        QMimeData notOurs;
        notOurs.setText(QStringLiteral("AtenGeluProvider"));
        QVERIFY(!kforge::ui::providerFromMimeData(&notOurs));
    }

    void dropOnModuleAddsUndoableEntry()
    {
        const auto window = openTinyGpt();
        QVERIFY(window->session());
        const std::unique_ptr<QMimeData> mime =
            dragOf(*part<kforge::ui::PlanEditorView>(*window, "planEditorView")->catalogView()->model(),
                   QStringLiteral("AtenGeluProvider"));
        QVERIFY(mime);

        // Through the model the tree view shows (the filter proxy): a drop on the MLP's row.
        QAbstractItemModel* shown = moduleView(*window)->model();
        ModuleTreeModel* tree = part<kforge::ui::ModuleTreeModel>(*window, "moduleModel");
        const QModelIndex mlp = tree->indexOfPath(QStringLiteral("blocks.0.mlp"));
        const auto toShown = [&](const QModelIndex& source) {
            return static_cast<QAbstractProxyModel*>(shown)->mapFromSource(source);
        };
        QVERIFY(shown->canDropMimeData(mime.get(), Qt::CopyAction, -1, -1, toShown(mlp)));
        QVERIFY(!shown->canDropMimeData(mime.get(), Qt::CopyAction, 0, 0, toShown(mlp))); // between rows
        QVERIFY(shown->dropMimeData(mime.get(), Qt::CopyAction, -1, -1, toShown(mlp)));

        const PlanModel* plan = planDocument(*window)->model();
        QCOMPARE(plan->entryCount(), 1);
        QCOMPARE(plan->entry(0).scope, std::string("blocks.0.mlp"));
        QCOMPARE(plan->entry(0).function, std::string("gelu"));
        QCOMPARE(plan->entry(0).providerType(), std::string("AtenGeluProvider"));
        QCOMPARE(tree->hookState(QStringLiteral("blocks.0.mlp")), ModuleTreeModel::Hooked);

        planDocument(*window)->undoStack()->undo();
        QCOMPARE(plan->entryCount(), 0);
        planDocument(*window)->undoStack()->redo();
        QCOMPARE(plan->entryCount(), 1);
    }

    void refusedWhereTheFunctionIsNeverCalled()
    {
        const auto window = openTinyGpt();
        QVERIFY(window->session());
        const QString without = moduleWithout(*window->session(), "gelu");
        QVERIFY2(!without.isEmpty(), "tiny-gpt has a module without gelu (the embedding)");
        const std::unique_ptr<QMimeData> mime =
            dragOf(*part<kforge::ui::PlanEditorView>(*window, "planEditorView")->catalogView()->model(),
                   QStringLiteral("AtenGeluProvider"));
        ModuleTreeModel* tree = part<kforge::ui::ModuleTreeModel>(*window, "moduleModel");
        QVERIFY(!tree->acceptsProvider(without, QStringLiteral("gelu")));
        QVERIFY(!tree->canDropMimeData(mime.get(), Qt::CopyAction, -1, -1, tree->indexOfPath(without)));
        QVERIFY(!tree->dropMimeData(mime.get(), Qt::CopyAction, -1, -1, tree->indexOfPath(without)));
        QCOMPARE(planDocument(*window)->model()->entryCount(), 0);
        QVERIFY(tree->acceptsProvider(QString(), QStringLiteral("gelu"))); // the root calls everything
    }

    void dragEventsOnTheTreeView()
    {
        const auto window = openTinyGpt();
        QVERIFY(window->session());
        kforge::ui::ModuleTreeView* view = moduleView(*window);
        view->expandAll();
        const std::unique_ptr<QMimeData> mime =
            dragOf(*part<kforge::ui::PlanEditorView>(*window, "planEditorView")->catalogView()->model(),
                   QStringLiteral("AtenGeluProvider"));
        auto* proxy = static_cast<QAbstractProxyModel*>(view->model());
        ModuleTreeModel* tree = part<kforge::ui::ModuleTreeModel>(*window, "moduleModel");
        const QString without = moduleWithout(*window->session(), "gelu");

        // No drop indicator over a module that never calls gelu; accepted over the MLP.
        QVERIFY(!dragOnto(view, proxy->mapFromSource(tree->indexOfPath(without)), *mime, false));
        QVERIFY(dragOnto(view, proxy->mapFromSource(tree->indexOfPath(QStringLiteral("blocks.1.mlp"))), *mime, true));
        const PlanModel* plan = planDocument(*window)->model();
        QCOMPARE(plan->entryCount(), 1);
        QCOMPARE(plan->entry(0).scope, std::string("blocks.1.mlp"));
        planDocument(*window)->undoStack()->undo();
        QCOMPARE(plan->entryCount(), 0);
    }
};

QTEST_MAIN(TestProviderDrop)
#include "tst_provider_drop.moc"
