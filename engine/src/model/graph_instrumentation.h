// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <torch/script.h>

namespace kforge {

// Inserts kforge::module_enter(self) first and kforge::module_exit(self) last into the forward graph of
// each module class of the tree, once per class (R2). Must run before the first forward: executors cache
// optimized graphs. Returns the number of classes instrumented.
int instrumentModuleClasses(const torch::jit::Module& root);

// Whether any code of the model forks async tasks (prim::fork: torch.jit.fork). Only such models need their
// forwards' stacks published for tasks to inherit (runtime/task_context.h).
bool forksTasks(const torch::jit::Module& root);

} // namespace kforge
