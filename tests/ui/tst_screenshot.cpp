// SPDX-License-Identifier: Apache-2.0
// Runs the real kforge-studio executable the way a user or CI script would.
#include "build_path.h"
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

namespace {

constexpr int kRunTimeoutMs = 120'000;
const QString kStudio = QString::fromUtf8(KFORGE_STUDIO_PATH);
const QString kCli = QString::fromUtf8(KFORGE_CLI_PATH);

struct Run {
    int exitCode = -1;
    QString errors;
};

// Settings go to a scratch folder: the app must not change the user's, and the test checks it does not.
QProcessEnvironment scratchEnvironment(const QTemporaryDir& dir)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
    return env;
}

Run runStudio(const QStringList& arguments, const QProcessEnvironment& env)
{
    QProcess process;
    process.setProcessEnvironment(env);
    process.start(kStudio, arguments);
    Run run;
    if (!process.waitForFinished(kRunTimeoutMs)) {
        process.kill();
        process.waitForFinished();
        run.errors = QStringLiteral("timed out or failed to start: %1").arg(process.errorString());
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.errors = QString::fromLocal8Bit(process.readAllStandardError());
    return run;
}

// A picture of a view, not a blank canvas: more than a handful of distinct colours.
int distinctColours(const QImage& image)
{
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3)
            colours.insert(image.pixel(x, y));
    return int(colours.size());
}

} // namespace

class TestScreenshot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(QFileInfo(kStudio).isExecutable(), qPrintable(kStudio)); }

    void screenshotOfBuiltin_data()
    {
        QTest::addColumn<bool>("withoutDisplay");
        QTest::newRow("offscreen platform") << false;
        // No DISPLAY, WAYLAND_DISPLAY nor QT_QPA_PLATFORM: the app must pick offscreen by itself.
        QTest::newRow("no display") << true;
    }

    void screenshotOfBuiltin()
    {
        QFETCH(bool, withoutDisplay);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QProcessEnvironment env = scratchEnvironment(dir);
        if (withoutDisplay) {
            env.remove(QStringLiteral("DISPLAY"));
            env.remove(QStringLiteral("WAYLAND_DISPLAY"));
            env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        }
        const QString png = dir.filePath(QStringLiteral("shot.png"));
        const Run run = runStudio({QStringLiteral("builtin:tiny-gpt"), QStringLiteral("--screenshot"), png}, env);
        QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.errors)));

        const QImage image(png);
        QVERIFY2(!image.isNull(), qPrintable(png));
        QVERIFY2(image.width() > 100 && image.height() > 100,
                 qPrintable(QStringLiteral("%1x%2").arg(image.width()).arg(image.height())));
        const QString settings = dir.filePath(QStringLiteral("config/KernelForge/KForge Studio.conf"));
        QVERIFY2(!QFileInfo::exists(settings), "a screenshot run must not write settings");
    }

    void screenshotOfView_data()
    {
        QTest::addColumn<QString>("view");
        QTest::addColumn<QStringList>("extra");
        for (const char* view : {"tree", "stacks", "plan", "events"})
            QTest::newRow(view) << QString::fromLatin1(view) << QStringList();
        QTest::newRow("events after a run") << QStringLiteral("events") << QStringList{"--run"};
        QTest::newRow("tree after a run") << QStringLiteral("tree") << QStringList{"--run"};
        // The filled kernel table, chart and timeline of a CPU baseline profile.
        for (const char* view : {"profile", "chart", "timeline", "flame", "tree-time"})
            QTest::newRow(qPrintable(QStringLiteral("%1 after --profile").arg(QLatin1String(view))))
                << QString::fromLatin1(view) << QStringList{"--profile"};
        // The picture of the first pause; the app then aborts the paused forward and exits cleanly.
        QTest::newRow("stacks at a breakpoint")
            << QStringLiteral("stacks") << QStringList{"--break", "blocks.0.mlp", "--run"};
    }

    void screenshotOfView()
    {
        QFETCH(QString, view);
        QFETCH(QStringList, extra);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString png = dir.filePath(QStringLiteral("%1.png").arg(view));
        QStringList arguments{QStringLiteral("builtin:tiny-gpt"), QStringLiteral("--screenshot"), png,
                              QStringLiteral("--view"), view};
        arguments << extra;
        const Run result = runStudio(arguments, scratchEnvironment(dir));
        QVERIFY2(result.exitCode == 0,
                 qPrintable(QStringLiteral("exit %1: %2").arg(result.exitCode).arg(result.errors)));
        const QImage image(png);
        QVERIFY2(!image.isNull(), qPrintable(png));
        QVERIFY2(image.width() > 300 && image.height() > 200,
                 qPrintable(QStringLiteral("%1x%2").arg(image.width()).arg(image.height())));
        QVERIFY2(distinctColours(image) > 8, qPrintable(QStringLiteral("%1 colours").arg(distinctColours(image))));
    }

    // A result saved elsewhere (here by the CLI, as on a GPU server) opens without its model.
    void screenshotOfSavedProfileWithoutModel_data()
    {
        QTest::addColumn<QStringList>("how");
        QTest::newRow("positional") << QStringList();
        QTest::newRow("--profile-file") << QStringList{QStringLiteral("--profile-file")};
    }

    void screenshotOfSavedProfileWithoutModel()
    {
        QFETCH(QStringList, how);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString saved = dir.filePath(QStringLiteral("tiny.kfprof"));
        QProcess cli;
        cli.start(kCli, {QStringLiteral("compare"), QStringLiteral("builtin:tiny-gpt"), QStringLiteral("--provide"),
                         QStringLiteral("blocks.0.mlp:gelu:AtenGeluProvider"), QStringLiteral("--warmup"),
                         QStringLiteral("1"), QStringLiteral("--iterations"), QStringLiteral("2"),
                         QStringLiteral("--quiet"), QStringLiteral("--save"), saved});
        QVERIFY(cli.waitForFinished(kRunTimeoutMs));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());

        const QString png = dir.filePath(QStringLiteral("comparison.png"));
        const Run run = runStudio(how + QStringList{saved, QStringLiteral("--screenshot"), png,
                                                    QStringLiteral("--view"), QStringLiteral("comparison")},
                                  scratchEnvironment(dir));
        QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.errors)));
        const QImage image(png);
        QVERIFY2(!image.isNull(), qPrintable(png));
        QVERIFY2(distinctColours(image) > 8, qPrintable(QStringLiteral("%1 colours").arg(distinctColours(image))));

        // The differential flame graph of the same pair: the plan's frames coloured by speedup.
        const QString diff = dir.filePath(QStringLiteral("diff-flame.png"));
        const Run flame = runStudio(how + QStringList{saved, QStringLiteral("--screenshot"), diff,
                                                      QStringLiteral("--view"), QStringLiteral("diff-flame")},
                                    scratchEnvironment(dir));
        QVERIFY2(flame.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(flame.exitCode).arg(flame.errors)));
        QVERIFY2(distinctColours(QImage(diff)) > 8, qPrintable(diff));
    }

    void planFileGivenAsTheFileOpensInThePlanEditor()
    {
        // As a file manager opens a .kfplan.json (the package's MimeType): the plan alone, no model.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString plan = dir.filePath(QStringLiteral("gelu.kfplan.json"));
        QProcess cli;
        cli.start(kCli, {QStringLiteral("plan"), QStringLiteral("new"), plan, QStringLiteral("--provide"),
                         QStringLiteral("blocks.0.mlp:gelu:AtenGeluProvider")});
        QVERIFY(cli.waitForFinished(kRunTimeoutMs));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        const QString png = dir.filePath(QStringLiteral("plan.png"));
        const Run run =
            runStudio({plan, QStringLiteral("--screenshot"), png, QStringLiteral("--view"), QStringLiteral("plan")},
                      scratchEnvironment(dir));
        QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.errors)));
        QVERIFY(!QImage(png).isNull());
        const Run broken = runStudio({dir.filePath(QStringLiteral("missing.kfplan.json")),
                                      QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("no.png"))},
                                     scratchEnvironment(dir));
        QCOMPARE(broken.exitCode, 1);
        QVERIFY2(broken.errors.contains(QStringLiteral("missing.kfplan.json")), qPrintable(broken.errors));
    }

    void screenshotOfUnknownViewFails()
    {
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("shot.png"));
        const Run run = runStudio({QStringLiteral("builtin:tiny-gpt"), QStringLiteral("--screenshot"), png,
                                   QStringLiteral("--view"), QStringLiteral("flamegraph")},
                                  scratchEnvironment(dir));
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.errors.contains(QStringLiteral("flamegraph")), qPrintable(run.errors));
        QVERIFY(!QFileInfo::exists(png));
    }

    void screenshotOfMissingModelFails()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString png = dir.filePath(QStringLiteral("shot.png"));
        const QString model = dir.filePath(QStringLiteral("no-such-model.pt"));
        const Run run = runStudio({model, QStringLiteral("--screenshot"), png}, scratchEnvironment(dir));
        QVERIFY2(run.exitCode > 0, qPrintable(QStringLiteral("exit %1").arg(run.exitCode)));
        QVERIFY2(run.errors.contains(QStringLiteral("no-such-model.pt")), qPrintable(run.errors));
        QVERIFY(!QFileInfo::exists(png));
    }
};

QTEST_GUILESS_MAIN(TestScreenshot)
#include "tst_screenshot.moc"
