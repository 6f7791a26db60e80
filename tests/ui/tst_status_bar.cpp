// SPDX-License-Identifier: Apache-2.0
// The status bar's device, runtime and leftover fields: filled from the start and following a forward that
// leaves a patch behind (keep-leftovers) and its Unwind.
#include "build_path.h"
#include "application/application_identity.h"
#include "main_window.h"
#include "test_window.h"
#include "controllers/run_controller.h"
#include "application/system_info.h"
#include "application/status_reporter.h"

#include <QAction>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTest>

#include <memory>

using kforge::ui::MainWindow;

namespace {

constexpr int kTimeoutMs = 60'000;
const QString kThrowingMlp = QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/throwing_mlp.pt");

QString field(const MainWindow& window, const char* name)
{
    const auto* label = window.findChild<QLabel*>(QString::fromLatin1(name));
    return label ? label->text() : QStringLiteral("<missing %1>").arg(QLatin1String(name));
}

} // namespace

class TestStatusBar : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { kforge::ui::test::useTestSettings(); }

    void deviceNames()
    {
        QCOMPARE(kforge::ui::deviceDisplayName(QStringLiteral("cpu")), QStringLiteral("CPU"));
        const auto& devices = kforge::ui::cachedSystemReport().cudaDevices;
        if (devices.empty())
            QCOMPARE(kforge::ui::deviceDisplayName(QStringLiteral("cuda:3")), QStringLiteral("CUDA:3"));
        else
            QCOMPARE(kforge::ui::deviceDisplayName(QStringLiteral("cuda")),
                     QStringLiteral("CUDA %1").arg(QString::fromStdString(devices.front())));
    }

    // A finished job's line wider than the bar ends in "…" where it is cut (QStatusBar clipped it mid-word: "(an"),
    // is whole in the bar's tooltip and in message(), and is fitted again when the window grows.
    void longMessagesAreCutVisiblyAndKeptWhole()
    {
        MainWindow window;
        window.setModalErrors(false);
        window.setPersistent(false);
        window.resize(640, 400);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* reporter = window.findChild<kforge::ui::StatusReporter*>(QStringLiteral("statusReporter"));
        QVERIFY(reporter);
        const QString message =
            QStringLiteral("Compared, profiled: 1.02 ms → 0.98 ms per iteration (medians): no detectable change "
                           "0.96× (95 % interval 0.91× to 1.02×) — the plan was made for model 'tiny-gpt' (an "
                           "other file than this one): its entries may not apply — 2 calls declined by CpuGelu");
        reporter->show(message);
        QStatusBar* bar = window.statusBar();
        QVERIFY2(bar->currentMessage().endsWith(QStringLiteral("…")), qPrintable(bar->currentMessage()));
        QVERIFY(bar->currentMessage().size() < message.size());
        QVERIFY(message.startsWith(bar->currentMessage().chopped(1)));
        QCOMPARE(bar->toolTip(), message);
        QCOMPARE(reporter->message(), message);

        window.resize(4000, 400); // wide enough: the whole line, no tooltip
        QTRY_COMPARE(bar->currentMessage(), message);
        QVERIFY(bar->toolTip().isEmpty());

        reporter->show(QStringLiteral("Saved"), 50); // a short one, gone after its time
        QCOMPARE(bar->currentMessage(), QStringLiteral("Saved"));
        QTRY_VERIFY(reporter->message().isEmpty());
        QVERIFY(bar->currentMessage().isEmpty());
    }

    void fieldsFilledAndFollowTheRuntime()
    {
        MainWindow window;
        window.setModalErrors(false);
        window.setPersistent(false);
        window.show();
        QVERIFY2(field(window, "deviceStatus").startsWith(QStringLiteral("CPU")),
                 qPrintable(field(window, "deviceStatus")));
        QCOMPARE(field(window, "runtimeStatus"), QStringLiteral("runtime inactive"));
        QCOMPARE(field(window, "leftoverStatus"), QStringLiteral("no leftovers"));

        QSignalSpy loaded(&window, &MainWindow::modelLoaded);
        window.openSource(kThrowingMlp);
        QVERIFY(loaded.wait(kTimeoutMs));
        QVERIFY2(field(window, "deviceStatus").startsWith(QStringLiteral("CPU")),
                 qPrintable(field(window, "deviceStatus"))); // files open on the CPU
        QString error;
        QVERIFY2(window.setInputSpecs({QStringLiteral("float32[2]")}, &error), qPrintable(error));
        window.addPlanEntry(QStringLiteral("act"), QStringLiteral("gelu"), QStringLiteral("AtenGeluProvider"));
        window.actions().keepLeftovers->setChecked(true);

        // The forward throws inside `act`: its gelu patch stays, the runtime stays active.
        QSignalSpy finished(&window, &MainWindow::runFinished);
        QVERIFY(window.runForward());
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(finished.first().at(0).toBool(), false);
        QCOMPARE(field(window, "runtimeStatus"), QStringLiteral("runtime active"));
        QCOMPARE(field(window, "leftoverStatus"), QStringLiteral("1 leftover(s)"));
        QVERIFY(window.findChild<QLabel*>(QStringLiteral("leftoverStatus"))->isVisible());

        window.actions().unwind->trigger();
        QCOMPARE(field(window, "runtimeStatus"), QStringLiteral("runtime inactive"));
        QCOMPARE(field(window, "leftoverStatus"), QStringLiteral("no leftovers"));
    }
};

QTEST_MAIN(TestStatusBar)
#include "tst_status_bar.moc"
