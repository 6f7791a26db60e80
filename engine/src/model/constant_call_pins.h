// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <torch/script.h>

#include <vector>

namespace kforge {

// Whether a node calls an overload the interposer intercepts (opaque ops aside: nothing inside them is a call).
bool callsInterceptedOp(const torch::jit::Node& node);

// Keeps every intercepted call whose operands are all constants a call (R1): LibTorch's optimized executor inlines
// every method and TorchScript function into the forward and then computes what depends on constants only while it
// optimises, once, with whatever providers were in effect then, outside every scope or in that of the forward that
// happened to optimise (a provider's result would then outlive deactivate()); and it merges the same call made in two
// scopes. Such a call reads one of its operands through kforge::pin_operands (runtime/hook_ops.h), which no
// optimisation sees through:
//   - inside a graph: gelu(torch.ones(8)), a traced tensor constant, a frozen attribute;
//   - at a call of a method or a TorchScript function whose body, once inlined with the constants this call passes
//     (or returns constants its caller calls a function on), would compute such a call: F.relu(torch.linspace(...)),
//     scripted as a prim::CallFunction of torch.nn.functional's relu, a user helper's F.gelu of a constant, a helper's
//     constant result given to F.silu. The call's constant operands are pinned, its tensors first.
// Reaches, from the given graphs, every method and function they call, transitively; pins nothing twice (a graph
// already pinned has no call left whose operands are all constants).
void pinCallsOnConstants(const std::vector<std::shared_ptr<torch::jit::Graph>>& graphs);

} // namespace kforge
