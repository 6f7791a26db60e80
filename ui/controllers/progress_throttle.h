// SPDX-License-Identifier: Apache-2.0
#pragma once
// How often a measurement's worker sends progress to the UI thread: the first and last step, and otherwise at most
// every kProgressIntervalMs. Each message repaints a progress bar and the status bar on the UI thread, which then
// competes with the forwards being timed for the same cores (a tiny-gpt compare sent 26 in 100 ms).
#include <chrono>

namespace kforge::ui {

inline constexpr int kProgressIntervalMs = 100;

class ProgressThrottle {
public:
    // Called on the worker, one step at a time: whether this step is worth telling the UI thread about.
    bool due(int done, int total)
    {
        const auto now = std::chrono::steady_clock::now();
        if (done > 1 && done < total && now - m_last < std::chrono::milliseconds(kProgressIntervalMs))
            return false;
        m_last = now;
        return true;
    }

private:
    std::chrono::steady_clock::time_point m_last{};
};

} // namespace kforge::ui
