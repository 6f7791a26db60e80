// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test seam for fault injection (pre-hook transactionality R3, quality gates): a hook called before each
// push of a pre-hook; throwing from it fails that step.
#include <kforge/functions.h>

#include <atomic>
#include <cstdint>

namespace kforge::runtime::faults {

using PushHook = void (*)(Function function, int planIndex);
extern std::atomic<PushHook> gBeforePush;
// Makes runtimes see the interposer's start-up self-test as failed (it runs once per process).
extern std::atomic<bool> gSelfTestFailed;
// Called when a call guard opens a forward's task scope (the allocations a forward that forks makes first);
// throwing from it fails the guard's construction.
using GuardHook = void (*)();
extern std::atomic<GuardHook> gOpeningTaskScope;
// Called by a module's enter op after it took its snapshot of the hook table and before the pre-hooks run: a
// test deactivates a runtime there, from another thread.
using EnterHook = void (*)(const char* modulePath);
extern std::atomic<EnterHook> gAfterHookSnapshot;

// Entries of a thread's hook stacks looked at to find an entry: the next push of a function (removeEntry, every pop)
// and an entry to unwind (locate). R4's and R10's tests check that both bisect, so that popping or unwinding a
// scope with many entries stays n log n.
extern thread_local std::uint64_t tlsStackSearchSteps;

} // namespace kforge::runtime::faults
