// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernels with two entry points for the catalog overloads: boxed callers (TorchScript, the .pt2
// interpreter) reach InterposedForm as before; C++ callers (at::relu, ATen's composite ops) reach a typed entry that,
// when the call passes through (InterposedForm::passesThrough), redispatches below kModeKey unboxed instead of
// boxing the call, and otherwise boxes it for InterposedForm. One typed entry per overload the catalog names
// (generated from function_catalog.def).
#include <kforge/functions.h>

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>

namespace kforge::runtime {

// The two-entry kernel for `form` (`op` is its operator), or nullopt when the engine has no typed entry for it.
std::optional<c10::KernelFunction> unboxedKernel(const OpForm& form, const c10::OperatorHandle& op);

} // namespace kforge::runtime
