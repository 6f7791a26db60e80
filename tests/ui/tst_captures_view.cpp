// SPDX-License-Identifier: Apache-2.0
// The graph-captures view in the main window: listed among the views, disabled with the reason where no CUDA
// device is visible, a capture refused while a forward runs, and (on a GPU machine) a real capture of
// tiny-gpt with its recorded providers going stale after a plan edit.
#include "application/application_identity.h"
#include "test_window.h"
#include "window_parts.h"
#include "main_window.h"
#include "item_models/capture_list_model.h"
#include "controllers/run_controller.h"
#include "application/system_info.h"
#include "views/captures_view.h"

#include <kforge/model_session.h>

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTreeView>

#include <memory>

using kforge::ui::CaptureListModel;
using kforge::ui::MainWindow;
using namespace kforge::ui::test; // part(), and the parts tests use most by name
using namespace kforge::ui::test;

namespace {

constexpr int kTimeoutMs = 120'000;
const QString kTinyGpt = QStringLiteral("builtin:tiny-gpt");

std::unique_ptr<MainWindow> openWindow(const QString& source) { return openInTestWindow(source, kTimeoutMs); }

} // namespace

class TestCapturesView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { useTestSettings(); }

    void listedAmongTheViews()
    {
        QVERIFY(MainWindow::viewNames().contains(QStringLiteral("captures")));
        MainWindow window;
        QCOMPARE(window.viewNamed(QStringLiteral("captures")),
                 static_cast<QWidget*>(part<kforge::ui::CapturesView>(window, "capturesView")));
        QDockWidget* dock = window.dockNamed(QStringLiteral("captures"));
        QVERIFY(dock);
        QCOMPARE(dock->widget(), static_cast<QWidget*>(part<kforge::ui::CapturesView>(window, "capturesView")));
        QCOMPARE(part<kforge::ui::CapturesView>(window, "capturesView")->view()->model(),
                 static_cast<QAbstractItemModel*>(part<kforge::ui::CaptureListModel>(window, "captureModel")));
        QVERIFY(!window.actions().capture->icon().isNull());
        QVERIFY(!window.actions().preferences->icon().isNull());
    }

    void disabledWithoutCuda()
    {
        if (kforge::ui::cudaDeviceVisible())
            QSKIP("a CUDA device is visible: the no-CUDA explanation does not apply");
        const auto window = openWindow(kTinyGpt);
        QVERIFY(window->session());
        kforge::ui::CapturesView* view = part<kforge::ui::CapturesView>(*window, "capturesView");
        QVERIFY(!view->isCaptureAvailable());
        const QString text = view->explanation();
        QVERIFY2(text.startsWith(QStringLiteral("CUDA graph capture needs a CUDA device; none is visible on this "
                                                "machine (torch reports ")),
                 qPrintable(text));
        QVERIFY2(text.contains(QString::fromStdString(kforge::ui::cachedSystemReport().torchVersion)),
                 qPrintable(text));
        QVERIFY(!view->captureButton()->isEnabled());
        QVERIFY(!view->view()->isEnabled());
        QVERIFY(!window->actions().capture->isEnabled());

        // Asked anyway (the action's shortcut, a script): refused with the same reason, nothing recorded.
        QSignalSpy finished(window.get(), &MainWindow::captureFinished);
        QVERIFY(!window->captureGraph());
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.first().at(0).toBool(), false);
        QVERIFY(finished.first().at(1).toString().contains(text));
        QCOMPARE(part<kforge::ui::CaptureListModel>(*window, "captureModel")->rowCount(), 0);
    }

    void controllerCaptureWithoutCudaFailsCleanly()
    {
        if (kforge::ui::cudaDeviceVisible())
            QSKIP("a CUDA device is visible: the engine's refusal does not apply");
        // The controller runs the engine's capture on its forward thread; the engine's refusal comes back as
        // captureFinished, not as runFinished, and the session stays usable.
        const auto window = openWindow(kTinyGpt);
        kforge::ui::RunController* run = runController(*window);
        QSignalSpy captured(run, &kforge::ui::RunController::captureFinished);
        QSignalSpy ran(run, &kforge::ui::RunController::runFinished);
        QString error;
        QVERIFY2(run->capture(kforge::Plan{}, 0, &error), qPrintable(error));
        QVERIFY(run->isCapturing());
        QVERIFY(captured.wait(kTimeoutMs));
        QCOMPARE(captured.first().at(0).toBool(), false);
        QVERIFY2(captured.first().at(1).toString().contains(QStringLiteral("CUDA")),
                 qPrintable(captured.first().at(1).toString()));
        QCOMPARE(ran.count(), 0);
        QVERIFY(!run->isRunning());
        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        QVERIFY(window->runForward());
        QVERIFY(finished.wait(kTimeoutMs));
        QVERIFY(finished.first().at(0).toBool());
    }

    void captureRefusedWhileAForwardRuns()
    {
        const auto window = openWindow(kTinyGpt);
        kforge::ui::RunController* run = runController(*window);
        run->toggleModuleBreakpoint(QStringLiteral("blocks.0"));
        QVERIFY(window->runForward());
        QTRY_VERIFY_WITH_TIMEOUT(run->isPaused(), kTimeoutMs);
        QString error;
        QVERIFY(!run->capture(kforge::Plan{}, 0, &error));
        QVERIFY2(error.contains(QStringLiteral("already running")), qPrintable(error));
        QVERIFY(!part<kforge::ui::CapturesView>(*window, "capturesView")->captureButton()->isEnabled());
        QVERIFY(!window->actions().capture->isEnabled());
        QVERIFY(!window->captureGraph());
        run->toggleModuleBreakpoint(QStringLiteral("blocks.0"));
        QSignalSpy finished(window.get(), &MainWindow::runFinished);
        window->continueForward();
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(part<kforge::ui::CapturesView>(*window, "capturesView")->captureButton()->isEnabled(),
                 kforge::ui::cudaDeviceVisible());
    }

    void captureOnGpuRecordsProvidersAndGoesStale()
    {
        if (!kforge::ui::cudaDeviceVisible())
            QSKIP("needs a CUDA device; none is visible on this machine");
        const auto window = openWindow(kTinyGpt);
        kforge::ui::CapturesView* view = part<kforge::ui::CapturesView>(*window, "capturesView");
        QVERIFY(view->isCaptureAvailable());
        QVERIFY(view->captureButton()->isEnabled());
        window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));

        QSignalSpy finished(window.get(), &MainWindow::captureFinished);
        QTest::mouseClick(view->captureButton(), Qt::LeftButton);
        QVERIFY(runController(*window)->isCapturing());
        QVERIFY(!view->captureButton()->isEnabled()); // one capture at a time
        QVERIFY(finished.wait(kTimeoutMs));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        CaptureListModel* model = part<kforge::ui::CaptureListModel>(*window, "captureModel");
        QCOMPARE(model->rowCount(), 1);
        QCOMPARE(model->index(0, CaptureListModel::CaptureColumn).data().toString(), QStringLiteral("capture-1"));
        QVERIFY(!model->isStale(0));
        const QModelIndex capture = model->index(0, 0);
        QCOMPARE(model->rowCount(capture), 1);
        QCOMPARE(model->index(0, CaptureListModel::ScopeColumn, capture).data().toString(),
                 QStringLiteral("blocks.0.mlp"));
        QCOMPARE(model->index(0, CaptureListModel::FunctionColumn, capture).data().toString(), QStringLiteral("gelu"));
        QVERIFY(!runController(*window)->runtimeActive()); // deactivated after a clean capture
        QVERIFY2(window->findChild<QLabel*>(QStringLiteral("deviceStatus"))->text().startsWith(QStringLiteral("CUDA")),
                 "the session moved to the CUDA device");

        // A plan edit that changes what would be installed marks the capture stale.
        window->addPlanEntry(QStringLiteral("blocks.1.mlp"), QStringLiteral("gelu"),
                             QStringLiteral("AtenGeluProvider"));
        QVERIFY(model->isStale(0));
        QCOMPARE(model->index(0, CaptureListModel::StateColumn).data().toString(), QStringLiteral("stale"));
    }
};

QTEST_MAIN(TestCapturesView)
#include "tst_captures_view.moc"
