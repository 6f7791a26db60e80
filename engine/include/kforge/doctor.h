// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/runtime.h>

#include <string>
#include <vector>

namespace kforge {

// What `kforge doctor` and the About box report about this machine and build.
struct SystemReport {
    std::string kforgeVersion;
    std::string torchVersion;
    bool torchCudaBuild = false;
    std::string torchCudaVersion;         // CUDA version LibTorch was built for, "" for a CPU build
    std::vector<std::string> cudaDevices; // "0: NVIDIA H200 (sm_90, 139.8 GiB)"
    bool cuptiLinked = false;
    std::string cuptiVersion; // "130001"
    bool canTrace = false;    // a CUPTI kernel trace can run here
    std::string traceStatus;  // why or why not
    InterposerReport interposer;
};

SystemReport systemReport();

} // namespace kforge
