// SPDX-License-Identifier: Apache-2.0
#pragma once
// R12 async tasks. TorchScript's torch.jit.fork and at::launch run work on LibTorch's inter-op threads, and a
// forward that waits on an unfinished future resumes there too. Both carry the forking thread's
// at::ThreadLocalState, which includes c10::ThreadLocalDebugInfo. An engine forward publishes an immutable
// snapshot of its thread's stacks there after every change, so a task starts from the table in effect where it
// was forked (or where its forward waited): the thread running it follows that snapshot, on a copy, until it
// runs something else.
#include "runtime/thread_state.h"

#include <memory>
#include <vector>

namespace c10 {
class DebugInfoGuard;
class ThreadLocalDebugInfo;
} // namespace c10

namespace kforge::runtime {

struct ForwardContext; // one per engine forward, shared by every snapshot and task of it

// An entry a task or continuation of a forward pushed on another thread (TaskScope::leftElsewhere).
struct ElsewhereEntry {
    std::uint64_t runtimeId;
    Function function;
    StackEntry entry;
};

// Opened by each engine forward (CallGuard) that has something to carry: a bound runtime or observation.
class TaskScope {
public:
    explicit TaskScope(ThreadState& thread);
    ~TaskScope();
    TaskScope(const TaskScope&) = delete;
    TaskScope& operator=(const TaskScope&) = delete;

    // Whether a continuation of this forward popped `entry` on another thread: the module's exit ran there,
    // so the entry is no leftover (R12).
    bool poppedElsewhere(const StackEntry& entry) const;
    // What tasks and continuations of this forward pushed on other threads and neither popped nor unwound there, in
    // push order: a forward that failed after a wait resumed it elsewhere left these behind (R10, R12).
    std::vector<ElsewhereEntry> leftElsewhere() const;

private:
    ThreadState& m_thread;
    std::shared_ptr<ForwardContext> m_forward;
    std::shared_ptr<c10::ThreadLocalDebugInfo> m_enclosingHead; // an enclosing forward's published node
    std::unique_ptr<c10::DebugInfoGuard> m_guard;
};

// After the thread's stacks changed: publishes them for tasks forked from here on. A no-op outside engine
// forwards and tasks.
void publishTask(ThreadState& thread);
// On a thread outside an engine forward of its own: follow the forward snapshot its thread-local state carries
// (a task of it), or go back to the thread's own stacks when it carries none. Cheap when nothing changed.
void followTask(ThreadState& thread);
// Called by a pre-hook after it pushed `entry` on a thread that follows a task snapshot (a task or a continuation
// entering a module). Caller holds thread.mutex().
void notePushedElsewhere(const ThreadState& thread, std::uint64_t runtimeId, Function f, const StackEntry& entry);
// Called before an entry leaves the stacks of a thread that follows a task snapshot, popped by a post-hook (a
// continuation leaving a module the forward entered before it waited, or one a task entered) or unwound. Caller
// holds thread.mutex().
void notePoppedElsewhere(const ThreadState& thread, const StackEntry& entry);
// Whether another thread must leave the thread's stacks alone: it runs an engine forward or a task of one that
// has not finished (R12). Caller holds thread.mutex().
bool isBusy(const ThreadState& thread);
// Whether the thread's stacks are a stale copy: it followed a task of a forward that has finished since and has
// not run anything of ours after. Such stacks are neither leftovers nor shown. Caller holds thread.mutex().
bool followsFinishedForward(const ThreadState& thread);

} // namespace kforge::runtime
