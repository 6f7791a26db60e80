// SPDX-License-Identifier: Apache-2.0
#include "model/module_tree.h"

#include "model/subtree_sums.h"

#include <kforge/functions.h>

#include <torch/csrc/jit/ir/constants.h>

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

// A tensor value's rank: from its type when the graph carries shapes, from the module attribute it reads, or through
// the ops that keep their first input's rank, so a weight computed at run time (weight_norm's _weight_norm(v, g)
// in a traced wav2vec2) has v's. -1 when unknown.
int rankOf(const torch::jit::Value* value, const torch::jit::Module* self, int depth = 0)
{
    if (const auto type = value->type()->cast<c10::TensorType>(); type && type->dim())
        return int(*type->dim());
    if (const c10::IValue attribute = attributeOf(value, self); attribute.isTensor())
        return int(attribute.toTensor().dim());
    static const std::unordered_set<std::string> keepRank{
        "aten::_weight_norm", "aten::mul", "aten::div",    "aten::add",   "aten::sub",
        "aten::contiguous",   "aten::to",  "aten::detach", "aten::clone", "aten::type_as"};
    const torch::jit::Node* node = value->node();
    if (depth < 8 && !node->inputs().empty() && keepRank.count(node->kind().toQualString()))
        return rankOf(node->input(0), self, depth + 1);
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
    facts.weightRank = rankOf(node.input(1), self);
    return facts;
}

// The catalog calls a module makes while no other module's forward runs (what a plan scoped to it serves, besides
// its descendants'): its forward's graph and, inside it, the scripted Python helpers it calls (prim::CallFunction:
// F.layer_norm, F.softmax), every method it calls other than a forward, on itself or on a submodule (nn.Conv2d's
// _conv_forward, timm attention's _attn: no module hook runs around them, so their calls are the caller's), and the
// subgraphs of the tasks it forks. A forward called on a submodule, or through an interface, is that module's own.
void countFunctions(const torch::jit::Block& block, std::map<std::string, int>& counts, int depth,
                    const torch::jit::Module* self)
{
    for (const torch::jit::Node* node : block.nodes()) {
        if (const auto* schema = node->maybeSchema())
            if (const auto function = functionOfOp(schema->name(), schema->overload_name(), factsOf(*node, self)))
                ++counts[std::string(functionName(*function))];
        if (depth < 16 && node->kind() == c10::prim::CallFunction)
            if (const auto fnType = node->input(0)->type()->cast<c10::FunctionType>())
                if (auto* graphFn = torch::jit::tryToGraphFunction(*fnType->function()))
                    countFunctions(*graphFn->graph()->block(), counts, depth + 1, nullptr);
        if (depth < 16 && node->kind() == c10::prim::CallMethod && node->s(c10::attr::name) != "forward")
            if (const auto type = node->input(0)->type()->cast<c10::ClassType>())
                if (torch::jit::Function* method = type->findMethod(node->s(c10::attr::name));
                    method && method->isGraphFunction()) {
                    const c10::IValue receiver = attributeOf(node->input(0), self);
                    const std::optional<torch::jit::Module> module =
                        receiver.isObject() ? std::optional(torch::jit::Module(receiver.toObject())) : std::nullopt;
                    countFunctions(*torch::jit::toGraphFunction(*method).graph()->block(), counts, depth + 1,
                                   module ? &*module : nullptr);
                }
        if (depth < 16 && node->kind() == c10::prim::fork && node->hasAttribute(c10::attr::Subgraph))
            countFunctions(*node->g(c10::attr::Subgraph)->block(), counts, depth + 1, nullptr);
        for (const torch::jit::Block* inner : node->blocks())
            countFunctions(*inner, counts, depth, self);
    }
}

const torch::jit::Graph* forwardGraph(const torch::jit::Module& module)
{
    const auto method = module.find_method("forward");
    if (!method)
        return nullptr;
    return torch::jit::toGraphFunction(method->function()).graph().get();
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
    std::map<std::string, int> counts;
    countFunctions(*graph.block(), counts, 0, self);
    return counts;
}

std::vector<ModuleInfo> buildModuleTree(const torch::jit::Module& root)
{
    std::vector<ModuleInfo> tree;
    std::unordered_map<std::string, std::vector<HeldParameter>> held;
    for (const auto& item : root.named_modules()) {
        ModuleInfo info;
        info.path = item.name;
        const auto dot = info.path.rfind('.');
        info.name = dot == std::string::npos ? info.path : info.path.substr(dot + 1);
        info.depth = info.path.empty() ? 0 : 1 + int(std::count(info.path.begin(), info.path.end(), '.'));
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
        if (const auto* graph = forwardGraph(item.value))
            info.functions = functionInventory(*graph, &item.value);
        tree.push_back(std::move(info));
    }
    fillSubtreeSums(tree, held);
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
