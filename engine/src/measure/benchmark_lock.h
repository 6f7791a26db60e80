// SPDX-License-Identifier: Apache-2.0
#pragma once
// Generation runs while make_plan evaluates providers, but two timings must never overlap: on a machine with few
// cores each would steal the other's threads, and a generator tuning thread counts would learn that one thread is
// best. make_plan's benchmarks and the CPU autotuner's measurements hold this lock while they time.
#include <mutex>

namespace kforge::measure {

inline std::mutex& benchmarkMutex()
{
    static std::mutex mutex;
    return mutex;
}

} // namespace kforge::measure
