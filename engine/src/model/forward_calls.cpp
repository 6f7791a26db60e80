// SPDX-License-Identifier: Apache-2.0
#include "model/forward_calls.h"

#include "model/graph_instrumentation.h"

#include <deque>
#include <set>
#include <unordered_map>

namespace kforge {
namespace {

std::string childPath(const std::string& parent, const std::string& name)
{
    return parent.empty() ? name : parent + "." + name;
}

bool isModuleValue(const torch::jit::Value* value)
{
    if (const auto cls = value->type()->cast<c10::ClassType>())
        return cls->is_module();
    if (const auto interface = value->type()->cast<c10::InterfaceType>())
        return interface->is_module();
    return false;
}

class CallGraph {
public:
    explicit CallGraph(const torch::jit::Module& root)
    {
        for (const auto& item : root.named_modules())
            m_modules.emplace(item.name, item.value);
        visit("", "forward");
        while (!m_queue.empty()) {
            const auto [path, method] = m_queue.front();
            m_queue.pop_front();
            walkMethod(path, method);
        }
    }

    bool forwardCalled(const std::string& path) const
    {
        for (auto it = m_visited.lower_bound({path, ""}); it != m_visited.end() && it->first == path; ++it)
            if (isForwardMethod(it->second))
                return true;
        return false;
    }
    bool unresolved() const { return m_unresolved; }

private:
    // A value's module path; for a container indexed at run time (prim::ModuleContainerIndex), the container's
    // path with `anyChild` set: a call on it may reach any of the container's children.
    struct Target {
        std::string path;
        bool anyChild = false;
    };
    using Paths = std::unordered_map<const torch::jit::Value*, Target>;

    void visit(const std::string& path, const std::string& method)
    {
        if (m_visited.insert({path, method}).second)
            m_queue.emplace_back(path, method);
    }

    void walkMethod(const std::string& path, const std::string& name)
    {
        const auto module = m_modules.find(path);
        if (module == m_modules.end())
            return;
        const auto method = module->second.find_method(name);
        if (!method)
            return;
        const auto graph = torch::jit::toGraphFunction(method->function()).graph();
        Paths paths{{graph->inputs().at(0), Target{path}}};
        walkBlock(*graph->block(), paths);
    }

    void walkBlock(const torch::jit::Block& block, Paths& paths)
    {
        for (const torch::jit::Node* node : block.nodes()) {
            const auto owner = node->inputs().empty() ? paths.end() : paths.find(node->input(0));
            const bool known = owner != paths.end() && !owner->second.anyChild;
            if (node->kind() == c10::prim::GetAttr && known) {
                std::string path = childPath(owner->second.path, node->s(c10::attr::name));
                if (m_modules.count(path))
                    paths.emplace(node->output(), Target{std::move(path)});
            } else if (node->kind() == c10::prim::ModuleContainerIndex && known) {
                paths.emplace(node->output(), Target{owner->second.path, true});
            } else if (node->kind() == c10::prim::CallMethod && owner != paths.end()) {
                const std::string method = node->s(c10::attr::name);
                if (!owner->second.anyChild)
                    visit(owner->second.path, method);
                else
                    for (const auto& child : m_modules.at(owner->second.path).named_children())
                        visit(childPath(owner->second.path, child.name), method);
            } else if (node->kind() == c10::prim::CallMethod && isModuleValue(node->input(0))) {
                m_unresolved = true;
            }
            for (const torch::jit::Block* inner : node->blocks())
                walkBlock(*inner, paths);
            // torch.jit.fork(fn, ...): the task's subgraph takes the fork's inputs (self, submodules) as its own.
            if (node->kind() == c10::prim::fork && node->hasAttribute(c10::attr::Subgraph)) {
                const auto subgraph = node->g(c10::attr::Subgraph);
                for (size_t i = 0; i < node->inputs().size() && i < subgraph->inputs().size(); ++i)
                    if (const auto it = paths.find(node->input(i)); it != paths.end()) {
                        Target target = it->second;
                        paths.emplace(subgraph->inputs()[i], std::move(target));
                    }
                walkBlock(*subgraph->block(), paths);
            }
        }
    }

    std::unordered_map<std::string, torch::jit::Module> m_modules;
    std::set<std::pair<std::string, std::string>> m_visited; // (module path, method) reached
    std::deque<std::pair<std::string, std::string>> m_queue;
    bool m_unresolved = false;
};

} // namespace

void markForwardCalls(const torch::jit::Module& root, std::vector<ModuleInfo>& modules)
{
    std::unordered_map<std::string, bool> hasForward;
    for (const auto& item : root.named_modules())
        hasForward[item.name] = item.value.find_method("forward").has_value();
    const CallGraph calls(root);
    for (ModuleInfo& m : modules) {
        const auto it = hasForward.find(m.path);
        m.hasForward = it == hasForward.end() || it->second;
        m.forwardCalled = m.path.empty() || (m.hasForward && (calls.unresolved() || calls.forwardCalled(m.path)));
    }
}

} // namespace kforge
