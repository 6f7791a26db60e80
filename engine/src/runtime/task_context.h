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

namespace c10 {
class DebugInfoGuard;
class ThreadLocalDebugInfo;
} // namespace c10

namespace kforge::runtime {

struct ForwardContext; // one per engine forward, shared by every snapshot and task of it

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
// Called by a post-hook before it pops `entry` pushed on another thread (a continuation leaving a module the
// forward entered before it waited). Caller holds thread.mutex().
void notePoppedElsewhere(const ThreadState& thread, const StackEntry& entry);
// Whether another thread must leave the thread's stacks alone: it runs an engine forward or a task of one that
// has not finished (R12). Caller holds thread.mutex().
bool isBusy(const ThreadState& thread);
// Whether the thread's stacks are a stale copy: it followed a task of a forward that has finished since and has
// not run anything of ours after. Such stacks are neither leftovers nor shown. Caller holds thread.mutex().
bool followsFinishedForward(const ThreadState& thread);

} // namespace kforge::runtime
