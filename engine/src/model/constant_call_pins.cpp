// SPDX-License-Identifier: Apache-2.0
#include "model/constant_call_pins.h"

#include "runtime/hook_ops.h"

#include <kforge/functions.h>

#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>

namespace kforge {

bool callsInterceptedOp(const torch::jit::Node& node)
{
    static const std::unordered_set<std::string> intercepted = [] {
        std::unordered_set<std::string> names;
        for (const OpForm& form : allOpForms())
            if (form.kind != FormKind::Opaque)
                names.insert(qualifiedOpName(form.op));
        return names;
    }();
    const c10::FunctionSchema* schema = node.maybeSchema();
    if (!schema)
        return false;
    const std::string& overload = schema->overload_name();
    return intercepted.count(overload.empty() ? schema->name() : schema->name() + "." + overload) > 0;
}

namespace {

// The TorchScript graph a prim::CallFunction or prim::CallMethod runs, and where its arguments start among the call's
// inputs: a CallFunction's first input is the function itself, a CallMethod's is `self`, the method's first input.
struct CalledGraph {
    torch::jit::Graph* graph = nullptr;
    size_t firstArgument = 0;
};

CalledGraph calledGraphOf(const torch::jit::Node& node)
{
    torch::jit::Function* function = nullptr;
    size_t firstArgument = 0;
    if (node.kind() == c10::prim::CallFunction) {
        if (const auto type = node.input(0)->type()->cast<c10::FunctionType>())
            function = type->function();
        firstArgument = 1;
    } else if (node.kind() == c10::prim::CallMethod) {
        if (const auto type = node.input(0)->type()->cast<c10::ClassType>())
            function = type->findMethod(node.s(c10::attr::name));
    }
    torch::jit::GraphFunction* graphFunction = function ? torch::jit::tryToGraphFunction(*function) : nullptr;
    return {graphFunction ? graphFunction->graph().get() : nullptr, firstArgument};
}

// Which of a called graph's inputs a call passes constants to.
using ConstantArguments = std::vector<bool>;

// What a call of a graph becomes once the optimized executor has inlined it with some constant arguments: whether an
// intercepted call in it would have constant operands only, and which of its outputs would be constants.
struct InlinedCall {
    bool foldsInterceptedCall = false;
    std::vector<bool> constantOutputs;
};

class ConstantCallPinner {
public:
    // Pins the calls of `graph` (after those of every graph it calls), once per graph.
    void pin(torch::jit::Graph& graph)
    {
        if (!m_pinned.insert(&graph).second)
            return;
        Walk walk;
        walk.pinning = true;
        walkBlock(*graph.block(), walk);
    }

private:
    using InlinedCallKey = std::pair<const torch::jit::Graph*, ConstantArguments>;

    // One pass over a graph. `constants`: the values the optimized executor could compute while optimising: those
    // whose every operand is one, made by a node with no blocks and no side effects. Pinning, the calls on constants
    // are pinned; otherwise `folds` records that one would be folded.
    struct Walk {
        std::unordered_set<const torch::jit::Value*> constants;
        bool pinning = false;
        bool folds = false;
    };

    void walkBlock(torch::jit::Block& block, Walk& walk)
    {
        for (torch::jit::Node* node : block.nodes()) {
            for (torch::jit::Block* inner : node->blocks())
                walkBlock(*inner, walk);
            const bool allConstant =
                std::all_of(node->inputs().begin(), node->inputs().end(),
                            [&](const torch::jit::Value* v) { return walk.constants.count(v) > 0; });
            if (node->blocks().empty() && callsInterceptedOp(*node)) {
                if (allConstant && walk.pinning)
                    pinOneOperand(*node);
                else if (allConstant)
                    walk.folds = true;
                continue; // its outputs are a call's, not constants
            }
            if (const CalledGraph called = calledGraphOf(*node); called.graph) {
                walkCall(*node, called, walk);
                continue;
            }
            if (node->kind() == c10::prim::If && walk.constants.count(node->input(0))) {
                // Constant propagation keeps the branch a constant condition takes: either may be the one.
                for (size_t i = 0; i < node->outputs().size(); ++i)
                    for (const torch::jit::Block* branch : node->blocks())
                        if (walk.constants.count(branch->outputs()[i]))
                            walk.constants.insert(node->output(i));
                continue;
            }
            if (allConstant && node->blocks().empty() && !node->hasSideEffects())
                for (const torch::jit::Value* output : node->outputs())
                    walk.constants.insert(output);
        }
    }

    // A call of a method or function: pinning, its constant arguments when its body would fold an intercepted call
    // once inlined, tensors first (F.relu's `inplace=False` stays a constant, so that its branch is still chosen while
    // optimising); then its outputs are constants where the body, so called, returns constants.
    void walkCall(torch::jit::Node& call, const CalledGraph& called, Walk& walk)
    {
        const InlinedCall* inlined = &inlinedCall(*called.graph, constantArguments(call, called, walk));
        if (inlined->foldsInterceptedCall) {
            if (!walk.pinning) {
                walk.folds = true;
            } else {
                for (const bool tensorsOnly : {true, false}) {
                    pinConstantArguments(call, called, walk, tensorsOnly);
                    inlined = &inlinedCall(*called.graph, constantArguments(call, called, walk));
                    if (!inlined->foldsInterceptedCall)
                        break;
                }
            }
        }
        for (size_t i = 0; i < call.outputs().size() && i < inlined->constantOutputs.size(); ++i)
            if (inlined->constantOutputs[i])
                walk.constants.insert(call.output(i));
    }

    ConstantArguments constantArguments(const torch::jit::Node& call, const CalledGraph& called, const Walk& walk)
    {
        ConstantArguments constant(called.graph->inputs().size(), false);
        for (size_t i = 0; i < constant.size() && called.firstArgument + i < call.inputs().size(); ++i)
            constant[i] = walk.constants.count(call.input(called.firstArgument + i)) > 0;
        return constant;
    }

    // What calling `graph` with these constant arguments becomes once inlined, the graph pinned first (its own calls on
    // constants are then no constants to its callers).
    const InlinedCall& inlinedCall(torch::jit::Graph& graph, const ConstantArguments& arguments)
    {
        const InlinedCallKey key{&graph, arguments};
        if (const auto known = m_inlinedCalls.find(key); known != m_inlinedCalls.end())
            return known->second;
        pin(graph);
        Walk walk;
        for (size_t i = 0; i < arguments.size(); ++i)
            if (arguments[i])
                walk.constants.insert(graph.inputs()[i]);
        walkBlock(*graph.block(), walk);
        InlinedCall inlined;
        inlined.foldsInterceptedCall = walk.folds;
        for (const torch::jit::Value* output : graph.outputs())
            inlined.constantOutputs.push_back(walk.constants.count(output) > 0);
        return m_inlinedCalls.emplace(key, std::move(inlined)).first->second;
    }

    static torch::jit::Value* pinned(torch::jit::Node& before, torch::jit::Value* value)
    {
        torch::jit::Node* pin = before.owningGraph()->create(runtime::pinOperandsSymbol(), {value}, 1);
        pin->insertBefore(&before);
        return pin->output()->setType(value->type());
    }

    static bool isTensor(const torch::jit::Value& value) { return value.type()->isSubtypeOf(*c10::TensorType::get()); }

    // An intercepted call with constant operands only: one operand through a pin is enough, a tensor where it has one.
    static void pinOneOperand(torch::jit::Node& call)
    {
        if (call.inputs().empty())
            return;
        const auto tensor = std::find_if(call.inputs().begin(), call.inputs().end(),
                                         [](const torch::jit::Value* v) { return isTensor(*v); });
        const size_t index = tensor == call.inputs().end() ? 0 : size_t(tensor - call.inputs().begin());
        call.replaceInput(index, pinned(call, call.input(index)));
    }

    static void pinConstantArguments(torch::jit::Node& call, const CalledGraph& called, const Walk& walk,
                                     bool tensorsOnly)
    {
        for (size_t i = called.firstArgument; i < call.inputs().size(); ++i) {
            torch::jit::Value* argument = call.input(i);
            if (walk.constants.count(argument) && (!tensorsOnly || isTensor(*argument)))
                call.replaceInput(i, pinned(call, argument));
        }
    }

    std::unordered_set<const torch::jit::Graph*> m_pinned;
    std::map<InlinedCallKey, InlinedCall> m_inlinedCalls;
};

} // namespace

void pinCallsOnConstants(const std::vector<std::shared_ptr<torch::jit::Graph>>& graphs)
{
    ConstantCallPinner pinner;
    for (const std::shared_ptr<torch::jit::Graph>& graph : graphs)
        pinner.pin(*graph);
}

} // namespace kforge
