// SPDX-License-Identifier: Apache-2.0
#include "model/module_tree.h"

#include "model/graph_instrumentation.h"
#include "model/subtree_sums.h"
#include "runtime/hook_ops.h"

#include <kforge/functions.h>
#include <kforge/module_path.h>

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/constant_propagation.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <regex>
#include <unordered_map>
#include <unordered_set>

namespace kforge {
namespace {

// The object a value of a module's graph holds when the graph says which: `self` (the graph's first input) and
// attribute chains from it (self.conv.weight, self.pos_conv.parametrizations.weight.original0). Empty otherwise.
c10::IValue attributeOf(const torch::jit::Value* value, const torch::jit::Module* self, int depth = 0)
{
    if (!self || depth > 16)
        return {};
    const torch::jit::Node* node = value->node();
    if (node->kind() == c10::prim::Param && value->offset() == 0)
        return self->_ivalue();
    if (node->kind() != c10::prim::GetAttr)
        return {};
    const c10::IValue owner = attributeOf(node->input(), self, depth + 1);
    if (!owner.isObject())
        return {};
    const auto& object = owner.toObjectRef();
    const std::string name = node->s(c10::attr::name);
    return object.type()->hasAttribute(name) ? object.getAttr(name) : c10::IValue();
}

// Where a graph is being read: the module it is a method of, and the call that entered it (null for the forward
// the inventory starts from), so that a method's parameters lead back to the caller's arguments.
struct CallFrame {
    const torch::jit::Module* self = nullptr;
    const torch::jit::Node* call = nullptr;
    const CallFrame* caller = nullptr;
};

// A tensor value's rank: from its type when the graph carries shapes, from the module attribute it reads, through
// the ops that keep their first input's rank, and through the methods that compute it, so that a weight computed at
// run time has its parameter's rank (a traced weight-normed convolution's weight is a forward of its
// ParametrizationList, _weight_norm(v, g) inside). -1 when unknown.
int rankOf(const torch::jit::Value* value, const CallFrame& frame, int depth = 0)
{
    if (depth > 16)
        return -1;
    if (const auto type = value->type()->cast<c10::TensorType>(); type && type->dim())
        return int(*type->dim());
    if (const c10::IValue attribute = attributeOf(value, frame.self); attribute.isTensor())
        return int(attribute.toTensor().dim());
    const torch::jit::Node* node = value->node();
    // An instrumented forward's input or output, passed through its enter or exit op (graph_instrumentation.h).
    if (node->kind() == runtime::moduleEnterSymbol() || node->kind() == runtime::moduleExitSymbol())
        return rankOf(node->input(value->offset() + 1), frame, depth + 1);
    if (node->kind() == c10::prim::Param && value->offset() > 0 && frame.call && frame.caller &&
        value->offset() < frame.call->inputs().size())
        return rankOf(frame.call->input(value->offset()), *frame.caller, depth + 1);
    static const std::unordered_set<std::string> keepRank{
        "aten::_weight_norm", "aten::mul", "aten::div",    "aten::add",   "aten::sub",
        "aten::contiguous",   "aten::to",  "aten::detach", "aten::clone", "aten::type_as"};
    const std::string_view kind = node->kind().toQualString();
    if (!node->inputs().empty() && keepRank.count(std::string(kind)))
        return rankOf(node->input(0), frame, depth + 1);
    // The reshapes a weight passes through before a functional call (Mamba's mixer: F.conv1d on
    // self.conv1d.weight.squeeze(1).unsqueeze(1)).
    if (kind == "aten::unsqueeze" && node->inputs().size() == 2) {
        const int rank = rankOf(node->input(0), frame, depth + 1);
        return rank < 0 ? -1 : rank + 1;
    }
    if (kind == "aten::squeeze" && node->inputs().size() == 2) { // squeeze.dim: one dimension, when its size is 1
        const c10::IValue attribute = attributeOf(node->input(0), frame.self);
        const auto dim = torch::jit::toIValue(node->input(1));
        if (attribute.isTensor() && dim && dim->isInt()) {
            const at::Tensor& t = attribute.toTensor();
            const int64_t d = dim->toInt() < 0 ? dim->toInt() + t.dim() : dim->toInt();
            return int(t.dim()) - (d >= 0 && d < t.dim() && t.size(d) == 1 ? 1 : 0);
        }
        const int rank = rankOf(node->input(0), frame, depth + 1);
        return rank < 0 ? -1 : rank - 1;
    }
    if ((kind == "aten::view" || kind == "aten::reshape") && node->inputs().size() == 2) {
        const torch::jit::Node* sizes = node->input(1)->node();
        if (sizes->kind() == c10::prim::ListConstruct)
            return int(sizes->inputs().size());
        if (const auto constant = torch::jit::toIValue(node->input(1)); constant && constant->isIntList())
            return int(constant->toIntList().size());
    }
    if (node->kind() == c10::prim::CallMethod && node->outputs().size() == 1)
        if (const auto type = node->input(0)->type()->cast<c10::ClassType>())
            if (torch::jit::Function* method = type->findMethod(node->s(c10::attr::name));
                method && method->isGraphFunction()) {
                const c10::IValue receiver = attributeOf(node->input(0), frame.self);
                if (!receiver.isObject())
                    return -1;
                const torch::jit::Module callee(receiver.toObject());
                const auto graph = torch::jit::toGraphFunction(*method).graph();
                if (graph->outputs().size() != 1)
                    return -1;
                return rankOf(graph->outputs()[0], CallFrame{&callee, node, &frame}, depth + 1);
            }
    return -1;
}

// What a shared form's call (_convolution) is, from the graph: its weight's rank and the constant `transposed`.
OpCallFacts factsOf(const torch::jit::Node& node, const torch::jit::Module* self)
{
    OpCallFacts facts;
    if (node.inputs().size() < 7)
        return facts;
    if (const auto transposed = torch::jit::toIValue(node.input(6)); transposed && transposed->isBool())
        facts.transposed = transposed->toBool();
    facts.weightRank = rankOf(node.input(1), CallFrame{self});
    return facts;
}

// Inlines into `block` the calls that run inside the calling module's scope: scripted Python helpers
// (prim::CallFunction: F.layer_norm, F.softmax) and every method other than a forward, on the module itself or on a
// submodule (nn.Conv2d's _conv_forward, timm attention's _attn: no module hook runs around them, so their calls are
// the caller's). A forward called on a submodule (forward1, ... of a traced module too: isForwardMethod), or through
// an interface, stays a call: that module's own. Callees
// are inlined as written: their optimized_graph() has their submodules' forwards inlined too.
bool inlineHelpers(torch::jit::Block& block)
{
    bool changed = false;
    for (auto it = block.nodes().begin(); it != block.nodes().end();) {
        torch::jit::Node* node = *it++;
        for (torch::jit::Block* inner : node->blocks())
            changed = inlineHelpers(*inner) || changed;
        if (node->kind() == c10::prim::CallFunction) {
            const auto fnType = node->input(0)->type()->cast<c10::FunctionType>();
            if (auto* function = fnType ? torch::jit::tryToGraphFunction(*fnType->function()) : nullptr) {
                node->removeInput(0);
                torch::jit::inlineCallTo(node, function, function->graph().get()); // as written, not pre-inlined
                changed = true;
            }
        } else if (node->kind() == c10::prim::CallMethod && !isForwardMethod(node->s(c10::attr::name))) {
            const auto type = node->input(0)->type()->cast<c10::ClassType>();
            torch::jit::Function* method = type ? type->findMethod(node->s(c10::attr::name)) : nullptr;
            if (auto* function = method ? torch::jit::tryToGraphFunction(*method) : nullptr) {
                torch::jit::inlineCallTo(node, function, function->graph().get());
                changed = true;
            }
        }
    }
    return changed;
}

// Replaces the reads of scalar module attributes (bool, int, float, str, None: `self.training`, timm's
// `self.grad_checkpointing`) by their values in the loaded model, following GetAttr chains from `self` through
// submodules, so that constant propagation can take the branches they decide.
void foldScalarAttributes(torch::jit::Graph& graph, const torch::jit::Module& self)
{
    std::unordered_map<const torch::jit::Value*, c10::IValue> objects{{graph.inputs().at(0), self._ivalue()}};
    std::vector<torch::jit::Block*> blocks{graph.block()};
    while (!blocks.empty()) {
        torch::jit::Block* block = blocks.back();
        blocks.pop_back();
        for (torch::jit::Node* node : block->nodes()) {
            for (torch::jit::Block* inner : node->blocks())
                blocks.push_back(inner);
            if (node->kind() != c10::prim::GetAttr)
                continue;
            const auto owner = objects.find(node->input(0));
            if (owner == objects.end() || !owner->second.isObject())
                continue;
            const auto& object = owner->second.toObjectRef();
            const std::string name = node->s(c10::attr::name);
            if (!object.type()->hasAttribute(name))
                continue;
            const c10::IValue value = object.getAttr(name);
            if (value.isObject()) {
                objects.emplace(node->output(), value);
            } else if (value.isBool() || value.isInt() || value.isDouble() || value.isString() || value.isNone()) {
                torch::jit::WithInsertPoint here(node);
                node->output()->replaceAllUsesWith(graph.insertConstant(value));
            }
        }
    }
}

// A copy of `graph` as the inventory reads it: helpers inlined (inlineHelpers, which a helper calling helpers needs
// repeatedly), and the branches that constants decide taken (the scripted F.softmax's `if dtype is None` with None
// passed; with `self`, also those its scalar attributes decide), so that the counts are the calls a forward makes.
// Branches on values known only when it runs (nn.MultiheadAttention's fast path) count both arms.
std::shared_ptr<torch::jit::Graph> inventoryGraph(const torch::jit::Graph& graph,
                                                  const torch::jit::Module* self = nullptr)
{
    std::shared_ptr<torch::jit::Graph> copy = const_cast<torch::jit::Graph&>(graph).copy(); // copy() reads only
    for (int round = 0; round < 16 && inlineHelpers(*copy->block()); ++round) {
    }
    if (self)
        foldScalarAttributes(*copy, *self);
    torch::jit::ConstantPropagationImmutableTypes(copy);
    return copy;
}

// What a forward calls: catalog functions, and the forwards of the modules below it (by path relative to it), each
// as often as the graph has call sites of it (a module called twice, as BasicBlock calls its ReLU, counts twice; a
// traced model calls forward, then forward1: also twice). A module's own functions are read from its forward and
// counted for each of its runs: a traced module's forward1 is a trace of the same code.
// `unresolved`: it calls the forward of a module it reaches through an interface (a container indexed at run time).
struct ForwardCalls {
    std::map<std::string, int> functions;
    std::map<std::pair<std::string, std::string>, int> forwards; // (relative path, method: forward, forward1, ...)
    bool unresolved = false;
};

// The module path relative to the forward's own module that each module-typed value holds (GetAttr chains from self).
using RelativePaths = std::unordered_map<const torch::jit::Value*, std::string>;

// The catalog calls and module forward calls of a block, its nested blocks and the subgraphs of the tasks it forks
// (torch.jit.fork: its subgraph takes the fork's inputs as its own).
void countCalls(const torch::jit::Block& block, ForwardCalls& calls, RelativePaths& paths, int depth,
                const torch::jit::Module* self)
{
    for (const torch::jit::Node* node : block.nodes()) {
        if (const auto* schema = node->maybeSchema())
            if (const auto function = functionOfOp(schema->name(), schema->overload_name(), factsOf(*node, self)))
                ++calls.functions[std::string(functionName(*function))];
        const auto owner = node->inputs().empty() ? paths.end() : paths.find(node->input(0));
        if (node->kind() == c10::prim::GetAttr && owner != paths.end() &&
            node->output()->type()->cast<c10::ClassType>())
            paths.emplace(node->output(), owner->second.empty() ? node->s(c10::attr::name)
                                                                : owner->second + "." + node->s(c10::attr::name));
        if (node->kind() == c10::prim::CallMethod && isForwardMethod(node->s(c10::attr::name))) {
            if (owner != paths.end() && !owner->second.empty())
                ++calls.forwards[{owner->second, node->s(c10::attr::name)}];
            else if (owner == paths.end())
                calls.unresolved = true;
        }
        if (depth < 16 && node->kind() == c10::prim::fork && node->hasAttribute(c10::attr::Subgraph)) {
            const auto subgraph = inventoryGraph(*node->g(c10::attr::Subgraph));
            for (size_t i = 0; i < node->inputs().size() && i < subgraph->inputs().size(); ++i)
                if (const auto it = paths.find(node->input(i)); it != paths.end())
                    paths.emplace(subgraph->inputs()[i], it->second);
            countCalls(*subgraph->block(), calls, paths, depth + 1, nullptr);
        }
        for (const torch::jit::Block* inner : node->blocks())
            countCalls(*inner, calls, paths, depth, self);
    }
}

ForwardCalls forwardCalls(const torch::jit::Graph& graph, const torch::jit::Module* self)
{
    ForwardCalls calls;
    const auto inventory = inventoryGraph(graph, self);
    RelativePaths paths{{inventory->inputs().at(0), ""}};
    countCalls(*inventory->block(), calls, paths, 0, self);
    return calls;
}

const torch::jit::Graph* forwardGraph(const torch::jit::Module& module, const std::string& name = "forward")
{
    const auto method = module.find_method(name);
    if (!method)
        return nullptr;
    return torch::jit::toGraphFunction(method->function()).graph().get();
}

// The module's forward methods: forward, and forward1, forward2, ... where a trace recorded calls of it that took
// other code (`self.blk(x, False) + self.blk(x, True)`).
std::vector<std::string> forwardMethodsOf(const torch::jit::Module& module)
{
    std::vector<std::string> names;
    for (int n = 0;; ++n) {
        const std::string name = n == 0 ? "forward" : "forward" + std::to_string(n);
        if (!module.find_method(name)) {
            if (n > 0)
                break;
            continue; // no forward (a ModuleList): none numbered either
        }
        names.push_back(name);
    }
    return names;
}

} // namespace

std::string readableTypeName(const std::string& qualifiedName)
{
    static const std::regex mangle("___torch_mangle_[0-9]+");
    std::string name = std::regex_replace(qualifiedName, mangle, "");
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
}

std::map<std::string, int> functionInventory(const torch::jit::Graph& graph, const torch::jit::Module* self)
{
    return forwardCalls(graph, self).functions;
}

std::vector<ModuleInfo> buildModuleTree(const torch::jit::Module& root)
{
    std::vector<ModuleInfo> tree;
    std::unordered_map<std::string, std::vector<HeldParameter>> held;
    // How often each module's forward runs per forward of the model: the root once, each other module the sum over
    // the forwards that call it of their runs times their call sites (callers come before callees in pre-order).
    std::unordered_map<std::string, int> runs{{"", 1}};
    // The same per forward method, and each module's own calls per forward of the model, summed over its methods.
    std::unordered_map<std::string, std::map<std::string, int>> methodRuns{{"", {{"forward", 1}}}};
    std::unordered_map<std::string, std::map<std::string, int>> ownCalls;
    bool unresolved = false;
    for (const auto& item : root.named_modules()) {
        ModuleInfo info;
        info.path = item.name;
        info.name = module_path::leafOf(info.path);
        info.depth = module_path::depthOf(info.path);
        info.qualifiedTypeName = item.value.type()->name() ? item.value.type()->name()->qualifiedName() : "";
        info.typeName = readableTypeName(info.qualifiedTypeName);
        for (const auto& p : item.value.named_parameters(/*recurse=*/false)) {
            const std::int64_t bytes = std::int64_t(p.value.numel()) * std::int64_t(p.value.element_size());
            info.parameterCount += p.value.numel();
            info.parameterBytes += bytes;
            // A tied weight is one tensor under several modules: its identity is the tensor, not the path.
            held[info.path].push_back({std::to_string(reinterpret_cast<std::uintptr_t>(p.value.unsafeGetTensorImpl())),
                                       p.value.numel(), bytes});
        }
        for (const auto& child : item.value.named_children())
            info.children.push_back(info.path.empty() ? child.name : info.path + "." + child.name);
        for (const std::string& method : forwardMethodsOf(item.value)) {
            const auto* graph = forwardGraph(item.value, method);
            if (!graph)
                continue;
            ForwardCalls calls = forwardCalls(*graph, &item.value);
            unresolved = unresolved || calls.unresolved;
            const int mine = methodRuns[info.path][method];
            // What the module calls in any of its forwards (a branch a run never takes counts as called).
            for (const auto& [function, sites] : calls.functions) {
                info.functions[function] = std::max(info.functions[function], sites);
                ownCalls[info.path][function] += mine * sites;
            }
            for (const auto& [callee, sites] : calls.forwards) {
                const std::string path = info.path.empty() ? callee.first : info.path + "." + callee.first;
                runs[path] += mine * sites;
                methodRuns[path][callee.second] += mine * sites;
            }
        }
        tree.push_back(std::move(info));
    }
    // A forward reached through an interface may be any module's: none is taken as never running (a warning that a
    // scope never runs must never be wrong).
    if (unresolved)
        for (const ModuleInfo& m : tree)
            if (runs[m.path] == 0) {
                runs[m.path] = 1;
                ownCalls.erase(m.path); // its functions once, as if it ran once
            }
    fillSubtreeSums(tree, held, runs, ownCalls);
    return tree;
}

bool looksFrozen(const torch::jit::Module& root)
{
    if (root.named_children().size() != 0 || root.named_parameters(false).size() != 0)
        return false;
    const auto* graph = forwardGraph(root);
    if (!graph)
        return false;
    for (const torch::jit::Node* node : graph->nodes())
        if (node->kind() == c10::prim::Constant && node->output()->type()->kind() == c10::TypeKind::TensorType)
            return true;
    // A frozen module without weights: freezing drops the `training` attribute every scripted module has and
    // gives the type a fresh mangled name (plain C++-built modules lack `training` too, hence both checks).
    const auto name = root.type()->name();
    return !root.hasattr("training") && name && name->qualifiedName().find("___torch_mangle_") != std::string::npos;
}

} // namespace kforge
