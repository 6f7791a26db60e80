// SPDX-License-Identifier: Apache-2.0
#include "model/exported_decompositions.h"

#include <kforge/functions.h>
#include <kforge/module_path.h>

#include "model/exported_metadata.h"

#include <set>

namespace kforge {
namespace {

// "aten::addmm" -> "addmm", added once: the ops of a call read "permute + addmm".
void addDecomposedOp(std::string& ops, const std::string& op)
{
    const auto colons = op.find("::");
    const std::string name = colons == std::string::npos ? op : op.substr(colons + 2);
    if (("+ " + ops + " +").find(" " + name + " ") == std::string::npos)
        ops += (ops.empty() ? "" : " + ") + name;
}

} // namespace

int ExportedDecompositions::callsWithin(const std::string& scope, const std::string& function) const
{
    const auto module = m_callsWithin.find(scope);
    if (module == m_callsWithin.end())
        return 0;
    const auto calls = module->second.find(function);
    return calls == module->second.end() ? 0 : calls->second;
}

std::string ExportedDecompositions::opsOf(const std::string& function) const
{
    const auto it = m_ops.find(function);
    return it == m_ops.end() ? std::string() : it->second;
}

ExportedDecompositions exportedDecompositions(const ExportedProgramInfo& program)
{
    ExportedDecompositions out;
    std::set<std::string> counted;                    // module, function and call id of each call counted
    std::map<std::string, std::string> describedCall; // function -> the call whose ops describe it
    for (const ExportedNode& node : program.nodes) {
        const auto function = node.function.empty() ? std::nullopt : functionFromName(node.function);
        if (!function || isCatalogFormOf(node.op, node.overload == "default" ? "" : node.overload, *function))
            continue;
        if (const auto [it, first] = describedCall.emplace(node.function, node.functionCall);
            first || it->second == node.functionCall)
            addDecomposedOp(out.m_ops[node.function], node.op);
        if (!counted.insert(node.modulePath + '\0' + node.function + '\0' + node.functionCall).second)
            continue;
        ++out.m_callsWithin[node.modulePath][node.function];
        for (const std::string_view above : module_path::ancestorsOf(node.modulePath))
            ++out.m_callsWithin[std::string(above)][node.function];
    }
    return out;
}

} // namespace kforge
