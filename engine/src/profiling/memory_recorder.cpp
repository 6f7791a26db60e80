// SPDX-License-Identifier: Apache-2.0
#include "profiling/memory_recorder.h"

#include "runtime/clock.h"
#include "runtime/string_pool.h"
#include "runtime/thread_state.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>

namespace kforge::profiling {

class MemoryRecorder::Reporter final : public c10::MemoryReportingInfoBase {
public:
    Reporter(ScopeNow scopeNow, const int* iteration)
        : m_scopeNow(std::move(scopeNow)), m_iteration(iteration), m_thread(runtime::ThreadState::current().id())
    {
        m_samples.reserve(4096); // a forward of a small transformer reports about 500 times
    }

    bool memoryProfilingEnabled() const override { return true; }

    void reportMemoryUsage(void* ptr, int64_t bytes, size_t totalAllocated, size_t /*totalReserved*/,
                           c10::Device device) override
    {
        const std::uint64_t thread = runtime::ThreadState::current().id();
        Sample sample{runtime::nowNs(), bytes,        int64_t(totalAllocated),
                      nullptr,          nullptr,      device,
                      thread,           *m_iteration, reinterpret_cast<std::uintptr_t>(ptr)};
        if (thread == m_thread) // the scopes are the forward thread's
            std::tie(sample.modulePath, sample.function) = m_scopeNow();
        const SpinLock lock(m_busy);
        m_samples.push_back(sample);
    }

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
        std::vector<MemoryRecord> records;
        records.reserve(samples.size());
        c10::Device lastDevice = c10::kCPU;
        std::string_view deviceName = internedText(lastDevice.str());
        // Neighbours mostly share their names: measured once per change (interned, so equal pointers are equal text).
        const char *lastModule = nullptr, *lastFunction = nullptr;
        std::string_view moduleName, functionName;
        for (const Sample& s : samples) {
            if (s.device != lastDevice)
                deviceName = internedText((lastDevice = s.device).str());
            if (s.modulePath != lastModule)
                moduleName = (lastModule = s.modulePath) ? std::string_view(lastModule) : std::string_view();
            if (s.function != lastFunction)
                functionName = (lastFunction = s.function) ? std::string_view(lastFunction) : std::string_view();
            records.push_back({s.timeNs, s.bytes, s.totalAllocated, moduleName, functionName, deviceName, s.thread,
                               s.iteration, s.address});
        }
        return records;
    }

private:
    // As reported: no allocation of our own while the allocator reports (a std::string here would report again).
    struct Sample {
        std::int64_t timeNs, bytes, totalAllocated;
        const char* modulePath;
        const char* function;
        c10::Device device;
        std::uint64_t thread;
        int iteration;
        std::uintptr_t address;
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
    std::atomic_flag m_busy = ATOMIC_FLAG_INIT;
    std::vector<Sample> m_samples;
};

MemoryRecorder::MemoryRecorder(ScopeNow scopeNow)
    : m_reporter(std::make_shared<Reporter>(std::move(scopeNow), &m_iteration))
{
    m_guard.emplace(c10::DebugInfoKind::PROFILER_STATE, m_reporter);
}

MemoryRecorder::~MemoryRecorder() = default;

std::vector<MemoryRecord> MemoryRecorder::take() { return m_reporter->take(); }

} // namespace kforge::profiling

// MemoryRecord's names (public, kforge/profiling.h): the runtime's pool, which never frees.
std::string_view kforge::internedText(std::string_view text) { return runtime::intern(text); }
