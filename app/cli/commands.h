// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "report.h"

#include <CLI/CLI.hpp>

#include <functional>

namespace kforge::cli {

// Each add* function declares one subcommand and the action main() runs when it was chosen. The action fills the
// Report (both its forms and its exit code) and prints nothing itself; main prints it.
struct Command {
    CLI::App* app;
    std::function<void(Report&)> run;
};
Command addModulesCommand(CLI::App& app);
Command addDoctorCommand(CLI::App& app);
Command addRunCommand(CLI::App& app);
Command addProvidersCommand(CLI::App& app);
Command addGeneratorsCommand(CLI::App& app);
Command addOptimizeCommand(CLI::App& app);
Command addPlanCommand(CLI::App& app);
Command addProfileCommand(CLI::App& app);
Command addCompareCommand(CLI::App& app);
Command addReportCommand(CLI::App& app);
Command addDiffCommand(CLI::App& app);
Command addCaptureCommand(CLI::App& app);
Command addFunctionsCommand(CLI::App& app);
Command addBenchCommand(CLI::App& app);
Command addVerifyCommand(CLI::App& app);

} // namespace kforge::cli
