// SPDX-License-Identifier: Apache-2.0
#pragma once
// torch.export packages (.pt2, written by torch.export.save or torch.export.pt2_archive._package.package_pt2): what a
// model holds, read from its serialized graph without running it. Each graph node records the modules it ran in
// (nn_module_stack) and the torch.nn.functional call it came from (torch_fn), so the module tree, the functions
// each module calls and every op's module and function come from the file itself (docs/design/pt2-nativert-notes.md).
// ModelSession::open runs .pt2 packages too (engine/src/model/exported_runner.h); this reads one without running it.
#include <kforge/module_info.h>

#include <string>
#include <vector>

namespace kforge {

// One node of the exported graph, in execution order.
struct ExportedNode {
    std::string name;       // "linear", "conv2d_3"
    std::string op;         // "aten::linear" (the node's target without the overload)
    std::string overload;   // "default", "Tensor", ...
    std::string modulePath; // the innermost module it ran in ("" = the root)
    // The catalog function it belongs to: from torch_fn when export decomposed a function (linear into t and
    // addmm: both nodes say linear), else from the op; "" when neither is in the catalog.
    std::string function;
    std::string functionCall; // torch_fn's call id ("linear_1"): nodes sharing it are one call of `function`
};

struct ExportedProgramInfo {
    std::string path;
    std::string program;      // the exported program's name in the package ("forward")
    std::string torchVersion; // that exported it
    // Pre-order in declaration order, the root (path "") first, as for TorchScript models. A module that never
    // runs (a ModuleList) has no type: the package records types only in the stacks of the nodes that ran.
    std::vector<ModuleInfo> modules;
    std::vector<ExportedNode> nodes;
    std::vector<std::string> inputNames; // the forward's user inputs
};

// Whether `path` names a .pt2 package (by its name: ".pt2").
bool isExportedProgramPath(const std::string& path);

// The names of the exported programs a package holds, in archive order: torch.export.save writes one, "model".
// kforge::Error when the file is missing or not a .pt2 package.
std::vector<std::string> exportedProgramNames(const std::string& path);

// The names of the AOTInductor compiled models a package holds beside its exported programs (torch.export.pt2_archive's
// package_pt2 with both; OpenOptions::compiled runs that code), in archive order; empty for a plain torch.export
// package. kforge::Error as exportedProgramNames.
std::vector<std::string> compiledModelNamesBeside(const std::string& path);

// Which program of `programs` (a package's) to open when asked for `requested`: that one; with none asked for, the
// package's only program, else "model" (torch.export.save's) or "forward". kforge::Error naming the file and every
// program it has when the one asked for is missing or the choice is ambiguous (then: --program NAME).
std::string chooseExportedProgram(const std::string& path, const std::vector<std::string>& programs,
                                  const std::string& requested);

// Reads a package's program `program` ("": chooseExportedProgram's default). kforge::Error naming the file when it is
// missing, not a .pt2 package, or lacks the program (the message lists the programs it has).
ExportedProgramInfo readExportedProgram(const std::string& path, const std::string& program = "");

} // namespace kforge
