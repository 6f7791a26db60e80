// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shell completion from the command definitions themselves: `kforge --bash-completion` prints a bash script that
// completes commands, subcommands, options and their choices, and file names for options that take a file.
#include <CLI/CLI.hpp>

#include <string>

namespace kforge::cli {

std::string bashCompletionScript(const CLI::App& app);

} // namespace kforge::cli
