// SPDX-License-Identifier: Apache-2.0
#pragma once
// A call in any of its function's forms (function_catalog.def) turned into the function's normal form, the one
// schema providers are called with.
#include <kforge/functions.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <optional>

namespace kforge::runtime {

// The function a call of `form` is, from its arguments `args` (the op's arguments only) for shared forms.
// nullopt: not a catalog call (an opaque op, a weight rank no convolution function has).
std::optional<Function> functionOfCall(const OpForm& form, c10::ArrayRef<c10::IValue> args);

// Rewrites `args` (a PaddingString, Convolution or ConvolutionMode call) into its function's normal form.
// Returns nullptr on success, else why the call has no normal form (`args` may then be partly rewritten).
const char* toNormalForm(const OpForm& form, torch::jit::Stack& args);

// The normal form's op of each function, looked up once; null when this LibTorch lacks it.
const c10::OperatorHandle* normalOp(Function function);

} // namespace kforge::runtime
