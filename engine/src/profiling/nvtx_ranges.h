// SPDX-License-Identifier: Apache-2.0
#pragma once
// NVTX ranges for module scopes and function calls, so Nsight Systems shows the module tree and the
// intercepted calls on the timeline (domain "KernelForge"). NVTX v3 is header-only (<nvtx3/nvToolsExt.h> from
// the CUDA toolkit): without a tool attached each call is a cheap check. In a build without CUDA they are
// no-ops. Ranges nest per thread; the depth is tracked so a failed forward can close what it left open.
#include <cstddef>
#include <string>

namespace kforge::profiling::nvtx {

// NVTX calls are built into this engine.
bool compiledIn();

// "module blocks.0" ("module <root>" for the root); "function linear [TorchSDPAKernelProvider]".
std::string moduleRangeName(const std::string& modulePath);
std::string functionRangeName(const std::string& function, const std::string& provider);

void pushModuleScope(const std::string& modulePath);
void pushFunctionCall(const std::string& function, const std::string& provider);
void pushRange(const char* message); // any other range, in the same domain
// Closes the innermost range of this thread; false when none is open.
bool pop();
std::size_t depth(); // open ranges on this thread
void popAll();       // closes them all

// RAII: a module scope range.
class ModuleRange {
public:
    explicit ModuleRange(const std::string& modulePath) { pushModuleScope(modulePath); }
    ~ModuleRange() { pop(); }
    ModuleRange(const ModuleRange&) = delete;
    ModuleRange& operator=(const ModuleRange&) = delete;
};

// RAII: a function-call range.
class FunctionRange {
public:
    FunctionRange(const std::string& function, const std::string& provider) { pushFunctionCall(function, provider); }
    ~FunctionRange() { pop(); }
    FunctionRange(const FunctionRange&) = delete;
    FunctionRange& operator=(const FunctionRange&) = delete;
};

} // namespace kforge::profiling::nvtx
