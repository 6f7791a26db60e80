// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <torch/script.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

// Inserts kforge::module_enter(self, inputs...) first and kforge::module_exit(self, outputs...) last into each forward
// graph (isForwardMethod) of each module class of the tree, once per class (R2); the values pass through them (R1,
// hook_ops.h). Must run before the first forward: executors cache optimized graphs. Last, it pins every call on
// constants in the classes' methods and the functions they call (constant_call_pins.h). Returns the number of classes
// instrumented.
//
// Each instrumented class also gets kPlainForward, the forward as it was, whose calls of module methods call their
// plain copies (kPlainForward for forward, kPlainMethodPrefix + name for the other methods a forward calls, such as
// torchvision's _forward_impl): what a session runs unless every module's hooks are needed (runtime::hookDemand()), so
// that an instrumented model costs nothing per module until a scope below the root, a recorder or a listener needs
// the hooks.
int instrumentModuleClasses(const torch::jit::Module& root);

// Whether method `name` is one of a module's forwards: "forward", or "forward1", "forward2", ...: torch.jit.trace
// saves the second and later calls of a submodule as such methods (a traced GELU called three times has forward,
// forward1 and forward2), each a run of that module, in its scope, like its forward.
inline bool isForwardMethod(std::string_view name)
{
    constexpr std::string_view forward = "forward";
    if (name.substr(0, forward.size()) != forward)
        return false;
    const std::string_view number = name.substr(forward.size());
    return std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
           (number.empty() || number.front() != '0');
}

// The forward methods of a module class (isForwardMethod), "forward" first.
std::vector<std::string> forwardMethodsOf(const c10::ClassType& type);

// The root's forward and its plain copy with every call of a module method or TorchScript function inlined,
// transitively, then prepared as LibTorch prepares every graph it runs (peephole, immutable constants, pooling) and
// rid of repeated pure expressions and tuples made to be unpacked, as its optimizer does, as methods kInlinedForward
// and kInlinedPlainForward: the same catalog calls in the same order, hook ops included (an inlined module_enter still
// takes its module as `self`), without an interpreter frame per call or the no-ops and repeats LibTorch removes. What
// the direct executor runs: without the inlining a model of many small modules ran 5-20% slower than its deployment on
// the CPU, without the preparation a scripted model of many F.* calls 8% and a traced decoder's size arithmetic 9%
// (bench/bench_executor_gap.py). Returns false, adding nothing, when the root has no instrumented forward.
bool addInlinedForwards(const torch::jit::Module& root);
inline constexpr const char* kInlinedForward = "_kforge_inlined_forward";
inline constexpr const char* kInlinedPlainForward = "_kforge_inlined_plain_forward";

inline constexpr const char* kPlainMethodPrefix = "_kforge_plain_";
inline constexpr const char* kPlainForward = "_kforge_plain_forward";

// Whether any code of the model forks async tasks (prim::fork: torch.jit.fork). Only such models need their
// forwards' stacks published for tasks to inherit (runtime/task_context.h).
bool forksTasks(const torch::jit::Module& root);

} // namespace kforge
