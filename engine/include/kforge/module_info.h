// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kforge {

// One node of a model's module tree, as named_modules() spells it ("" is the root).
struct ModuleInfo {
    std::string path;
    std::string name;                // last path component; "" for the root
    std::string typeName;            // readable: "Block" (module and mangling stripped)
    std::string qualifiedTypeName;   // as TorchScript has it: "__torch__.Block___torch_mangle_3"
    std::int64_t parameterCount = 0; // this module's own parameters (not its children's)
    std::int64_t parameterBytes = 0;
    std::int64_t subtreeParameterCount = 0; // including every descendant
    std::int64_t subtreeParameterBytes = 0;
    std::vector<std::string> children;           // paths, in declaration order
    std::map<std::string, int> functions;        // function -> calls in this module's own forward graph
    std::map<std::string, int> subtreeFunctions; // the same, summed over the module and its descendants
    // Whether the module has a forward method (a ModuleList or ModuleDict has none), and whether the model's
    // forward calls it: a plan entry scoped to a module whose forward is never called is never installed.
    // Static (the root forward's call graph): a call under a branch that is never taken counts as called.
    bool hasForward = true;
    bool forwardCalled = true;
    int depth = 0;
};

// Whether two module trees are the same model's: the same paths, readable types and parameter counts, in the same
// order. A profile or a verification is shown on a module tree only when its modules are the tree's (a resnet18
// profile opened while resnet50 is loaded has layer1.0 too, and would paint its times on the wrong modules).
inline bool sameModuleTree(const std::vector<ModuleInfo>& a, const std::vector<ModuleInfo>& b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].path != b[i].path || a[i].typeName != b[i].typeName || a[i].parameterCount != b[i].parameterCount)
            return false;
    return true;
}

} // namespace kforge
