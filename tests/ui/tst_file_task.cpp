// SPDX-License-Identifier: Apache-2.0
// FileTask: file work off the UI thread. Quick work shows no dialog; slow work shows a progress dialog whose Cancel
// stops the wait; a cancelled write through CancellableOutput leaves the target file as it was, with no leftovers.
#include "controllers/file_task.h"

#include <kforge/atomic_file.h>
#include <kforge/error.h>

#include <QDir>
#include <QFile>
#include <QProgressDialog>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QWidget>

#include <chrono>
#include <thread>

using kforge::ui::CancellableOutput;
using kforge::ui::FileTask;

namespace {

// Presses Cancel on the window's progress dialog once it is shown; counts the dialogs it saw.
void cancelTheDialogOf(QWidget* window, int* dialogsSeen)
{
    auto* poll = new QTimer(window);
    QObject::connect(poll, &QTimer::timeout, window, [window, poll, dialogsSeen] {
        if (auto* dialog = window->findChild<QProgressDialog*>(); dialog && dialog->isVisible()) {
            ++*dialogsSeen;
            if (auto* button = dialog->findChild<QPushButton*>()) // the user's click on Cancel
                button->click();
            poll->deleteLater();
        }
    });
    poll->start(50);
}

} // namespace

class TestFileTask : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void quickWorkReturnsItsResultWithoutADialog()
    {
        QWidget window;
        QString error;
        const auto result = FileTask::run<int>(
            &window, QStringLiteral("quick"), [](const std::atomic<bool>&) { return 42; }, &error);
        QCOMPARE(result.value_or(0), 42);
        QVERIFY(!window.findChild<QProgressDialog*>());
        const auto failed = FileTask::run<int>(
            &window, QStringLiteral("failing"),
            [](const std::atomic<bool>&) -> int { throw kforge::Error("/x.kfprof", "not found"); }, &error);
        QVERIFY(!failed);
        QVERIFY2(error.contains(QStringLiteral("/x.kfprof")), qPrintable(error));
    }

    void slowWorkShowsADialogWhoseCancelStopsIt()
    {
        QWidget window;
        window.show();
        int dialogs = 0;
        cancelTheDialogOf(&window, &dialogs);
        QString error;
        const auto start = std::chrono::steady_clock::now();
        const auto result = FileTask::run<int>(
            &window, QStringLiteral("slow"),
            [](const std::atomic<bool>& cancelled) {
                while (!cancelled) // would run for ever
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                return 1;
            },
            &error);
        QVERIFY(!result);
        QCOMPARE(error, QStringLiteral("cancelled"));
        QCOMPARE(dialogs, 1);
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
    }

    void aCancelledWriteLeavesTheTargetAsItWas()
    {
        QTemporaryDir dir;
        const QString target = dir.filePath(QStringLiteral("run.kfprof"));
        {
            QFile old(target);
            QVERIFY(old.open(QIODevice::WriteOnly));
            old.write("old contents");
        }
        QWidget window;
        window.show();
        int dialogs = 0;
        cancelTheDialogOf(&window, &dialogs);
        QString error;
        const auto written = FileTask::run<bool>(
            &window, QStringLiteral("writing"),
            [file = target.toStdString()](const std::atomic<bool>& cancelled) {
                kforge::writeFileStreaming(file, [&](std::ostream& out) {
                    CancellableOutput stoppable(out, cancelled);
                    for (;;) { // an endless document: only the cancel ends it
                        stoppable << std::string(4096, 'x');
                        std::this_thread::sleep_for(std::chrono::milliseconds(2));
                    }
                });
                return true;
            },
            &error);
        QVERIFY(!written);
        QCOMPARE(error, QStringLiteral("cancelled"));
        // The worker ends at its next write and removes its temporary file.
        QTRY_COMPARE_WITH_TIMEOUT(QDir(dir.path()).entryList(QDir::Files).size(), 1, 10'000);
        QFile kept(target);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("old contents"));
    }
};

QTEST_MAIN(TestFileTask)
#include "tst_file_task.moc"
