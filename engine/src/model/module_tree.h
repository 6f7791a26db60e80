// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/module_info.h>

#include <torch/script.h>

#include <vector>

namespace kforge {

// The module tree in named_modules() order with parameters and the per-module function inventory.
std::vector<ModuleInfo> buildModuleTree(const torch::jit::Module& root);
std::string readableTypeName(const std::string& qualifiedName);
// Counts the replaceable functions a graph calls directly (its nested blocks included); `self`, the module whose
// forward the graph is, tells what a traced _convolution is (its weight's rank).
std::map<std::string, int> functionInventory(const torch::jit::Graph& graph, const torch::jit::Module* self = nullptr);
// No submodules, no parameters, weights baked into the graph as constants: torch.jit.freeze's output.
bool looksFrozen(const torch::jit::Module& root);

} // namespace kforge
