// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shell completion from the command definitions themselves: `kforge --bash-completion` prints a bash script that
// completes commands, subcommands, options and their choices, and file names for options that take a file; and
// `kforge --help-tree`, every command's help at once, for the man page.
#include <CLI/CLI.hpp>

#include <string>

namespace kforge::cli {

std::string bashCompletionScript(const CLI::App& app);

// Every command's --help in one text, each after a line "@@@ NAME [COMMAND...]" (depth first, in the order the
// helps list their subcommands; hidden ones left out): what packaging/gen-manpage turns into the man page's
// COMMANDS section with one process instead of one per command (each loads LibTorch, about a second).
std::string helpTree(const CLI::App& app, const std::string& name);

} // namespace kforge::cli
