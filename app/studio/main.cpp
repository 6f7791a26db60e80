// SPDX-License-Identifier: Apache-2.0
// kforge-studio [MODEL | FILE.kfprof | FILE.kfplan.json] [--plan FILE] [--input SPEC]... [--inputs-file FILE]
// [--keep-leftovers] [--break MODULE]... [--run]
// [--profile] [--optimize] [--profile-file FILE.kfprof] [--screenshot FILE.png [--view NAME]]
#include "application/application_identity.h"
#include "application/english_plurals.h"
#include "application/provider_plugins.h"
#include "startup_script.h"
#include "controllers/run_controller.h"
#include "main_window.h"
#include "parts_by_name.h"

#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/op_libraries.h>
#include <kforge/plugins.h>

#include <QAction>
#include <QApplication>
#include <QCommandLineParser>
#include <QStatusBar>

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

} // namespace

int main(int argc, char** argv)
{
    if (needsNoScreen(argc, argv) && !hasDisplay())
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    kforge::ui::applyApplicationIdentity();
    kforge::ui::installEnglishPlurals(); // "1 iteration", "3 iterations": not "iteration(s)"

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
    const QCommandLineOption programOption(
        QStringLiteral("program"),
        QStringLiteral("The exported program of a .pt2 package to open, when it holds several (as kforge --program)."),
        QStringLiteral("name"));
    parser.addOption(programOption);
    const QCommandLineOption compiledOption(
        QStringLiteral("compiled"),
        QStringLiteral("Run the AOTInductor compiled code a .pt2 package holds beside its exported program, with that "
                       "program's module tree (as kforge --compiled); no plans apply."));
    parser.addOption(compiledOption);
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
    const QCommandLineOption opsLibraryOption(
        QStringLiteral("ops-library"),
        QStringLiteral("Load a library of custom ops (TORCH_LIBRARY) before any model; repeatable. Also every .so in "
                       "the folders of KFORGE_OPS_PATH."),
        QStringLiteral("lib.so"));
    parser.addOption(opsLibraryOption);
    const QCommandLineOption profileOption(
        QStringLiteral("profile"),
        QStringLiteral("Profile a CPU baseline once MODEL is shown (after --run, before --screenshot)."));
    parser.addOption(profileOption);
    const QCommandLineOption compareOption(
        QStringLiteral("compare"),
        QStringLiteral("Compare the plan with a CPU baseline once MODEL is shown, in alternating rounds (after --run, "
                       "before --screenshot; in place of --profile)."));
    parser.addOption(compareOption);
    const QCommandLineOption optimizeOption(
        QStringLiteral("optimize"),
        QStringLiteral("Optimize on the CPU once MODEL is shown (after --profile, before --screenshot); the Optimize "
                       "dock shows the candidates."));
    parser.addOption(optimizeOption);
    const QCommandLineOption saveProfileOption(
        QStringLiteral("save-profile"),
        QStringLiteral("With --screenshot: save the runs --profile or --compare measured to <file> (.kfprof), as File "
                       "> Save Profile does (kforge report reads it)."),
        QStringLiteral("file"));
    parser.addOption(saveProfileOption);
    const QCommandLineOption saveOptimizedOption(
        QStringLiteral("save-optimized"),
        QStringLiteral("With --optimize and --screenshot: save the plan Optimize made to <file>, with what it measured "
                       "for each entry."),
        QStringLiteral("file"));
    parser.addOption(saveOptimizedOption);
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
    // Op libraries before any model: LibTorch resolves a model's custom ops when it loads the file.
    std::vector<std::string> opLibraryErrors;
    kforge::loadOpLibrariesFromEnvironment(opLibraryErrors);
    for (const auto& message : opLibraryErrors)
        std::fprintf(stderr, "kforge-studio: warning: %s\n", message.c_str());
    for (const QString& library : parser.values(opsLibraryOption)) {
        try {
            kforge::loadOpLibrary(library.toStdString());
        } catch (const kforge::Error& e) {
            printError(QString::fromStdString(e.what()));
            return 1;
        }
    }
    // Then those of Preferences › Op Libraries, a failure there a warning.
    for (const QString& message : kforge::ui::loadStoredOpLibraries())
        std::fprintf(stderr, "kforge-studio: warning: %s\n", qPrintable(message));
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
    // What the model's opening warns of, on the terminal too, as kforge prints it (the window shows it in the status).
    QObject::connect(&window, &kforge::ui::MainWindow::modelLoaded, &app, [&window] {
        if (const kforge::ModelSession* session = window.session())
            for (const std::string& message : session->warnings())
                std::fprintf(stderr, "kforge-studio: warning: %s\n", message.c_str());
    });
    kforge::ui::StartupSteps steps;
    steps.model = model;
    steps.inputs = parser.values(inputOption);
    steps.inputsFile = parser.value(inputsFileOption);
    if (parser.isSet(programOption) || parser.isSet(compiledOption))
        steps.program = kforge::ui::ProgramChoice{parser.value(programOption), parser.isSet(compiledOption)};
    steps.profileFile = profileFile;
    steps.run = parser.isSet(runOption);
    steps.profile = parser.isSet(profileOption);
    steps.compare = parser.isSet(compareOption);
    steps.optimize = parser.isSet(optimizeOption);
    steps.saveProfile = parser.value(saveProfileOption);
    steps.saveOptimized = parser.value(saveOptimizedOption);
    steps.screenshot = parser.value(screenshotOption);
    steps.view = view;
    kforge::ui::StartupScript script(window, steps);
    QObject::connect(&script, &kforge::ui::StartupScript::error, &app, &printError);
    QObject::connect(
        &script, &kforge::ui::StartupScript::finished, &app, [](int code) { QCoreApplication::exit(code); },
        Qt::QueuedConnection); // start() may finish before the event loop runs
    if (parser.isSet(keepOption))
        window.actions().keepLeftovers->setChecked(true);
    for (const QString& path : parser.values(breakOption))
        kforge::ui::part<kforge::ui::RunController>(window, "runController")->toggleModuleBreakpoint(path);
    if (!script.isBatch()) {
        window.restoreSettings();
        window.show();
    }
    if (!planFile.isEmpty() && !window.openPlan(planFile) && script.isBatch()) {
        printError(QStringLiteral("cannot open plan %1").arg(planFile));
        return 1;
    }
    script.start();
    return app.exec();
}
