// SPDX-License-Identifier: Apache-2.0
#include "profiling/memory_recorder.h"

#include "profiling/cpu_allocator_tap.h"
#include "runtime/clock.h"
#include "runtime/string_pool.h"
#include "runtime/thread_state.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>

namespace kforge::profiling {
namespace {

// The tap hears a free by its block's address only: its size, and the live bytes after it, come from the block's
// allocation (c10 keeps them in its size table under a mutex as the allocator reports, which is what the tap saves).
// The blocks allocated and not yet freed are kept by address, open addressing with linear probes. A node-based map
// cost more per allocation than hearing it (a node allocated and freed for each block).
class LiveBlocks {
public:
    // c10 never reports a block of 0 bytes, nor does the tap: a free the tap heard, its size still to be found.
    static constexpr std::int64_t kFreeOfUnknownSize = 0;

    // Room for every allocation of a recording of so many events, with a slot always free.
    explicit LiveBlocks(std::size_t events)
    {
        std::size_t capacity = 16;
        while (capacity <= events)
            capacity *= 2;
        m_slots.resize(capacity);
        m_mask = capacity - 1;
    }

    // An event as heard, in time order: an allocation's bytes, or a free's (negative) from its allocation, and the
    // live bytes after it. False for a free of a block not heard allocated.
    bool size(std::int64_t& bytes, std::int64_t& liveAfter, std::uintptr_t address)
    {
        if (bytes != kFreeOfUnknownSize) {
            allocated(address, bytes);
            m_live += bytes;
        } else {
            const std::int64_t freedBytes = freed(address);
            if (freedBytes == 0)
                return false;
            bytes = -freedBytes;
            m_live -= freedBytes;
        }
        liveAfter = m_live;
        return true;
    }

private:
    void allocated(std::uintptr_t address, std::int64_t bytes)
    {
        // A block the recording never heard freed (freed by a thread not recording) may be handed out again: its
        // newer size replaces the older.
        m_slots[find(address)] = {address, bytes};
    }
    // Its size, forgotten; 0 when it was not heard allocated.
    std::int64_t freed(std::uintptr_t address)
    {
        std::size_t hole = find(address);
        if (m_slots[hole].address != address)
            return 0;
        const std::int64_t bytes = m_slots[hole].bytes;
        // Backward-shift deletion: the entries after it in the run move up where their probe may reach them, so
        // no tombstone is left (the allocator hands the same few addresses out again and again, and tombstones
        // made their chains grow with each reuse).
        for (std::size_t next = (hole + 1) & m_mask; m_slots[next].address != 0; next = (next + 1) & m_mask) {
            const std::size_t home = homeOf(m_slots[next].address);
            const bool reachable = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
            if (reachable)
                continue;
            m_slots[hole] = m_slots[next];
            hole = next;
        }
        m_slots[hole] = Slot{};
        return bytes;
    }

    struct Slot {
        std::uintptr_t address = 0; // 0: empty
        std::int64_t bytes = 0;
    };

    std::size_t homeOf(std::uintptr_t address) const
    {
        return std::size_t((address >> 4) * 0x9E3779B97F4A7C15ull >> 32) & m_mask;
    }
    // The slot holding the address, else the empty slot that ends its run.
    std::size_t find(std::uintptr_t address) const
    {
        std::size_t i = homeOf(address);
        while (m_slots[i].address != address && m_slots[i].address != 0)
            i = (i + 1) & m_mask;
        return i;
    }

    std::vector<Slot> m_slots;
    std::size_t m_mask = 0;
    std::int64_t m_live = 0;
};

} // namespace

class MemoryRecorder::Reporter final : public CpuTapListener {
public:
    Reporter(ScopeNow scopeNow, const int* iteration)
        : m_scopeNow(std::move(scopeNow)), m_iteration(iteration), m_thread(runtime::ThreadState::current().id())
    {
        m_samples.reserve(4096); // a forward of a small transformer reports about 500 times
    }

    // Set before the reporter becomes the thread's debug info: with the tap, c10 is told memory profiling is off, so
    // its CPU allocator keeps no size table (a CUDA run's caching allocator would report nothing either).
    void setTapped(bool tapped) { m_tapped = tapped; }
    bool tapped() const { return m_tapped; }

    bool memoryProfilingEnabled() const override { return !m_tapped; }

    void reportMemoryUsage(void* ptr, int64_t bytes, size_t totalAllocated, size_t totalReserved,
                           c10::Device device) override
    {
        record(ptr, bytes, int64_t(totalAllocated), device, int64_t(totalReserved));
    }
    void cpuAllocated(void* data, std::size_t bytes) override { record(data, int64_t(bytes), 0, c10::kCPU); }
    void cpuFreed(void* data) override { record(data, LiveBlocks::kFreeOfUnknownSize, 0, c10::kCPU); }

    std::vector<MemoryRecord> take()
    {
        std::vector<Sample> samples;
        {
            const SpinLock lock(m_busy);
            samples.swap(m_samples);
        }
        // In time order already unless another thread's report overtook one (the forward thread makes most).
        const auto earlier = [](const Sample& a, const Sample& b) { return a.timeNs < b.timeNs; };
        if (!std::is_sorted(samples.begin(), samples.end(), earlier))
            std::stable_sort(samples.begin(), samples.end(), earlier);
        std::optional<LiveBlocks> tappedBlocks;
        if (m_tapped)
            tappedBlocks.emplace(samples.size());
        std::vector<MemoryRecord> records;
        records.reserve(samples.size());
        c10::Device lastDevice = c10::kCPU;
        std::string_view deviceName = internedText(lastDevice.str());
        // Neighbours mostly share their names: measured once per change (interned, so equal pointers are equal text).
        const char *lastModule = nullptr, *lastFunction = nullptr;
        std::string_view moduleName, functionName;
        for (Sample& s : samples) {
            if (tappedBlocks && !tappedBlocks->size(s.bytes, s.totalAllocated, s.address))
                continue; // a free of a block allocated before the recording (c10 drops it too)
            if (s.device != lastDevice)
                deviceName = internedText((lastDevice = s.device).str());
            if (s.modulePath != lastModule)
                moduleName = (lastModule = s.modulePath) ? std::string_view(lastModule) : std::string_view();
            if (s.function != lastFunction)
                functionName = (lastFunction = s.function) ? std::string_view(lastFunction) : std::string_view();
            records.push_back({s.timeNs, s.bytes, s.totalAllocated, moduleName, functionName, deviceName, s.thread,
                               s.iteration, s.address, /*driver=*/false, s.totalReserved});
        }
        return records;
    }

private:
    void record(void* ptr, std::int64_t bytes, std::int64_t totalAllocated, c10::Device device,
                std::int64_t totalReserved = 0)
    {
        const std::uint64_t thread = runtime::ThreadState::current().id();
        Sample sample{runtime::nowNs(), bytes,        totalAllocated,
                      nullptr,          nullptr,      device,
                      thread,           *m_iteration, reinterpret_cast<std::uintptr_t>(ptr),
                      totalReserved};
        if (thread == m_thread) // the scopes are the forward thread's
            std::tie(sample.modulePath, sample.function) = m_scopeNow();
        const SpinLock lock(m_busy);
        m_samples.push_back(sample);
    }

    // As reported: no allocation of our own while the allocator reports (a std::string here would report again).
    struct Sample {
        std::int64_t timeNs, bytes, totalAllocated;
        const char* modulePath;
        const char* function;
        c10::Device device;
        std::uint64_t thread;
        int iteration;
        std::uintptr_t address;
        std::int64_t totalReserved;
    };
    // Reports come from the forward thread and, rarely, the intra-op pool: a spin lock, as it is almost never
    // contended (a mutex's lock and unlock were a fifth of what a report cost, bench_profiling --instructions).
    class SpinLock {
    public:
        explicit SpinLock(std::atomic_flag& busy) : m_busy(busy)
        {
            while (m_busy.test_and_set(std::memory_order_acquire))
                std::this_thread::yield();
        }
        ~SpinLock() { m_busy.clear(std::memory_order_release); }
        SpinLock(const SpinLock&) = delete;
        SpinLock& operator=(const SpinLock&) = delete;

    private:
        std::atomic_flag& m_busy;
    };

    ScopeNow m_scopeNow;
    const int* m_iteration;
    std::uint64_t m_thread;
    bool m_tapped = false;
    std::atomic_flag m_busy = ATOMIC_FLAG_INIT;
    std::vector<Sample> m_samples;
};

MemoryRecorder::MemoryRecorder(ScopeNow scopeNow, bool tapCpuAllocator)
    : m_reporter(std::make_shared<Reporter>(std::move(scopeNow), &m_iteration))
{
    if (tapCpuAllocator)
        m_reporter->setTapped(attachCpuTap(*m_reporter));
    m_guard.emplace(c10::DebugInfoKind::PROFILER_STATE, m_reporter);
}

MemoryRecorder::~MemoryRecorder()
{
    m_guard.reset();
    if (m_reporter->tapped())
        detachCpuTap(*m_reporter);
}

bool MemoryRecorder::tapsCpuAllocator() const { return m_reporter->tapped(); }

std::vector<MemoryRecord> MemoryRecorder::take() { return m_reporter->take(); }

} // namespace kforge::profiling

// MemoryRecord's names (public, kforge/profiling.h): the runtime's pool, which never frees.
std::string_view kforge::internedText(std::string_view text) { return runtime::intern(text); }
