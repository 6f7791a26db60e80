// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA side of a profile run: CUPTI activity tracing for the duration of the measured forwards, with
// the host recorder's module scopes and function calls pushed as external correlation ids.
#include "profiling/host_recorder.h"

#include <memory>
#include <string>
#include <vector>

namespace kforge::profiling {

class CudaProfiling {
public:
    static bool available(std::string* why);
    static std::string deviceName();
    static std::string cuptiVersion();

    // Starts tracing; throws kforge::Error. `deviceMemory`: CUPTI's memory records too (deviceMemory() after finish).
    explicit CudaProfiling(HostRecorder& recorder, bool deviceMemory = false);
    // Module scopes and function calls of `recorder` push CUPTI external ids (and NVTX ranges) without
    // tracing: what a graph capture needs so that its nodes remember their scope.
    static void pushScopesFrom(HostRecorder& recorder);
    // Graph nodes created from now on are mapped to the scope ids current on the capturing thread.
    static void trackGraphNodes(bool on);
    // Host tables of an earlier capture, for attributing the kernels of its replays.
    void addHostTables(const std::unordered_map<std::uint64_t, FunctionCallInfo>& functionCalls,
                       const std::unordered_map<std::uint64_t, std::string>& moduleScopes);
    ~CudaProfiling();
    void synchronize();                                       // waits for the device to finish the traced work
    std::vector<KernelRecord> finish(std::uint64_t& dropped); // stops tracing, attributes the records
    // After finish(), with deviceMemory: the driver's allocations and releases (MemoryRecord::driver), attributed.
    std::vector<MemoryRecord> takeDeviceMemory();

    struct Impl;

private:
    HostRecorder& m_recorder;
    std::unique_ptr<Impl> m_impl;
};

} // namespace kforge::profiling
