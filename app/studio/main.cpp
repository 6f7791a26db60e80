// kforge-studio [MODEL] [--screenshot FILE.png]
#include "application_identity.h"
#include "main_window.h"
#include "views/module_tree_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QImageWriter>
#include <QPixmap>
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

// Renders the window once the model is shown, writes the PNG and quits with the outcome.
void takeScreenshot(kforge::ui::MainWindow& window, const QString& file)
{
    window.moduleView()->expandAndFit(-1);
    const QPixmap pixmap = window.grab();
    QImageWriter writer(file);
    if (!writer.write(pixmap.toImage())) {
        printError(QStringLiteral("cannot write %1: %2").arg(file, writer.errorString()));
        QCoreApplication::exit(2);
        return;
    }
    QCoreApplication::exit(0);
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
    parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("TorchScript file or builtin:NAME to open."),
                                 QStringLiteral("[MODEL]"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"),
        QStringLiteral("Render the window offscreen once MODEL is shown, save it to <file> (PNG) and exit."),
        QStringLiteral("file"));
    parser.addOption(screenshotOption);
    parser.process(app);

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        printError(QStringLiteral("expected at most one MODEL, got %1").arg(positional.size()));
        return 2;
    }
    const QString model = positional.value(0);

    kforge::ui::MainWindow window;
    if (!parser.isSet(screenshotOption)) {
        window.restoreSettings();
        window.show();
        if (!model.isEmpty())
            window.openSource(model);
        return app.exec();
    }

    // Batch run: no dialogs, no changes to the user's settings, a fixed size so screenshots compare.
    const QString file = parser.value(screenshotOption);
    window.setModalErrors(false);
    window.setPersistent(false);
    window.setAttribute(Qt::WA_DontShowOnScreen); // a real display must not flash a window
    window.resize(1200, 760);
    window.show();
    QObject::connect(&window, &kforge::ui::MainWindow::loadFailed, &app, [](const QString& message) {
        printError(message);
        QCoreApplication::exit(1);
    });
    // Queued: let the tree lay itself out before it is grabbed.
    QObject::connect(
        &window, &kforge::ui::MainWindow::modelLoaded, &app, [&window, file] { takeScreenshot(window, file); },
        Qt::QueuedConnection);
    if (model.isEmpty())
        QTimer::singleShot(0, &app, [&window, file] { takeScreenshot(window, file); });
    else
        window.openSource(model);
    return app.exec();
}
