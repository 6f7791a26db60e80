// kforge: the command-line face of the engine. Parsing and wiring only; the work is in the engine.
#include "commands.h"

#include <kforge/error.h>
#include <kforge/plugins.h>
#include <kforge/version.h>

#include <iostream>

namespace {
constexpr int kUsageError = 2;
}

int main(int argc, char** argv)
{
    CLI::App app{"kforge: inspect TorchScript models, run them with kernel providers, profile the effect"};
    app.set_version_flag("--version", std::string("kforge ") + KFORGE_VERSION_STRING);
    app.require_subcommand(1);
    std::vector<std::string> plugins;
    app.add_option("--provider-plugin", plugins, "load a provider plugin (.so) before running the command")
        ->type_name("LIB.so");
    const std::vector<kforge::cli::Command> commands{
        kforge::cli::addModulesCommand(app),   kforge::cli::addDoctorCommand(app),
        kforge::cli::addRunCommand(app),       kforge::cli::addProvidersCommand(app),
        kforge::cli::addOptimizeCommand(app),  kforge::cli::addPlanCommand(app),
        kforge::cli::addProfileCommand(app),   kforge::cli::addCompareCommand(app),
        kforge::cli::addReportCommand(app),    kforge::cli::addCaptureCommand(app),
        kforge::cli::addFunctionsCommand(app), kforge::cli::addBenchCommand(app)};
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // app.exit prints the help, the version or the error; a command line that does not parse exits 2, as getopt
        // tools do (CLI11's own codes are 100 and above).
        return app.exit(e) == 0 ? 0 : kUsageError;
    }
    try {
        // Plugins from KFORGE_PROVIDER_PATH are optional: a broken one is reported, not fatal. One named on
        // the command line is required.
        std::vector<std::string> pluginErrors;
        kforge::loadProviderPluginsFromEnvironment(pluginErrors);
        for (const auto& message : pluginErrors)
            std::cerr << "kforge: warning: " << message << '\n';
        for (const auto& plugin : plugins)
            kforge::loadProviderPlugin(plugin);
        for (const auto& command : commands)
            if (command.app->parsed())
                return command.run();
    } catch (const kforge::Error& e) {
        std::cerr << "kforge: error: " << e.what() << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "kforge: internal error: " << e.what() << '\n';
        return 3;
    }
    return 0;
}
