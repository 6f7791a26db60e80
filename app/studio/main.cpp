// SPDX-License-Identifier: Apache-2.0
// kforge-studio [MODEL | FILE.kfprof | FILE.kfplan.json] [--plan FILE] [--input SPEC]... [--inputs-file FILE]
// [--keep-leftovers] [--break MODULE]... [--run]
// [--profile] [--optimize] [--profile-file FILE.kfprof] [--screenshot FILE.png [--view NAME]]
#include "application_identity.h"
#include "main_window.h"
#include "provider_plugins.h"
#include "run_controller.h"
#include "views/module_tree_view.h"
#include "views/profile_page.h"

#include <kforge/error.h>
#include <kforge/plugins.h>

#include <QAction>
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QImageWriter>
#include <QPixmap>
#include <QStatusBar>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

// The platform plugin is chosen when QApplication is constructed, before QCommandLineParser can run, so
// this looks at argv directly: screenshots, --help and --version must work on a machine without a display.
bool needsNoScreen(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--screenshot" || arg.starts_with("--screenshot=") || arg == "--help" || arg == "-h" ||
            arg == "--help-all" || arg == "--version" || arg == "-v")
            return true;
    }
    return false;
}

bool hasDisplay()
{
    return qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY") ||
           qEnvironmentVariableIsSet("QT_QPA_PLATFORM");
}

void printError(const QString& message) { std::fprintf(stderr, "kforge-studio: %s\n", qPrintable(message)); }

constexpr QSize kShotSize(1200, 760);

// What `--view NAME` grabs: the tree is the central page, the others are docks; a dock is floated at the
// screenshot's size so the view fills the picture.
QPixmap grabView(kforge::ui::MainWindow& window, const QString& view)
{
    if (view.isEmpty())
        return window.grab();
    if (QDockWidget* dock = window.dockNamed(view)) {
        dock->setAttribute(Qt::WA_DontShowOnScreen);
        dock->setFloating(true);
        dock->resize(kShotSize);
        dock->show();
        dock->raise();
        QCoreApplication::processEvents(); // lay the floated dock out at its new size
        return dock->widget()->grab();
    }
    window.showView(view);             // its page or profile tab in front, so that it is laid out
    QCoreApplication::processEvents(); // at the size it has there
    QWidget* widget = window.viewNamed(view);
    return widget ? widget->grab() : window.grab();
}

// Renders the window (or one view) once the model is shown, writes the PNG and quits with the outcome.
void takeScreenshot(kforge::ui::MainWindow& window, const QString& file, const QString& view)
{
    window.moduleView()->expandAndFit(-1);
    const QPixmap pixmap = grabView(window, view);
    QImageWriter writer(file);
    if (!writer.write(pixmap.toImage())) {
        printError(QStringLiteral("cannot write %1: %2").arg(file, writer.errorString()));
        QCoreApplication::exit(2);
        return;
    }
    QCoreApplication::exit(0);
}

// A CPU baseline profile of the model shown (--profile); `ready` follows when it ends, whatever the outcome.
template <typename Ready> void profileThen(kforge::ui::MainWindow& window, Ready ready)
{
    window.profilePage()->setDevice(QStringLiteral("cpu"));
    auto* once = new QObject(&window);
    QObject::connect(&window, &kforge::ui::MainWindow::profileFinished, once,
                     [once, ready](bool ok, const QString& message) {
                         if (!ok)
                             printError(message);
                         once->deleteLater();
                         ready();
                     });
    if (!window.profileBaseline()) { // profileError() has said why
        delete once;
        ready();
    }
}

// Optimize on the CPU (--optimize), after the profile; `ready` follows when it ends, whatever the outcome.
template <typename Ready> void optimizeThen(kforge::ui::MainWindow& window, Ready ready)
{
    window.profilePage()->setDevice(QStringLiteral("cpu"));
    auto* once = new QObject(&window);
    QObject::connect(&window, &kforge::ui::MainWindow::optimizeFinished, once,
                     [once, ready](bool ok, const QString& message) {
                         if (!ok)
                             printError(message);
                         once->deleteLater();
                         ready();
                     });
    if (!window.optimize()) { // profileError() has said why
        delete once;
        ready();
    }
}

} // namespace

int main(int argc, char** argv)
{
    if (needsNoScreen(argc, argv) && !hasDisplay())
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    kforge::ui::applyApplicationIdentity();

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("KernelForge Studio: kernel providers for LibTorch models."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("model"),
                                 QStringLiteral("TorchScript file, torch.export package (.pt2) or builtin:NAME to "
                                                "open, a saved profile (.kfprof) to show, or a plan "
                                                "(.kfplan.json) to edit."),
                                 QStringLiteral("[MODEL | FILE.kfprof | FILE.kfplan.json]"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"),
        QStringLiteral("Render the window offscreen once MODEL is shown, save it to <file> (PNG) and exit."),
        QStringLiteral("file"));
    parser.addOption(screenshotOption);
    const QCommandLineOption viewOption(QStringLiteral("view"),
                                        QStringLiteral("With --screenshot: render only this view: %1.")
                                            .arg(kforge::ui::MainWindow::viewNames().join(QStringLiteral(", "))),
                                        QStringLiteral("name"));
    parser.addOption(viewOption);
    const QCommandLineOption planOption(QStringLiteral("plan"), QStringLiteral("Open this plan file."),
                                        QStringLiteral("file"));
    parser.addOption(planOption);
    const QCommandLineOption inputOption(
        QStringLiteral("input"), QStringLiteral("Forward input, dtype[shape], once per argument (model files)."),
        QStringLiteral("spec"));
    parser.addOption(inputOption);
    const QCommandLineOption inputsFileOption(
        QStringLiteral("inputs-file"),
        QStringLiteral("Forward inputs from a torch.save file (tensor, tuple, list or dict), as kforge run."),
        QStringLiteral("file"));
    parser.addOption(inputsFileOption);
    const QCommandLineOption runOption(QStringLiteral("run"),
                                       QStringLiteral("Run one forward with the plan once MODEL is shown."));
    parser.addOption(runOption);
    const QCommandLineOption keepOption(
        QStringLiteral("keep-leftovers"),
        QStringLiteral("Leave the patches of a failed forward in effect, to inspect them (Run > Keep Leftovers)."));
    parser.addOption(keepOption);
    const QCommandLineOption breakOption(
        QStringLiteral("break"),
        QStringLiteral("Breakpoint on entering this module path (repeatable); with --run and --screenshot, the "
                       "picture shows the first pause."),
        QStringLiteral("module"));
    parser.addOption(breakOption);
    const QCommandLineOption pluginOption(QStringLiteral("provider-plugin"),
                                          QStringLiteral("Load this provider plugin (.so) at start (repeatable); "
                                                         "folders in KFORGE_PROVIDER_PATH are loaded too."),
                                          QStringLiteral("lib.so"));
    parser.addOption(pluginOption);
    const QCommandLineOption profileOption(
        QStringLiteral("profile"),
        QStringLiteral("Profile a CPU baseline once MODEL is shown (after --run, before --screenshot)."));
    parser.addOption(profileOption);
    const QCommandLineOption optimizeOption(
        QStringLiteral("optimize"),
        QStringLiteral("Optimize on the CPU once MODEL is shown (after --profile, before --screenshot); the Optimize "
                       "dock shows the candidates."));
    parser.addOption(optimizeOption);
    const QCommandLineOption profileFileOption(QStringLiteral("profile-file"),
                                               QStringLiteral("Show this saved profile (.kfprof); no model is needed."),
                                               QStringLiteral("file"));
    parser.addOption(profileFileOption);
    parser.process(app);

    // Provider plugins before any plan is read: a plan may name their types. KFORGE_PROVIDER_PATH failures
    // are warnings; a plugin named on the command line must load.
    std::vector<std::string> pluginErrors;
    kforge::loadProviderPluginsFromEnvironment(pluginErrors);
    for (const auto& message : pluginErrors)
        std::fprintf(stderr, "kforge-studio: warning: %s\n", message.c_str());
    for (const QString& plugin : parser.values(pluginOption)) {
        try {
            kforge::loadProviderPlugin(plugin.toStdString());
        } catch (const kforge::Error& e) {
            printError(QString::fromStdString(e.what()));
            return 1;
        }
    }
    // Then the plugins of Preferences › Provider Plugins: a failure there is a warning, shown in the window.
    const QStringList storedPluginErrors = kforge::ui::loadStoredProviderPlugins();
    for (const QString& message : storedPluginErrors)
        std::fprintf(stderr, "kforge-studio: warning: %s\n", qPrintable(message));

    const QString view = parser.value(viewOption);
    if (!view.isEmpty() && !kforge::ui::MainWindow::viewNames().contains(view)) {
        printError(QStringLiteral("unknown view '%1' (expected one of: %2)")
                       .arg(view, kforge::ui::MainWindow::viewNames().join(QStringLiteral(", "))));
        return 2;
    }

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        printError(QStringLiteral("expected at most one MODEL, got %1").arg(positional.size()));
        return 2;
    }
    QString model = positional.value(0);
    QString profileFile = parser.value(profileFileOption);
    if (kforge::ui::MainWindow::isProfileFile(model)) {
        if (!profileFile.isEmpty()) {
            printError(QStringLiteral("expected one profile file, got %1 and %2").arg(model, profileFile));
            return 2;
        }
        profileFile = model;
        model.clear();
    }
    // A plan file (as the file manager passes one, MimeType application/x-kforge-plan) opens in the plan editor.
    QString planFile = parser.value(planOption);
    if (model.endsWith(QStringLiteral(".kfplan.json"), Qt::CaseInsensitive)) {
        if (!planFile.isEmpty()) {
            printError(QStringLiteral("expected one plan file, got %1 and %2").arg(model, planFile));
            return 2;
        }
        planFile = model;
        model.clear();
    }

    kforge::ui::MainWindow window;
    if (!storedPluginErrors.isEmpty())
        window.statusBar()->showMessage(
            QStringLiteral("Provider plugin not loaded: %1").arg(storedPluginErrors.join(QStringLiteral("; "))));
    const bool batch = parser.isSet(screenshotOption);
    if (batch) {
        window.setModalErrors(false);
        window.setPersistent(false);
        window.setUnsavedChanges(kforge::ui::MainWindow::UnsavedChanges::Discard);
    }
    if (parser.isSet(keepOption))
        window.actions().keepLeftovers->setChecked(true);
    for (const QString& path : parser.values(breakOption))
        window.runController()->toggleModuleBreakpoint(path);
    if (!planFile.isEmpty() && !window.openPlan(planFile) && batch) {
        printError(QStringLiteral("cannot open plan %1").arg(planFile));
        return 1;
    }
    // Once the model is shown: its inputs, the saved profile (a new model drops the runs of the previous one),
    // the forward, then the profile; `ready` follows when all that is done.
    const QStringList inputs = parser.values(inputOption);
    const QString inputsFile = parser.value(inputsFileOption);
    const bool runFirst = parser.isSet(runOption);
    const bool profileFirst = parser.isSet(profileOption);
    const bool optimizeFirst = parser.isSet(optimizeOption);
    auto prepare = [&window, inputs, inputsFile, runFirst, profileFirst, optimizeFirst, profileFile,
                    batch](auto whenReady) {
        QString error;
        if ((!inputs.isEmpty() && !window.setInputSpecs(inputs, &error)) ||
            (!inputsFile.isEmpty() && !window.loadInputsFile(inputsFile, &error))) {
            printError(error);
            QCoreApplication::exit(1);
            return;
        }
        if (!profileFile.isEmpty() && !window.openProfile(profileFile) && batch) {
            QCoreApplication::exit(1);
            return;
        }
        auto afterProfile = [&window, optimizeFirst, whenReady] {
            if (optimizeFirst)
                optimizeThen(window, whenReady);
            else
                whenReady();
        };
        auto ready = [&window, profileFirst, afterProfile] {
            if (profileFirst)
                profileThen(window, afterProfile);
            else
                afterProfile();
        };
        if (!runFirst) {
            ready();
            return;
        }
        // Ready at the end of the forward, or at its first pause.
        auto* once = new QObject(&window);
        auto done = [once, ready] {
            if (once->property("done").toBool())
                return;
            once->setProperty("done", true);
            once->deleteLater();
            ready();
        };
        QObject::connect(&window, &kforge::ui::MainWindow::runFinished, once, [done](bool ok, const QString& m) {
            if (!ok)
                printError(m);
            done();
        });
        QObject::connect(window.runController(), &kforge::ui::RunController::pausedChanged, once, [done](bool paused) {
            if (paused)
                done();
        });
        window.runForward();
    };

    if (!batch) {
        window.restoreSettings();
        window.show();
        QObject::connect(
            &window, &kforge::ui::MainWindow::modelLoaded, &app, [prepare] { prepare([] {}); },
            Qt::ConnectionType(Qt::QueuedConnection | Qt::SingleShotConnection));
        if (!model.isEmpty())
            window.openSource(model);
        else if (!profileFile.isEmpty())
            window.openProfile(profileFile);
        return app.exec();
    }

    // Batch run: no dialogs, no changes to the user's settings, a fixed size so screenshots compare.
    const QString file = parser.value(screenshotOption);
    window.setAttribute(Qt::WA_DontShowOnScreen); // a real display must not flash a window
    window.resize(kShotSize);
    window.show();
    QObject::connect(&window, &kforge::ui::MainWindow::loadFailed, &app, [](const QString& message) {
        printError(message);
        QCoreApplication::exit(1);
    });
    QObject::connect(&window, &kforge::ui::MainWindow::profileError, &app, &printError);
    // Queued: let the tree lay itself out before it is grabbed.
    auto shoot = [&window, file, view] {
        QTimer::singleShot(0, &window, [&window, file, view] { takeScreenshot(window, file, view); });
    };
    QObject::connect(
        &window, &kforge::ui::MainWindow::modelLoaded, &app, [prepare, shoot] { prepare(shoot); },
        Qt::ConnectionType(Qt::QueuedConnection | Qt::SingleShotConnection));
    if (!model.isEmpty()) {
        window.openSource(model);
    } else {
        if (!profileFile.isEmpty() && !window.openProfile(profileFile))
            return 1;
        QTimer::singleShot(0, &app, shoot);
    }
    return app.exec();
}
