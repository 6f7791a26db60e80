// SPDX-License-Identifier: Apache-2.0
#include "model/graph_instrumentation.h"

#include "runtime/hook_ops.h"

#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>
#include <vector>

namespace kforge {

namespace {

// In a plain copy: calls of forward on modules whose class has a plain forward call that instead (inner blocks too).
void callPlainForwards(torch::jit::Block* block)
{
    for (torch::jit::Node* node : block->nodes()) {
        for (torch::jit::Block* inner : node->blocks())
            callPlainForwards(inner);
        if (node->kind() != c10::prim::CallMethod || node->s(c10::attr::name) != "forward")
            continue;
        const auto type = node->input(0)->type()->cast<c10::ClassType>();
        if (type && type->findMethod(kPlainForward))
            node->s_(c10::attr::name, kPlainForward);
    }
}

} // namespace

int instrumentModuleClasses(const torch::jit::Module& root)
{
    const c10::Symbol enter = runtime::moduleEnterSymbol();
    const c10::Symbol exit = runtime::moduleExitSymbol();
    std::unordered_set<const c10::ClassType*> seen;
    std::vector<std::shared_ptr<torch::jit::Graph>> plainGraphs;
    int instrumented = 0;
    for (const auto& item : root.named_modules()) {
        const c10::ClassTypePtr type = item.value.type();
        if (!seen.insert(type.get()).second)
            continue;
        const auto method = item.value.find_method("forward");
        if (!method)
            continue;
        auto& graph = *torch::jit::toGraphFunction(method->function()).graph();
        const torch::jit::Node* first = graph.param_node()->next();
        if (first != graph.return_node() && first->kind() == enter)
            continue; // already instrumented (a class shared with another session)
        if (!type->findMethod(kPlainForward)) {
            std::shared_ptr<torch::jit::Graph> plain = graph.copy();
            type->addMethod(
                type->compilation_unit()->create_function(c10::QualifiedName(*type->name(), kPlainForward), plain));
            plainGraphs.push_back(std::move(plain));
        }
        torch::jit::Value* self = graph.inputs().at(0);
        graph.create(enter, {self}, 0)->insertAfter(graph.param_node());
        graph.create(exit, {self}, 0)->insertBefore(graph.return_node());
        ++instrumented;
    }
    for (const auto& plain : plainGraphs) // once every class has its plain forward
        callPlainForwards(plain->block());
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
