// SPDX-License-Identifier: Apache-2.0
#pragma once
// A competing load, as a user's machine has one (an IDE indexing, a browser, a build): `busyThreads` threads that
// spin all the time, and every `periodMs` a burst of `burstThreads` more spinning for `burstMs`. The calibrations of
// docs/verify.md run under it (bench_speed_verdict --load, bench/aa_under_load.sh through competing_load).
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace kforge_bench {

class CompetingLoad {
public:
    CompetingLoad(int busyThreads, int burstThreads = 0, int burstMs = 0, int periodMs = 0)
    {
        for (int i = 0; i < busyThreads; ++i)
            m_threads.emplace_back([this] { spinWhile([this] { return !m_stop.load(); }); });
        if (burstThreads > 0 && burstMs > 0 && periodMs > burstMs)
            for (int i = 0; i < burstThreads; ++i)
                m_threads.emplace_back([this, burstMs, periodMs] { bursts(burstMs, periodMs); });
    }
    ~CompetingLoad()
    {
        m_stop = true;
        for (std::thread& t : m_threads)
            t.join();
    }
    CompetingLoad(const CompetingLoad&) = delete;
    CompetingLoad& operator=(const CompetingLoad&) = delete;

private:
    template <typename Condition> static void spinWhile(Condition keepGoing)
    {
        volatile double sink = 1.0;
        while (keepGoing())
            for (int i = 0; i < 10000; ++i)
                sink = sink * 1.0000001 + 1e-9;
    }
    void bursts(int burstMs, int periodMs)
    {
        using Clock = std::chrono::steady_clock;
        while (!m_stop) {
            const auto until = Clock::now() + std::chrono::milliseconds(burstMs);
            spinWhile([&] { return !m_stop.load() && Clock::now() < until; });
            std::this_thread::sleep_for(std::chrono::milliseconds(periodMs - burstMs));
        }
    }

    std::atomic<bool> m_stop{false};
    std::vector<std::thread> m_threads;
};

} // namespace kforge_bench
