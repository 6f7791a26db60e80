// SPDX-License-Identifier: Apache-2.0
#include "model/graph_instrumentation.h"

#include "runtime/hook_ops.h"

#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>

namespace kforge {

int instrumentModuleClasses(const torch::jit::Module& root)
{
    const c10::Symbol enter = runtime::moduleEnterSymbol();
    const c10::Symbol exit = runtime::moduleExitSymbol();
    std::unordered_set<const c10::ClassType*> seen;
    int instrumented = 0;
    for (const auto& item : root.named_modules()) {
        if (!seen.insert(item.value.type().get()).second)
            continue;
        const auto method = item.value.find_method("forward");
        if (!method)
            continue;
        auto& graph = *torch::jit::toGraphFunction(method->function()).graph();
        const torch::jit::Node* first = graph.param_node()->next();
        if (first != graph.return_node() && first->kind() == enter)
            continue; // already instrumented (a class shared with another session)
        torch::jit::Value* self = graph.inputs().at(0);
        graph.create(enter, {self}, 0)->insertAfter(graph.param_node());
        graph.create(exit, {self}, 0)->insertBefore(graph.return_node());
        ++instrumented;
    }
    return instrumented;
}

namespace {

bool containsFork(const torch::jit::Block* block)
{
    for (const torch::jit::Node* node : block->nodes()) {
        if (node->kind() == c10::prim::fork)
            return true;
        for (const torch::jit::Block* inner : node->blocks())
            if (containsFork(inner))
                return true;
    }
    return false;
}

} // namespace

bool forksTasks(const torch::jit::Module& root)
{
    for (const torch::jit::Function* function : root.type()->compilation_unit()->get_functions())
        if (function->isGraphFunction() && containsFork(torch::jit::toGraphFunction(*function).graph()->block()))
            return true;
    return false;
}

} // namespace kforge
