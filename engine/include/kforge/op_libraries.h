// SPDX-License-Identifier: Apache-2.0
#pragma once
// Op libraries: shared libraries that register custom TorchScript ops with TORCH_LIBRARY (torchvision's nms and
// roi_align, a team's own kernels). A model that calls such an op loads only once its library is loaded in the process
// (`kforge --ops-library LIB.so`, folders listed in KFORGE_OPS_PATH, the desktop's preference): LibTorch resolves every
// op of the model's code when it loads the file.
#include <string>
#include <vector>

namespace kforge {

struct OpLibraryInfo {
    std::string path;             // as loaded (canonical)
    std::vector<std::string> ops; // the ops it registered: "torchvision::nms", ...
};

// Loads one op library (dlopen). A file that cannot be loaded is a kforge::Error naming it and the loader's reason;
// loading the same file again returns what the first load registered.
OpLibraryInfo loadOpLibrary(const std::string& path);

// Loads every *.so in the folders of KFORGE_OPS_PATH (':'-separated). Failures do not stop the others; their messages
// are appended to `errors`.
std::vector<OpLibraryInfo> loadOpLibrariesFromEnvironment(std::vector<std::string>& errors);

std::vector<OpLibraryInfo> loadedOpLibraries();

} // namespace kforge
