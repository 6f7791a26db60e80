// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/module_info.h>

#include <torch/script.h>

#include <vector>

namespace kforge {

// Fills ModuleInfo::hasForward and ModuleInfo::forwardCalled of `modules` (buildModuleTree's order and paths)
// from the static call graph of the root's forward: which module methods `prim::CallMethod` reaches, through
// `prim::GetAttr` chains from `self`. A container the parent iterates (ModuleList, ModuleDict, a Sequential
// indexed instead of called) has its children's forwards called, never its own; one indexed at run time (through a
// module interface) counts as calling each of its children. When a call's receiver cannot be resolved to a module
// path, every module with a forward is taken as called: a warning must never be wrong.
void markForwardCalls(const torch::jit::Module& root, std::vector<ModuleInfo>& modules);

} // namespace kforge
