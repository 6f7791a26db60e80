// SPDX-License-Identifier: Apache-2.0
#include "model/exported_cond_branches.h"

#include <kforge/module_path.h>

#include "model/exported_metadata.h"

#include <algorithm>

namespace kforge {
namespace {

using nlohmann::json;

std::string quotedScope(const std::string& path) { return path.empty() ? "\"\" (the root)" : "'" + path + "'"; }

// Graph input name -> the module holding the weight, buffer or constant it binds ("p_gate_hot_weight" -> "gate.hot").
std::map<std::string, std::string> ownersOfStoredInputs(const json& signature)
{
    std::map<std::string, std::string> owners;
    for (const json& spec : signature.value("input_specs", json::array())) {
        if (!spec.is_object() || spec.empty())
            continue;
        const json& body = spec.begin().value();
        for (const char* key : {"parameter_name", "buffer_name", "tensor_constant_name"})
            if (body.contains(key) && body.contains("arg"))
                owners[body.at("arg").value("name", "")] =
                    std::string(module_path::parentOf(body.at(key).get<std::string>()));
    }
    return owners;
}

} // namespace

std::map<std::string, std::string> condBranchModules(const ExportedPackage& package,
                                                     const std::vector<ModuleInfo>& modules)
{
    std::map<std::string, const ModuleInfo*> byPath;
    for (const ModuleInfo& m : modules)
        byPath[m.path] = &m;
    const auto runsNoNode = [&](const std::string& path) {
        const auto it = byPath.find(path);
        return it != byPath.end() && !it->second->forwardCalled;
    };
    std::map<std::string, std::string> branches;
    const json& graphModule = package.model.at("graph_module");
    const auto owners = ownersOfStoredInputs(graphModule.at("signature"));
    for (const json& node : graphModule.at("graph").at("nodes")) {
        if (node.value("target", "") != "torch.ops.higher_order.cond")
            continue;
        const auto stack = exportedModuleStack(node.value("metadata", json::object()).value("nn_module_stack", ""));
        const std::string holder = stack.empty() ? std::string() : stack.back().path;
        for (const json& input : node.value("inputs", json::array())) {
            const json arg = input.value("arg", json::object());
            for (const json& operand : arg.value("as_tensors", json::array())) {
                const auto owner = owners.find(operand.value("name", ""));
                if (owner == owners.end())
                    continue;
                for (std::string path = owner->second; module_path::isBelow(path, holder);
                     path = std::string(module_path::parentOf(path)))
                    if (runsNoNode(path))
                        branches.emplace(path, holder);
            }
        }
    }
    for (const ModuleInfo& m : modules) { // pre-order: a parent is settled before its children
        const auto parent = branches.find(std::string(module_path::parentOf(m.path)));
        if (!m.path.empty() && !m.forwardCalled && parent != branches.end())
            branches.emplace(m.path, parent->second);
    }
    return branches;
}

std::vector<std::string> condBranchNotes(const std::map<std::string, std::string>& branches)
{
    std::map<std::string, std::vector<std::string>> byHolder;
    for (const auto& [path, holder] : branches)
        byHolder[holder].push_back(path);
    std::vector<std::string> notes;
    for (const auto& [holder, paths] : byHolder) {
        std::string list;
        for (const std::string& path : paths)
            list += (list.empty() ? "" : ", ") + quotedScope(path);
        notes.push_back(list + (paths.size() == 1 ? " runs" : " run") + " inside torch.cond branches of " +
                        quotedScope(holder) +
                        ": export records no module stack inside cond branches, so their calls are " +
                        quotedScope(holder) + "'s and a scope of their own is never entered; plan them with scope " +
                        quotedScope(holder) + " (the module holding the cond)");
    }
    return notes;
}

std::string condBranchScopeMessage(const ModuleInfo& module, const std::string& holder)
{
    const std::string type = module.typeName.empty() ? std::string() : " (" + module.typeName + ")";
    return "'" + module.path + "'" + type + " runs inside a torch.cond branch of " + quotedScope(holder) +
           ": export records no module stack inside cond branches, so the scope is never entered";
}

std::string condBranchScopeFix(const std::string& holder)
{
    return "use the scope " + quotedScope(holder) + " (the module holding the cond), where the branch's calls run";
}

} // namespace kforge
