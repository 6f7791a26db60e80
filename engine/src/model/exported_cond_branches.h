// SPDX-License-Identifier: Apache-2.0
#pragma once
// The modules a .pt2 program calls inside torch.cond's branches. Export records no module stack there: the nodes of a
// branch belong to the module that calls cond, so a branch module's own scope is never entered, and a plan reaches
// its calls through the scope of the module holding the cond.
#include <kforge/module_info.h>

#include "model/exported_package.h"

#include <map>
#include <string>
#include <vector>

namespace kforge {

// Branch module path -> the module holding its cond. A module is known to be a branch's when it (or a module below
// it) holds a weight cond passes to its branches, or when it runs no node of its own below such a module (a ReLU
// holds no weight). `modules`: the program's tree (describeExportedProgram), which says which modules ran a node.
std::map<std::string, std::string> condBranchModules(const ExportedPackage& package,
                                                     const std::vector<ModuleInfo>& modules);

// One line per module holding a cond: which modules run in its branches and which scope plans their calls.
std::vector<std::string> condBranchNotes(const std::map<std::string, std::string>& branches);

// Why a plan entry scoped to a branch module never fires, and its fix.
std::string condBranchScopeMessage(const ModuleInfo& module, const std::string& holder);
std::string condBranchScopeFix(const std::string& holder);

} // namespace kforge
