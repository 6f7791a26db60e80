// SPDX-License-Identifier: Apache-2.0
#pragma once
// The runtime's shared state: what the module hooks, the call guard and deactivate() act on.
#include "runtime/hook_table.h"
#include "runtime/thread_state.h"

#include <kforge/runtime_types.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <utility>

namespace kforge::runtime {

class RuntimeCore {
public:
    explicit RuntimeCore(std::uint64_t id);
    std::uint64_t id() const { return m_id; }

    // R3: push and install this scope's entries in plan order; on failure undo this call's steps, rethrow. Pushes
    // nothing when `activation` (the binding's, from the caller's hook snapshot) has ended since (R7).
    void preHook(ThreadState& thread, const char* modulePath, const std::vector<ResolvedEntry>& entries,
                 std::uint64_t activation);
    // R4: in reverse plan order, pop each non-empty stack and put the popped callable back.
    void postHook(ThreadState& thread, const char* modulePath, const std::vector<ResolvedEntry>& entries);
    // R7: restore every function this runtime patched, on every thread, to the bottom of its stack. A thread
    // inside an engine forward other than the calling one unwinds itself at its next safe point (R12).
    void unwindAllThreads(); // lastUnwound() tells how many entries it removed
    size_t lastUnwound() const { return m_lastUnwound; }

    // The current activation: deactivate() ends it before unwinding, so that a module entered with a hook snapshot
    // taken before starts no scope of this runtime (R7: none starts once deactivate() returned).
    std::uint64_t activation() const { return m_activation.load(std::memory_order_acquire); }
    void endActivation() { m_activation.fetch_add(1, std::memory_order_acq_rel); }

    std::vector<LeftoverPatch> leftovers() const; // R11
    void addReport(LeftoverPatch patch);          // R10
    std::vector<LeftoverPatch> reports() const;
    void clearReports();

    static std::shared_ptr<RuntimeCore> create();
    static std::shared_ptr<RuntimeCore> find(std::uint64_t id);

private:
    std::uint64_t m_id;
    std::atomic<std::uint64_t> m_activation{0};
    size_t m_lastUnwound = 0;
    mutable std::mutex m_reportsMutex;
    std::vector<LeftoverPatch> m_reports;
};

// Takes stack[index], one runtime's entry for `f`, out of the thread's chain of pushes for `f`, which runs across
// all runtimes in push order (R5): when it is the latest push its saved callable goes back in effect; otherwise
// the next push, of whichever runtime, inherits what it saved, so that popping that one later restores the right
// callable and no provider stays in effect without a stack entry. Caller holds thread.mutex().
void removeEntry(ThreadState& thread, Function f, std::vector<StackEntry>& stack, size_t index);
// The owner thread applies the unwinds other threads deferred to it (ThreadState::deferUnwind). Cheap to call
// when there are none.
void applyPendingUnwinds(ThreadState& thread);

// One entry of one runtime's stack for a function, named by its push sequence number.
struct EntryRef {
    std::uint64_t runtimeId;
    Function function;
    std::uint64_t sequence;
};
// The thread's entries that `select(runtimeId, entry)` picks, latest push first: the order in which unwinding
// removes them. Caller holds thread.mutex().
std::vector<EntryRef> entriesLatestFirst(ThreadState& thread,
                                         const std::function<bool(std::uint64_t, const StackEntry&)>& select);
// The stack holding `ref` and the entry's index in it; index == stack size when the entry is gone.
std::pair<std::vector<StackEntry>*, size_t> locate(ThreadState& thread, const EntryRef& ref);
// Emits its Unwind event and removes the entry `ref` names (removeEntry). Caller holds thread.mutex().
void unwindEntry(ThreadState& thread, const EntryRef& ref);
// Unwinds every entry of `runtimeId` on the thread pushed up to `upToSequence`, latest first, and forgets the
// runtime's stacks there once they are empty. Returns how many it removed. Caller holds thread.mutex().
size_t unwindRuntime(ThreadState& thread, std::uint64_t runtimeId, std::uint64_t upToSequence);
LeftoverPatch describeEntry(const ThreadState& thread, std::uint64_t runtimeId, Function f, const StackEntry& entry);

} // namespace kforge::runtime
