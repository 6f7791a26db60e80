// SPDX-License-Identifier: Apache-2.0
#pragma once
// The forward thread's side of stepping (R14).
#include <kforge/stepping.h>

#include <atomic>

namespace kforge::runtime::stepping {

extern std::atomic<bool> gLive; // any breakpoint set, or a single step pending

// Pauses the calling (forward) thread when a breakpoint matches; throws kforge::Error on Abort.
void pauseIfHit(PausePoint::Kind kind, const char* modulePath, const char* function);

// An engine forward of the calling thread ended: a Step taken in it stops here, so that the next forward does not
// pause at its first pause point with no breakpoint set.
void forwardEnded();

inline void maybePause(PausePoint::Kind kind, const char* modulePath, const char* function)
{
    if (gLive.load(std::memory_order_relaxed))
        pauseIfHit(kind, modulePath, function);
}

} // namespace kforge::runtime::stepping
