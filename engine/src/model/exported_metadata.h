// SPDX-License-Identifier: Apache-2.0
#pragma once
// The text fields of a serialized torch.export node that both the reader (exported_program.cpp) and the interpreter
// (exported_runner.cpp) parse: its target, its module stack and the torch.nn.functional call it came from.
#include <kforge/functions.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kforge {

// "torch.ops.aten.linear.default" -> {"aten::linear", ""}; the overload "" for "default", others as written.
struct ExportedTarget {
    std::string op, overload;
};
std::optional<ExportedTarget> exportedTarget(const std::string& target);

// nn_module_stack "key,path,type;...": the root first (path ""), the innermost module last. `key` differs between
// two calls of one module. Export's placeholder frame for nodes made from tensor metadata is left out (no module).
struct ExportedFrame {
    std::string key, path, type; // type: "torch.nn.modules.conv.Conv2d"
};
std::vector<ExportedFrame> exportedModuleStack(const std::string& text);

// Whether the op ("aten::addmm", overload "" for the default) is one of `function`'s forms (or a shared form, such as
// _convolution, that can be it); with no function, whether it is any catalog form: a call a provider may serve. A
// node whose torch_fn names a catalog function its op is not a form of is part of a call export decomposed.
bool isCatalogFormOf(const std::string& op, const std::string& overload,
                     std::optional<Function> function = std::nullopt);

// torch_fn "gelu_1;builtin_function_or_method.gelu" -> {"gelu_1", "gelu"}; empty when absent.
std::pair<std::string, std::string> exportedTorchFn(const std::string& text);

} // namespace kforge
