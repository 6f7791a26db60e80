// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

namespace kforge::profiling {

struct CuptiInfo {
    bool linked = false;
    std::string version;
    bool canTrace = false;
    std::string status;
};

// Asks CUPTI (the library the LibTorch wheel ships) for its version; tracing needs a CUDA device.
CuptiInfo cuptiInfo(bool haveCudaDevice);
bool torchBuiltWithCuda();
std::string torchCudaVersion();

} // namespace kforge::profiling
