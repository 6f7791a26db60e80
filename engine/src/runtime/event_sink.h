// SPDX-License-Identifier: Apache-2.0
#pragma once
// The producer side of the event stream (R13). Recording is one relaxed load when nobody observes, and
// allocation-free when somebody does: every string is interned beforehand.
#include <kforge/events.h>

#include <atomic>
#include <cstdint>

namespace kforge::runtime::events {

extern std::atomic<bool> gRecording;

inline bool recording() { return gRecording.load(std::memory_order_relaxed); }

extern std::atomic<bool> gEveryModule;
// Whether the entry and exit of a module without a plan's hooks is recorded too (EventStream::Modules::Every).
inline bool recordingModule(bool hooked)
{
    return recording() && (hooked || gEveryModule.load(std::memory_order_relaxed));
}

void emit(EventKind kind, const char* modulePath, const char* function, const char* provider, int depth,
          const char* detail = nullptr);
// The same for an event of another thread (ThreadState::id), such as the unwind of its stacks by deactivate().
void emitFor(std::uint64_t thread, EventKind kind, const char* modulePath, const char* function, const char* provider,
             int depth, const char* detail = nullptr);

// Whether a forward should observe intercepted calls to originals too (events, stepping, profiling).
bool observationWanted();

} // namespace kforge::runtime::events
