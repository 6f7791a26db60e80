// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <chrono>
#include <cstdint>

namespace kforge::runtime {

inline std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace kforge::runtime
