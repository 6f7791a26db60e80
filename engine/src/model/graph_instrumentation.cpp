// SPDX-License-Identifier: Apache-2.0
#include "model/graph_instrumentation.h"

#include "model/constant_call_pins.h"
#include "runtime/hook_ops.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/common_subexpression_elimination.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/peephole.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kforge {

namespace {

// The plain copy of a method: kPlainForward for forward, "_kforge_plain_<name>" for the others (forward1 too).
std::string plainNameOf(const std::string& method)
{
    return method == "forward" ? std::string(kPlainForward) : std::string(kPlainMethodPrefix) + method;
}

// Adds the plain copy of `method` (its graph, `plain`) to `type` under `plainName`, with the method's own schema: a
// schema derived from the graph would lose the defaults of its arguments (`forward(self, x, scale: float = 2.0)`),
// and every caller that leaves them out would fail.
void addPlainCopy(const c10::ClassTypePtr& type, torch::jit::Function& method, const std::string& plainName,
                  std::shared_ptr<torch::jit::Graph> plain)
{
    torch::jit::Function* copy =
        type->compilation_unit()->create_function(c10::QualifiedName(*type->name(), plainName), std::move(plain));
    copy->setSchema(method.getSchema().cloneWithName(plainName, ""));
    type->addMethod(copy);
}

// In a plain copy: every call of a module method calls that method's plain copy instead (inner blocks too). A
// forward often reaches its submodules through another method (torchvision's ResNet.forward calls
// self._forward_impl, SqueezeExcitation.forward calls self._scale): such methods get a plain copy of their own,
// queued in `pending` so that their calls are redirected in turn.
void callPlainMethods(torch::jit::Block* block, std::vector<std::shared_ptr<torch::jit::Graph>>& pending)
{
    for (torch::jit::Node* node : block->nodes()) {
        for (torch::jit::Block* inner : node->blocks())
            callPlainMethods(inner, pending);
        if (node->kind() != c10::prim::CallMethod)
            continue;
        const auto type = node->input(0)->type()->cast<c10::ClassType>();
        const std::string name = node->s(c10::attr::name);
        if (!type || name.rfind(kPlainMethodPrefix, 0) == 0)
            continue;
        const std::string plainName = plainNameOf(name);
        if (!type->findMethod(plainName)) {
            torch::jit::Function* method = type->findMethod(name);
            if (isForwardMethod(name) || !method || !method->isGraphFunction())
                continue; // a forward without a plain copy is not instrumented either
            std::shared_ptr<torch::jit::Graph> plain = torch::jit::toGraphFunction(*method).graph()->copy();
            addPlainCopy(type, *method, plainName, plain);
            pending.push_back(std::move(plain));
        }
        node->s_(c10::attr::name, plainName);
    }
}

// Puts module_enter(self, inputs...) first and module_exit(self, outputs...) last. The forward's other inputs pass
// through the enter op and its outputs through the exit op (hook_ops.h): every call inside the forward then reads
// values the enter op made, and every call after it values the exit op made, so common subexpression elimination
// (the optimized executor, once it has inlined the forward into its caller) never merges a call inside the scope
// with the same call outside it (R1).
void bracketWithHookOps(torch::jit::Graph& graph, c10::Symbol enter, c10::Symbol exit)
{
    const auto inputs = graph.inputs();
    torch::jit::Node* enterNode = graph.create(enter, inputs, inputs.size() - 1);
    enterNode->insertAfter(graph.param_node());
    for (size_t i = 1; i < inputs.size(); ++i)
        inputs[i]->replaceAllUsesAfterNodeWith(enterNode, enterNode->output(i - 1)->setType(inputs[i]->type()));

    torch::jit::Node* returnNode = graph.return_node();
    std::vector<torch::jit::Value*> exitInputs{inputs[0]};
    exitInputs.insert(exitInputs.end(), returnNode->inputs().begin(), returnNode->inputs().end());
    torch::jit::Node* exitNode = graph.create(exit, exitInputs, returnNode->inputs().size());
    exitNode->insertBefore(returnNode);
    for (size_t i = 0; i < returnNode->inputs().size(); ++i)
        returnNode->replaceInput(i, exitNode->output(i)->setType(returnNode->input(i)->type()));
}

} // namespace

std::vector<std::string> forwardMethodsOf(const c10::ClassType& type)
{
    std::vector<std::string> names;
    for (const torch::jit::Function* method : type.methods())
        if (isForwardMethod(method->name()) && method->isGraphFunction())
            names.push_back(method->name());
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b; // forward, forward1, forward2, ..., forward10
    });
    return names;
}

int instrumentModuleClasses(const torch::jit::Module& root)
{
    const c10::Symbol enter = runtime::moduleEnterSymbol();
    const c10::Symbol exit = runtime::moduleExitSymbol();
    std::unordered_set<const c10::ClassType*> seen;
    std::vector<c10::ClassTypePtr> types;
    std::vector<std::shared_ptr<torch::jit::Graph>> plainGraphs;
    int instrumented = 0;
    for (const auto& item : root.named_modules()) {
        const c10::ClassTypePtr type = item.value.type();
        if (!seen.insert(type.get()).second)
            continue;
        types.push_back(type);
        bool bracketed = false;
        for (const std::string& name : forwardMethodsOf(*type)) {
            torch::jit::Function& method = *type->findMethod(name);
            auto& graph = *torch::jit::toGraphFunction(method).graph();
            const torch::jit::Node* first = graph.param_node()->next();
            if (first != graph.return_node() && first->kind() == enter)
                continue; // already instrumented (a class shared with another session)
            // The plain copy before the brackets: it is the method as it was.
            if (!type->findMethod(plainNameOf(name))) {
                std::shared_ptr<torch::jit::Graph> plain = graph.copy();
                addPlainCopy(type, method, plainNameOf(name), plain);
                plainGraphs.push_back(std::move(plain));
            }
            bracketWithHookOps(graph, enter, exit);
            bracketed = true;
        }
        instrumented += bracketed;
    }
    while (!plainGraphs.empty()) { // once every class has its plain forward
        const std::shared_ptr<torch::jit::Graph> plain = std::move(plainGraphs.back());
        plainGraphs.pop_back();
        callPlainMethods(plain->block(), plainGraphs);
    }
    // Last, once the forwards are bracketed (a call of one passes its constants through the enter op, no further) and
    // every plain copy calls plain copies (which pass them on).
    std::vector<std::shared_ptr<torch::jit::Graph>> methods;
    for (const c10::ClassTypePtr& type : types)
        for (torch::jit::Function* method : type->methods())
            if (method->isGraphFunction())
                methods.push_back(torch::jit::toGraphFunction(*method).graph());
    pinCallsOnConstants(methods);
    return instrumented;
}

namespace {

// Inlines every call of a module method or a TorchScript function in a graph, each callee's graph itself inlined
// first (once per callee). The callees' own graphs: the instrumented methods, hook ops included.
class CallInliner {
public:
    std::shared_ptr<torch::jit::Graph> inlined(torch::jit::GraphFunction& function)
    {
        auto& done = m_inlined[&function];
        if (!done) {
            std::shared_ptr<torch::jit::Graph> copy = function.graph()->copy();
            inlineCalls(*copy->block());
            done = std::move(copy);
        }
        return done;
    }

private:
    void inlineCalls(torch::jit::Block& block)
    {
        for (auto it = block.nodes().begin(); it != block.nodes().end();) {
            torch::jit::Node* node = *it++; // the inlined nodes go before `node`, which is then destroyed
            for (torch::jit::Block* inner : node->blocks())
                inlineCalls(*inner);
            if (node->kind() == c10::prim::CallMethod) {
                const auto type = node->input(0)->type()->cast<c10::ClassType>();
                torch::jit::Function* method = type ? type->findMethod(node->s(c10::attr::name)) : nullptr;
                if (auto* function = method ? torch::jit::tryToGraphFunction(*method) : nullptr)
                    torch::jit::inlineCallTo(node, function, inlined(*function).get());
            } else if (node->kind() == c10::prim::CallFunction) {
                const auto type = node->input(0)->type()->cast<c10::FunctionType>();
                if (auto* function = type ? torch::jit::tryToGraphFunction(*type->function()) : nullptr) {
                    node->removeInput(0); // the function constant; the callee's graph takes the arguments only
                    torch::jit::inlineCallTo(node, function, inlined(*function).get());
                }
            }
        }
    }

    std::unordered_map<const torch::jit::GraphFunction*, std::shared_ptr<torch::jit::Graph>> m_inlined;
};

// The inlined forward as LibTorch's graph executor prepares every graph before it runs it, optimizer or not in the
// deployment's sense (torch::jit::preoptimizeGraph, autocast aside): peephole rewrites (`int(NumToTensor)`, `is None`
// on what cannot be None), constants folded where every operand is an immutable constant (never a tensor, so never a
// catalog call), duplicate constants pooled, dead code removed. None of these moves, merges or folds a call of a
// function a plan can serve, and the hook ops have side effects, so they stay where they are.
std::shared_ptr<torch::jit::Graph> preoptimized(const std::shared_ptr<torch::jit::Graph>& inlined)
{
    std::shared_ptr<torch::jit::Graph> graph = inlined->copy();
    torch::jit::PeepholeOptimize(graph, /*disable_shape_peepholes=*/true);
    torch::jit::ConstantPropagationImmutableTypes(graph);
    torch::jit::ConstantPooling(graph);
    return graph;
}

// Marks every catalog call of a block and its nested blocks with an attribute of its own, so that no two compare
// equal.
void markCatalogCalls(torch::jit::Block& block, c10::Symbol mark, std::vector<torch::jit::Node*>& marked)
{
    for (torch::jit::Node* node : block.nodes()) {
        if (callsInterceptedOp(*node)) {
            node->i_(mark, static_cast<int64_t>(marked.size()));
            marked.push_back(node);
        }
        for (torch::jit::Block* inner : node->blocks())
            markCatalogCalls(*inner, mark, marked);
    }
}

// What LibTorch's graph optimizer does beyond the preparation that never touches a catalog call: repeated pure
// expressions computed once (a traced decoder repeats its size arithmetic and masks per layer: hf_llama's inlined
// forward has 37 aten::size, 19 aten::unsqueeze, 35 lists where the optimizer leaves 32, 15, 25) and tuples built only
// to be unpacked removed. Intercepted calls (callsInterceptedOp) are kept apart, each with an attribute of its own
// while the pass runs: two calls of gelu on the same tensor stay two calls, each served and counted, as R1 requires;
// the deployment may merge them.
void eliminateRepeatedWork(const std::shared_ptr<torch::jit::Graph>& graph)
{
    const c10::Symbol mark = c10::Symbol::attr("kforge_catalog_call");
    std::vector<torch::jit::Node*> marked;
    markCatalogCalls(*graph->block(), mark, marked);
    torch::jit::EliminateCommonSubexpression(graph);
    for (torch::jit::Node* node : marked)
        node->removeAttribute(mark);
    torch::jit::LowerSimpleTuples(graph);
}

} // namespace

bool addInlinedForwards(const torch::jit::Module& root)
{
    const c10::ClassTypePtr type = root.type();
    torch::jit::Function* forward = type->findMethod("forward");
    torch::jit::Function* plain = type->findMethod(kPlainForward);
    if (!forward || !plain || !forward->isGraphFunction() || !plain->isGraphFunction())
        return false;
    if (type->findMethod(kInlinedForward))
        return true; // a class shared with another session
    CallInliner inliner;
    const auto prepared = [&inliner](torch::jit::Function& method) {
        std::shared_ptr<torch::jit::Graph> graph = preoptimized(inliner.inlined(torch::jit::toGraphFunction(method)));
        eliminateRepeatedWork(graph);
        return graph;
    };
    addPlainCopy(type, *forward, kInlinedForward, prepared(*forward));
    addPlainCopy(type, *plain, kInlinedPlainForward, prepared(*plain));
    return true;
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
