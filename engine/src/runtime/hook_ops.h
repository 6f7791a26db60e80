// SPDX-License-Identifier: Apache-2.0
#pragma once
// kforge::module_enter(Any self, ...) -> ... / kforge::module_exit(Any self, ...) -> ...: side-effecting ops inserted
// into each module class's forward graph (R2). module_enter passes the forward's other inputs through and
// module_exit its outputs, so that no optimisation merges a call inside the scope with one outside it (R1).
// CONSERVATIVE alias analysis keeps them through DCE and inlining.
#include <ATen/core/interned_strings.h>
#include <ATen/core/ivalue.h>

namespace kforge::runtime {

c10::Symbol moduleEnterSymbol();
c10::Symbol moduleExitSymbol();
// kforge::pin_operands(...) -> ...: passes its values through, as new values no optimisation can see through (R1):
// a catalog call on constants only reads them through it, so that the optimized executor neither folds the call while
// optimising (outside every scope, or in the scope of the forward that happened to optimise) nor merges it with the
// same call in another scope.
c10::Symbol pinOperandsSymbol();

// What the module hooks of a forward whose root module object is `root` have to do, decided when it starts:
//   None         no hook has anything to do on any thread: no runtime bound, no event stream, no breakpoint, no
//                observer (host recorder, sample capture)
//   RootOnly     only the root's: the runtimes bound are bound to the root alone, and nobody records, steps or observes
//   EveryModule  otherwise
// A session runs the uninstrumented copy of the forward (graph_instrumentation.h) unless every module's hooks are
// needed, calling the root's by hand when they are, so that a plan with root scopes only costs nothing per module.
enum class HookDemand { None, RootOnly, EveryModule };
HookDemand hookDemand(const c10::IValue& root);

// What the ops do, callable by hand (AITune's test calls the pre-hook by hand; so do ours and the benches).
// `inputs`, `outputs`: what the module call takes and returns, for observers that want them
// (ForwardObserver::moduleInputs, moduleOutputs).
void callModuleEnter(const c10::IValue& self, c10::ArrayRef<c10::IValue> inputs = {});
void callModuleExit(const c10::IValue& self, c10::ArrayRef<c10::IValue> outputs = {});
// Whether an observer on this thread wants module inputs and outputs: callers that gather them (.pt2 frames) ask.
bool moduleOutputsWanted();

} // namespace kforge::runtime
