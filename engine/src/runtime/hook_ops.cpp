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

// Whether module hooks matter beyond the bound modules: someone records events, steps or observes modules.
bool watched() { return events::recording() || stepping::gLive.load(std::memory_order_relaxed) || anyObserving(); }

// On a thread outside an engine forward of its own: it may run a task forked from one, or a forward's continuation
// after a wait, which carries the forward's stacks and observers (R12).
void followItsTask(ThreadState& thread, bool bound)
{
    if ((bound || anyObserving()) && thread.guardDepth.load(std::memory_order_relaxed) == 0)
        followTask(thread);
}

// The hooks of the module object `self`, or null when it has nothing to do. Unwatched, only a bound module has: one
// look through the few bound modules instead of a hash lookup among all of them.
const ModuleHooks* hooksOf(const c10::IValue& self, ThreadState& thread, std::shared_ptr<const HookTable>& hold,
                           bool watching)
{
    if (!self.isObject())
        return nullptr;
    const HookTable& table = Hooks::forHook(thread, hold);
    return watching ? table.find(&self.toObjectRef()) : table.findBound(&self.toObjectRef());
}

void moduleEnter(const c10::IValue& self, c10::ArrayRef<c10::IValue> inputs)
{
    // The inactive case in one branch of inline loads: every instrumented module pays it twice per forward.
    const bool watching = watched();
    if (!watching && !Hooks::anyBound())
        return;
    ThreadState& thread = ThreadState::current();
    std::shared_ptr<const HookTable> hold;
    const ModuleHooks* found = hooksOf(self, thread, hold, watching);
    if (!found)
        return;
    const ModuleHooks& hooks = *found;
    if (const auto hook = faults::gAfterHookSnapshot.load(std::memory_order_relaxed))
        hook(hooks.path);
    followItsTask(thread, !hooks.bindings.empty());
    if (anyObserving() && !observersOnThisThread().empty()) {
        thread.observedModules.push_back(hooks.path);
        for (const auto& observer : observersOnThisThread().observers) {
            observer->moduleEnter(hooks.path);
            if (observer->wantsModuleOutputs())
                observer->moduleInputs(hooks.path, inputs);
        }
        if (hooks.bindings.empty())
            publishTask(thread); // tasks forked inside this module start inside it (else published below)
    }
    if (hooks.bindings.empty() && events::recordingModule(false)) // EventStream::Modules::Every
        events::emit(EventKind::ModuleEnter, hooks.path, nullptr, nullptr, 0);
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

void moduleExit(const c10::IValue& self, c10::ArrayRef<c10::IValue> outputs)
{
    const bool watching = watched();
    if (!watching && !Hooks::anyBound())
        return;
    ThreadState& thread = ThreadState::current();
    std::shared_ptr<const HookTable> hold;
    const ModuleHooks* found = hooksOf(self, thread, hold, watching);
    if (!found)
        return;
    const ModuleHooks& hooks = *found;
    followItsTask(thread, !hooks.bindings.empty());
    const bool observed = anyObserving() && !observersOnThisThread().empty();
    if (observed && !thread.observedModules.empty()) // (a continuation leaving a module entered on another thread)
        thread.observedModules.pop_back();
    if (!hooks.bindings.empty()) {
        applyPendingUnwinds(thread);
        for (auto b = hooks.bindings.rbegin(); b != hooks.bindings.rend(); ++b)
            b->runtime->postHook(thread, hooks.path, b->entries);
        thread.refreshModeKey();
        publishTask(thread);
    }
    if (events::recordingModule(!hooks.bindings.empty()))
        events::emit(EventKind::ModuleExit, hooks.path, nullptr, nullptr, 0);
    if (observed) {
        for (const auto& observer : observersOnThisThread().observers) {
            if (observer->wantsModuleOutputs())
                observer->moduleOutputs(hooks.path, outputs);
            observer->moduleExit(hooks.path);
        }
        if (hooks.bindings.empty())
            publishTask(thread);
    }
}

// The operation of one hook op node: the module object sits below the `passed` values the op returns as they came
// (the forward's inputs or outputs, graph_instrumentation.cpp; none when called without a node). The hook reads
// them in place; the object is dropped after it.
template <void (*Hook)(const c10::IValue&, c10::ArrayRef<c10::IValue>)>
torch::jit::Operation hookOperation(const torch::jit::Node* node)
{
    const std::ptrdiff_t passed = node ? std::ptrdiff_t(node->inputs().size()) - 1 : 0;
    return [passed](torch::jit::Stack& stack) {
        const auto self = stack.end() - passed - 1;
        Hook(*self, c10::ArrayRef<c10::IValue>(stack.data() + (self - stack.begin()) + 1, size_t(passed)));
        stack.erase(self);
    };
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
    // Passes its values through: the stack already holds them as its outputs.
    torch::jit::Operator(
        "kforge::pin_operands(...) -> ...",
        [](const torch::jit::Node*) -> torch::jit::Operation { return [](torch::jit::Stack&) {}; },
        c10::AliasAnalysisKind::CONSERVATIVE),
});

} // namespace

HookDemand hookDemand(const c10::IValue& root)
{
    if (watched())
        return HookDemand::EveryModule;
    if (!Hooks::anyBound())
        return HookDemand::None;
    if (!root.isObject())
        return HookDemand::EveryModule;
    ThreadState& thread = ThreadState::current();
    std::shared_ptr<const HookTable> hold;
    const HookTable& table = Hooks::forHook(thread, hold);
    bool rootBound = false;
    for (const auto& [object, hooks] : table.bound) {
        if (object != &root.toObjectRef())
            return HookDemand::EveryModule; // a module below the root, or of another session: every hook looks
        rootBound = true;
    }
    return rootBound ? HookDemand::RootOnly : HookDemand::None;
}

c10::Symbol moduleEnterSymbol() { return c10::Symbol::fromQualString("kforge::module_enter"); }
c10::Symbol moduleExitSymbol() { return c10::Symbol::fromQualString("kforge::module_exit"); }
c10::Symbol pinOperandsSymbol() { return c10::Symbol::fromQualString("kforge::pin_operands"); }

void callModuleEnter(const c10::IValue& self, c10::ArrayRef<c10::IValue> inputs) { moduleEnter(self, inputs); }
void callModuleExit(const c10::IValue& self, c10::ArrayRef<c10::IValue> outputs) { moduleExit(self, outputs); }

bool moduleOutputsWanted() { return anyObserving() && observersOnThisThread().wantsModuleOutputs; }

} // namespace kforge::runtime
