// SPDX-License-Identifier: Apache-2.0
#pragma once
// Progress and cancel, one spelling for every long engine call (profile, benchmark, forwardMany, optimize): called
// with (units done, units in all) after each unit of work (a forward, a benchmark round, a function tried); returning
// false stops the call after the current unit. An empty callback never stops it.
#include <functional>

namespace kforge {

using ProgressCallback = std::function<bool(int done, int total)>;

// True when the work may go on: no callback, or the callback says so.
inline bool keepGoing(const ProgressCallback& progress, int done, int total)
{
    return !progress || progress(done, total);
}

} // namespace kforge
