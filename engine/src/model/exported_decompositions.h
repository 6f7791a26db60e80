// SPDX-License-Identifier: Apache-2.0
#pragma once
// The calls of catalog functions a .pt2 program holds decomposed into other ops (ep.run_decompositions(), or
// torchao's unwrap_tensor_subclass: linear as permute + addmm). They run as the original: no op of such a call takes
// the function's arguments, so no provider can serve it, and a plan entry for it can never fire.
#include <kforge/exported_program.h>

#include <map>
#include <string>

namespace kforge {

class ExportedDecompositions {
public:
    // The decomposed calls of one forward made in `scope` or below it.
    int callsWithin(const std::string& scope, const std::string& function) const;
    // The ops of a decomposed call of `function`: "permute + addmm"; "" when none is decomposed.
    std::string opsOf(const std::string& function) const;

    friend ExportedDecompositions exportedDecompositions(const ExportedProgramInfo& program);

private:
    std::map<std::string, std::map<std::string, int>> m_callsWithin; // module path -> function -> calls in its subtree
    std::map<std::string, std::string> m_ops;
};

ExportedDecompositions exportedDecompositions(const ExportedProgramInfo& program);

} // namespace kforge
