// SPDX-License-Identifier: Apache-2.0
#include "profiling/memory_recorder.h"

#include "runtime/clock.h"
#include "runtime/thread_state.h"

#include <algorithm>
#include <string>

namespace kforge::profiling {

class MemoryRecorder::Reporter final : public c10::MemoryReportingInfoBase {
public:
    Reporter(ScopeNow scopeNow, const int* iteration)
        : m_scopeNow(std::move(scopeNow)), m_iteration(iteration), m_thread(runtime::ThreadState::current().id())
    {
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
        const std::lock_guard lock(m_mutex);
        m_samples.push_back(sample);
    }

    std::vector<MemoryRecord> take()
    {
        std::vector<Sample> samples;
        {
            const std::lock_guard lock(m_mutex);
            samples.swap(m_samples);
        }
        std::stable_sort(samples.begin(), samples.end(),
                         [](const Sample& a, const Sample& b) { return a.timeNs < b.timeNs; });
        std::vector<MemoryRecord> records;
        records.reserve(samples.size());
        for (const Sample& s : samples)
            records.push_back({s.timeNs, s.bytes, s.totalAllocated, s.modulePath ? s.modulePath : "",
                               s.function ? s.function : "", s.device.str(), s.thread, s.iteration, s.address});
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
    ScopeNow m_scopeNow;
    const int* m_iteration;
    std::uint64_t m_thread;
    std::mutex m_mutex;
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
