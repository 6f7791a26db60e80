// SPDX-License-Identifier: Apache-2.0
#pragma once
// Allocations and frees during a profile's measured forwards, through c10's memory reporting: the allocator reports
// each one to the thread's PROFILER_STATE debug info when it says memory profiling is on (the mechanism
// torch.profiler's profile_memory uses). Installed on the forward thread; each event is attributed to the module and
// function call open there (the host recorder's scopes). Never run alongside LibTorch's own profiler, which owns the
// same debug info. A CPU recorder hears the CPU allocator through its tap instead (cpu_allocator_tap.h: the same
// allocations without c10's size table) when the tap can be attached.
#include <kforge/profiling.h>

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kforge::profiling {

class MemoryRecorder {
public:
    // The module path and function open on the recording thread (interned strings; function null when none).
    using ScopeNow = std::function<std::pair<const char*, const char*>()>;
    // tapCpuAllocator: for a recording of the CPU (a CUDA run needs c10's reporting, its caching allocator reports).
    MemoryRecorder(ScopeNow scopeNow, bool tapCpuAllocator);
    ~MemoryRecorder();
    MemoryRecorder(const MemoryRecorder&) = delete;
    MemoryRecorder& operator=(const MemoryRecorder&) = delete;

    void setIteration(int iteration) { m_iteration = iteration; }
    std::vector<MemoryRecord> take(); // what was recorded so far, in time order
    bool tapsCpuAllocator() const;    // heard through the tap, not c10's reporting

private:
    class Reporter;
    std::shared_ptr<Reporter> m_reporter;
    std::optional<c10::DebugInfoGuard> m_guard;
    int m_iteration = 0;
};

} // namespace kforge::profiling
