// SPDX-License-Identifier: Apache-2.0
#pragma once
// A cheaper way to see the CPU allocator's allocations and frees than c10's memory reporting. With reporting on,
// c10's CPU allocator keeps every live block's size in a hash table under a mutex so that a free can report its size:
// that bookkeeping alone made a profiled forward of a small transformer 3% dearer (bench_profiling --instructions).
// The tap instead wraps the CPU allocator while a listener is attached: an allocation made on a thread whose
// PROFILER_STATE debug info is an attached listener (the forward thread and the intra-op pool it hands work to) gets
// the tap's deleter, and the listener hears the block's address and size; its free is heard by address only (the
// listener pairs it with its allocation). Other threads' and other times' allocations pass through untouched.
#include <c10/core/Allocator.h>

#include <cstddef>

namespace kforge::profiling {

class CpuTapListener : public c10::MemoryReportingInfoBase {
public:
    virtual void cpuAllocated(void* data, std::size_t bytes) = 0;
    virtual void cpuFreed(void* data) = 0; // a block this listener or another heard allocated, or none did

private:
    friend bool attachCpuTap(CpuTapListener&);
    friend void detachCpuTap(CpuTapListener&);
    CpuTapListener* m_outerOnItsThread = nullptr; // the listener attached on its thread before it, put back after
};

// Wraps c10's CPU allocator on the first attach and puts it back on the last detach. attach() returns false, and
// changes nothing, when the CPU allocator's blocks are not plain (data and context differ, or its deleter is not its
// raw deleter: an allocator installed by a library), when it cannot be replaced, or when too many listeners are
// attached; the caller then relies on c10's reporting. The listener must be the thread's PROFILER_STATE debug info
// while it records, stay alive until detached, and be detached on the thread that attached it.
bool attachCpuTap(CpuTapListener& listener);
void detachCpuTap(CpuTapListener& listener);

} // namespace kforge::profiling
