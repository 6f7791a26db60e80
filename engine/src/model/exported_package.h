// SPDX-License-Identifier: Apache-2.0
#pragma once
// The records of a torch.export package (.pt2) that the engine reads: the serialized program, the configs of its
// weights and constants, and the raw bytes they point at (docs/design/pt2-nativert-notes.md, section 1).
#include "common/json_text.h"

#include <kforge/exported_program.h>

#include <caffe2/serialize/inline_container.h>

#include <memory>
#include <string>
#include <vector>

namespace kforge {

struct ExportedPackage {
    std::string path;
    std::string program;            // "model" (torch.export.save), "forward", ...
    nlohmann::json model;           // models/<program>.json
    nlohmann::json weightsConfig;   // data/weights/<program>_weights_config.json; null when absent
    nlohmann::json constantsConfig; // data/constants/<program>_constants_config.json; null when absent
    std::shared_ptr<caffe2::serialize::PyTorchStreamReader> reader;

    std::string text(const std::string& record) const;
    bool has(const std::string& record) const;
};

// kforge::Error naming the file when it is missing, not a .pt2 package, or lacks the program (the message lists
// the programs it has). `program` "": chooseExportedProgram's default.
ExportedPackage openExportedPackage(const std::string& path, const std::string& program);
// What readExportedProgram returns, from an open package.
ExportedProgramInfo describeExportedProgram(const ExportedPackage& package);

// A model an AOTInductor package (torch._inductor.aoti_compile_and_package) holds as compiled code.
struct CompiledModel {
    std::string name;          // "model": data/aotinductor/<name>/
    bool cuda = false;         // compiled for CUDA (it holds .cubin kernels), else for the CPU
    std::string wrapperSource; // the record of the C++ its code was generated as ("" when the package keeps none)
};
// The compiled models of a .pt2 that holds no exported program; empty for a torch.export package. kforge::Error as
// openExportedPackage for a missing or unreadable file.
std::vector<CompiledModel> compiledModelsIn(const std::string& path);
// The compiled models an open package holds beside its exported programs (torch.export.pt2_archive's package_pt2
// with both); empty when it holds none.
std::vector<CompiledModel> compiledModelsBeside(const ExportedPackage& package);

} // namespace kforge
