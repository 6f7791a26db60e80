// SPDX-License-Identifier: Apache-2.0
#include "model/subtree_sums.h"

#include <set>
#include <utility>

namespace kforge {

void fillSubtreeSums(std::vector<ModuleInfo>& modules,
                     const std::unordered_map<std::string, std::vector<HeldParameter>>& held,
                     const std::unordered_map<std::string, int>& forwardRuns,
                     const std::unordered_map<std::string, std::map<std::string, int>>& ownCalls)
{
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < modules.size(); ++i)
        index.emplace(modules[i].path, i);
    std::unordered_map<std::string, std::pair<std::int64_t, std::int64_t>> sizeOf; // identity -> (count, bytes)
    for (const auto& [path, params] : held)
        for (const HeldParameter& p : params)
            sizeOf.emplace(p.identity, std::pair{p.count, p.bytes});
    // Children before parents: walk the pre-order backwards, each module taking the union of its children's sets.
    std::vector<std::set<std::string>> identities(modules.size());
    for (size_t i = modules.size(); i-- > 0;) {
        ModuleInfo& m = modules[i];
        const auto runs = forwardRuns.find(m.path);
        const int times = runs == forwardRuns.end() ? 1 : runs->second;
        m.subtreeFunctions.clear();
        if (const auto own = ownCalls.find(m.path); own != ownCalls.end()) {
            for (const auto& [function, calls] : own->second)
                if (calls > 0)
                    m.subtreeFunctions[function] = calls;
        } else {
            for (const auto& [function, calls] : m.functions)
                if (times > 0)
                    m.subtreeFunctions[function] = calls * times;
        }
        std::set<std::string>& mine = identities[i];
        if (const auto it = held.find(m.path); it != held.end())
            for (const HeldParameter& p : it->second)
                mine.insert(p.identity);
        for (const std::string& childPath : m.children) {
            const auto child = index.find(childPath);
            if (child == index.end() || child->second <= i)
                continue;
            for (const auto& [function, calls] : modules[child->second].subtreeFunctions)
                m.subtreeFunctions[function] += calls;
            mine.insert(identities[child->second].begin(), identities[child->second].end());
        }
        m.subtreeParameterCount = 0;
        m.subtreeParameterBytes = 0;
        for (const std::string& identity : mine) {
            m.subtreeParameterCount += sizeOf.at(identity).first;
            m.subtreeParameterBytes += sizeOf.at(identity).second;
        }
    }
}

} // namespace kforge
