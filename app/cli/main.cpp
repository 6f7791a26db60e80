// SPDX-License-Identifier: Apache-2.0
// kforge: the command-line face of the engine. Parsing and wiring only; the work is in the engine.
#include "commands.h"
#include "completion.h"
#include "output.h"
#include "report.h"

#include <kforge/error.h>
#include <kforge/op_libraries.h>
#include <kforge/plugins.h>
#include <kforge/version.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <iostream>
#include <string_view>

namespace {

constexpr int kUsageError = 2;

// Whether the command asked for --json: its errors then go to stdout as a JSON object too, so that a script reading
// stdout always gets JSON ({"error": {"message", "where", "why", "exit_code"}}); stderr keeps the one-line message.
bool wantsJson(const CLI::App& app)
{
    for (const CLI::App* command : app.get_subcommands())
        if (const CLI::Option* json = command->get_option_no_throw("--json");
            (json && json->count() > 0) || wantsJson(*command))
            return true;
    return false;
}
bool argumentsAskForJson(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--json")
            return true;
    return false;
}

int jsonError(int exitCode, const std::string& message, const std::string& where = "", const std::string& why = "")
{
    nlohmann::ordered_json error{{"message", message}, {"exit_code", exitCode}};
    if (!where.empty())
        error["where"] = where;
    if (!why.empty())
        error["why"] = why;
    std::cout << nlohmann::ordered_json{{"error", error}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
    return exitCode;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"kforge: inspect TorchScript models, run them with kernel providers, profile the effect"};
    app.set_version_flag("--version", std::string("kforge ") + KFORGE_VERSION_STRING);
    app.require_subcommand(1);
    std::vector<std::string> plugins;
    app.add_option("--provider-plugin", plugins, "load a provider plugin (.so) before running the command")
        ->type_name("LIB.so");
    std::vector<std::string> opLibraries;
    app.add_option("--ops-library", opLibraries,
                   "load a library of custom ops (TORCH_LIBRARY: torchvision's, your own) before the model; also every "
                   ".so in the folders of KFORGE_OPS_PATH")
        ->type_name("LIB.so");
    const std::vector<kforge::cli::Command> commands{
        kforge::cli::addModulesCommand(app),    kforge::cli::addDoctorCommand(app),
        kforge::cli::addRunCommand(app),        kforge::cli::addProvidersCommand(app),
        kforge::cli::addGeneratorsCommand(app), kforge::cli::addOptimizeCommand(app),
        kforge::cli::addPlanCommand(app),       kforge::cli::addProfileCommand(app),
        kforge::cli::addCompareCommand(app),    kforge::cli::addReportCommand(app),
        kforge::cli::addCaptureCommand(app),    kforge::cli::addFunctionsCommand(app),
        kforge::cli::addBenchCommand(app),      kforge::cli::addVerifyCommand(app),
        kforge::cli::addDiffCommand(app)};
    // The global options (--ops-library, --provider-plugin) where users type them too: after the command, as in
    // `kforge modules model.pt --ops-library libtv.so`. An option a command does not know falls through to its parent.
    const std::function<void(CLI::App*)> fallThrough = [&](CLI::App* parent) {
        for (CLI::App* sub : parent->get_subcommands({})) {
            sub->fallthrough();
            fallThrough(sub);
        }
    };
    fallThrough(&app);
    // Before parsing, which requires a command: the completion script for bash, made from the definitions above.
    if (argc == 2 && std::string_view(argv[1]) == "--bash-completion") {
        std::cout << kforge::cli::bashCompletionScript(app);
        return 0;
    }
    if (argc == 2 && std::string_view(argv[1]) == "--help-tree") { // for packaging/gen-manpage
        app.name("kforge");
        std::cout << kforge::cli::helpTree(app, "kforge");
        return 0;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // app.exit prints the help, the version or the error; a command line that does not parse exits 2, as getopt
        // tools do (CLI11's own codes are 100 and above).
        if (app.exit(e) == 0)
            return 0;
        return argumentsAskForJson(argc, argv) ? jsonError(kUsageError, e.what()) : kUsageError;
    }
    // Where the user reads what a command says: diagnostics on stderr as they come, the report on stdout at the end.
    kforge::cli::Report report([](const std::string& line) { std::cerr << line << '\n'; });
    try {
        // Plugins from KFORGE_PROVIDER_PATH are optional: a broken one is reported, not fatal. One named on
        // the command line is required.
        std::vector<std::string> pluginErrors;
        kforge::loadProviderPluginsFromEnvironment(pluginErrors);
        for (const auto& message : pluginErrors)
            report.warn(message);
        for (const auto& plugin : plugins)
            kforge::loadProviderPlugin(plugin);
        // The same for op libraries: a model calling their ops loads only after them.
        std::vector<std::string> opLibraryErrors;
        kforge::loadOpLibrariesFromEnvironment(opLibraryErrors);
        for (const auto& message : opLibraryErrors)
            report.warn(message);
        for (const auto& library : opLibraries)
            kforge::loadOpLibrary(library);
        for (const auto& command : commands)
            if (command.app->parsed()) {
                command.run(report);
                std::cout << kforge::cli::renderReport(report, wantsJson(app)) << std::flush;
                return report.exitCode;
            }
    } catch (const kforge::Error& e) {
        std::cerr << "kforge: error: " << e.what() << '\n';
        return wantsJson(app) ? jsonError(1, e.what(), e.where(), e.why()) : 1;
    } catch (const std::exception& e) {
        std::cerr << "kforge: internal error: " << e.what() << '\n';
        return wantsJson(app) ? jsonError(3, std::string("internal error: ") + e.what()) : 3;
    }
    return 0;
}
