// SPDX-License-Identifier: Apache-2.0
#include "runtime/hook_ops.h"

#include "runtime/event_sink.h"
#include "runtime/fault_injection.h"
#include "runtime/hook_table.h"
#include "runtime/observer.h"
#include "runtime/runtime_core.h"
#include "runtime/step_points.h"
#include "runtime/task_context.h"

#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/operator.h>

namespace kforge::runtime {
namespace {

// The inactive case in one branch of inline loads: nothing bound, nobody recording, stepping or observing on any
// thread. Every instrumented module pays it twice per forward (bench_forward --instructions).
bool anythingToDo()
{
    return Hooks::anyBound() || events::recording() || stepping::gLive.load(std::memory_order_relaxed) ||
           anyObserving();
}

// On a thread outside an engine forward of its own: it may run a task forked from one, or a forward's continuation
// after a wait, which carries the forward's stacks and observers (R12).
void followItsTask(ThreadState& thread, bool bound)
{
    if ((bound || anyObserving()) && thread.guardDepth.load(std::memory_order_relaxed) == 0)
        followTask(thread);
}

// The module object an op was called on, taken off the stack: it sits below the `passed` values the op returns as
// they came (the forward's inputs or outputs, graph_instrumentation.cpp).
c10::IValue takeSelf(torch::jit::Stack& stack, size_t passed)
{
    const auto slot = stack.end() - std::ptrdiff_t(passed) - 1;
    c10::IValue self = std::move(*slot);
    stack.erase(slot);
    return self;
}

void moduleEnter(torch::jit::Stack& stack, size_t passed)
{
    if (!anythingToDo()) {
        stack.erase(stack.end() - std::ptrdiff_t(passed) - 1);
        return;
    }
    const c10::IValue self = takeSelf(stack, passed);
    if (!self.isObject())
        return;
    ThreadState& thread = ThreadState::current();
    std::shared_ptr<const HookTable> hold;
    const HookTable& table = Hooks::forHook(thread, hold);
    const auto it = table.modules.find(&self.toObjectRef());
    if (it == table.modules.end())
        return;
    const ModuleHooks& hooks = it->second;
    if (const auto hook = faults::gAfterHookSnapshot.load(std::memory_order_relaxed))
        hook(hooks.path);
    followItsTask(thread, !hooks.bindings.empty());
    if (anyObserving())
        for (const auto& observer : observersOnThisThread().observers)
            observer->moduleEnter(hooks.path);
    if (!hooks.bindings.empty()) {
        applyPendingUnwinds(thread);
        if (events::recording())
            events::emit(EventKind::ModuleEnter, hooks.path, nullptr, nullptr, 0);
        size_t done = 0;
        try {
            for (const RuntimeBinding& b : hooks.bindings) {
                b.runtime->preHook(thread, hooks.path, b.entries, b.activation);
                ++done;
            }
        } catch (...) {
            // A later runtime's pre-hook failed: undo the earlier runtimes' pre-hooks of this entry too.
            while (done-- > 0)
                hooks.bindings[done].runtime->postHook(thread, hooks.path, hooks.bindings[done].entries);
            thread.refreshModeKey();
            throw;
        }
        thread.refreshModeKey();
        publishTask(thread);
    }
    stepping::maybePause(PausePoint::Kind::ModuleEnter, hooks.path, nullptr);
}

void moduleExit(torch::jit::Stack& stack, size_t passed)
{
    if (!anythingToDo()) {
        stack.erase(stack.end() - std::ptrdiff_t(passed) - 1);
        return;
    }
    const c10::IValue self = takeSelf(stack, passed);
    if ((!Hooks::anyBound() && !events::recording() && !anyObserving()) || !self.isObject())
        return;
    ThreadState& thread = ThreadState::current();
    std::shared_ptr<const HookTable> hold;
    const HookTable& table = Hooks::forHook(thread, hold);
    const auto it = table.modules.find(&self.toObjectRef());
    if (it == table.modules.end())
        return;
    const ModuleHooks& hooks = it->second;
    followItsTask(thread, !hooks.bindings.empty());
    if (!hooks.bindings.empty()) {
        applyPendingUnwinds(thread);
        for (auto b = hooks.bindings.rbegin(); b != hooks.bindings.rend(); ++b)
            b->runtime->postHook(thread, hooks.path, b->entries);
        thread.refreshModeKey();
        publishTask(thread);
        if (events::recording())
            events::emit(EventKind::ModuleExit, hooks.path, nullptr, nullptr, 0);
    }
    if (anyObserving())
        for (const auto& observer : observersOnThisThread().observers)
            observer->moduleExit(hooks.path);
}

// The operation of one hook op node: it knows how many values the node passes through (none when called by hand).
template <void (*Hook)(torch::jit::Stack&, size_t)> torch::jit::Operation hookOperation(const torch::jit::Node* node)
{
    const size_t passed = node ? node->inputs().size() - 1 : 0;
    return [passed](torch::jit::Stack& stack) { Hook(stack, passed); };
}

// Registered as TorchScript operators with a direct Operation, not through the dispatcher: the interpreter
// calls them without boxing or a RecordFunction check, which keeps an inactive hook near free (bench_forward).
// CONSERVATIVE alias analysis keeps them through dead-code elimination and inlining, and makes the values they pass
// through (`...`) new values that optimisations cannot see through.
const torch::jit::RegisterOperators kHookOps({
    torch::jit::Operator("kforge::module_enter(Any self, ...) -> ...", &hookOperation<moduleEnter>,
                         c10::AliasAnalysisKind::CONSERVATIVE),
    torch::jit::Operator("kforge::module_exit(Any self, ...) -> ...", &hookOperation<moduleExit>,
                         c10::AliasAnalysisKind::CONSERVATIVE),
});

} // namespace

bool hooksIdle() { return !anythingToDo(); }

c10::Symbol moduleEnterSymbol() { return c10::Symbol::fromQualString("kforge::module_enter"); }
c10::Symbol moduleExitSymbol() { return c10::Symbol::fromQualString("kforge::module_exit"); }

void callModuleEnter(const c10::IValue& self)
{
    torch::jit::Stack stack{self};
    moduleEnter(stack, 0);
}

void callModuleExit(const c10::IValue& self)
{
    torch::jit::Stack stack{self};
    moduleExit(stack, 0);
}

} // namespace kforge::runtime
