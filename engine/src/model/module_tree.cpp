// SPDX-License-Identifier: Apache-2.0
#include "model/module_tree.h"

#include <kforge/functions.h>

#include <torch/csrc/jit/ir/constants.h>

#include <regex>
#include <unordered_map>

namespace kforge {
namespace {

// What a shared form's call (_convolution) is, from the graph: the weight's rank, from the module attribute
// it reads (prim::GetAttr on the graph's `self`) when the graph carries no shapes, and the constant `transposed`.
OpCallFacts factsOf(const torch::jit::Node& node, const torch::jit::Module* self)
{
    OpCallFacts facts;
    if (node.inputs().size() < 7)
        return facts;
    if (const auto transposed = torch::jit::toIValue(node.input(6)); transposed && transposed->isBool())
        facts.transposed = transposed->toBool();
    const torch::jit::Value* weight = node.input(1);
    if (const auto type = weight->type()->cast<c10::TensorType>(); type && type->dim())
        facts.weightRank = int(*type->dim());
    else if (self && weight->node()->kind() == c10::prim::GetAttr &&
             weight->node()->input()->node()->kind() == c10::prim::Param)
        if (const auto value = self->attr(weight->node()->s(c10::attr::name), c10::IValue()); value.isTensor())
            facts.weightRank = int(value.toTensor().dim());
    return facts;
}

void countFunctions(const torch::jit::Block& block, std::map<std::string, int>& counts, int depth,
                    const torch::jit::Module* self)
{
    for (const torch::jit::Node* node : block.nodes()) {
        if (const auto* schema = node->maybeSchema())
            if (const auto function = functionOfOp(schema->name(), schema->overload_name(), factsOf(*node, self)))
                ++counts[std::string(functionName(*function))];
        // Scripted Python helpers (F.layer_norm, F.softmax, ...) are prim::CallFunction: they belong to this
        // module's forward, so look inside them (not into prim::CallMethod: that is a child module's).
        if (node->kind() == c10::prim::CallFunction && depth < 16)
            if (const auto fnType = node->input(0)->type()->cast<c10::FunctionType>())
                if (auto* graphFn = torch::jit::tryToGraphFunction(*fnType->function()))
                    countFunctions(*graphFn->graph()->block(), counts, depth + 1, nullptr);
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
    std::unordered_map<std::string, size_t> index;
    for (const auto& item : root.named_modules()) {
        ModuleInfo info;
        info.path = item.name;
        const auto dot = info.path.rfind('.');
        info.name = dot == std::string::npos ? info.path : info.path.substr(dot + 1);
        info.depth = info.path.empty() ? 0 : 1 + int(std::count(info.path.begin(), info.path.end(), '.'));
        info.qualifiedTypeName = item.value.type()->name() ? item.value.type()->name()->qualifiedName() : "";
        info.typeName = readableTypeName(info.qualifiedTypeName);
        for (const auto& p : item.value.named_parameters(/*recurse=*/false)) {
            info.parameterCount += p.value.numel();
            info.parameterBytes += int64_t(p.value.numel()) * int64_t(p.value.element_size());
        }
        for (const auto& child : item.value.named_children())
            info.children.push_back(info.path.empty() ? child.name : info.path + "." + child.name);
        if (const auto* graph = forwardGraph(item.value))
            info.functions = functionInventory(*graph, &item.value);
        index[info.path] = tree.size();
        tree.push_back(std::move(info));
    }
    // Subtree sums, children before parents: named_modules() is pre-order, so walk it backwards.
    for (auto it = tree.rbegin(); it != tree.rend(); ++it) {
        it->subtreeParameterCount += it->parameterCount;
        it->subtreeParameterBytes += it->parameterBytes;
        for (const auto& [fn, n] : it->functions)
            it->subtreeFunctions[fn] += n;
        for (const auto& childPath : it->children) {
            const ModuleInfo& child = tree[index.at(childPath)];
            it->subtreeParameterCount += child.subtreeParameterCount;
            it->subtreeParameterBytes += child.subtreeParameterBytes;
            for (const auto& [fn, n] : child.subtreeFunctions)
                it->subtreeFunctions[fn] += n;
        }
    }
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
