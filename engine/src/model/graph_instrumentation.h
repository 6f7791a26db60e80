// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <torch/script.h>

namespace kforge {

// Inserts kforge::module_enter(self, inputs...) first and kforge::module_exit(self, outputs...) last into the forward
// graph of each module class of the tree, once per class (R2); the values pass through them (R1, hook_ops.h). Must run
// before the first forward: executors cache optimized graphs. Returns the number of classes instrumented.
//
// Each instrumented class also gets kPlainForward, the forward as it was, whose calls of module methods call their
// plain copies (kPlainForward for forward, kPlainMethodPrefix + name for the other methods a forward calls, such as
// torchvision's _forward_impl): what a session runs unless every module's hooks are needed (runtime::hookDemand()), so
// that an instrumented model costs nothing per module until a scope below the root, a recorder or a listener needs
// the hooks.
int instrumentModuleClasses(const torch::jit::Module& root);

inline constexpr const char* kPlainMethodPrefix = "_kforge_plain_";
inline constexpr const char* kPlainForward = "_kforge_plain_forward";

// Whether any code of the model forks async tasks (prim::fork: torch.jit.fork). Only such models need their
// forwards' stacks published for tasks to inherit (runtime/task_context.h).
bool forksTasks(const torch::jit::Module& root);

} // namespace kforge
