// SPDX-License-Identifier: Apache-2.0
#pragma once
// The call guard around every forward the engine starts (R10): it notes the thread's push sequence on entry
// and, when the forward throws between a pre-hook and its post-hook (or returns unbalanced), unwinds what was
// pushed since, latest first across all runtimes (R5), and reports each leftover. With keepLeftovers (R11) it
// reports them but leaves the patches in effect.
#include "runtime/task_context.h"
#include "runtime/thread_state.h"

#include <kforge/runtime_types.h>

#include <memory>
#include <string>
#include <vector>

namespace kforge::runtime {

class CallGuard {
public:
    // `forksTasks`: the model's code forks async tasks, which inherit the forward's stacks (task_context.h); other
    // forwards skip publishing them.
    explicit CallGuard(bool keepLeftovers, const char* capture = nullptr, bool forksTasks = false);
    ~CallGuard();
    CallGuard(const CallGuard&) = delete;
    CallGuard& operator=(const CallGuard&) = delete;

    // Call once the forward returned (error == nullptr) or failed. Returns the leftovers it found.
    std::vector<LeftoverPatch> finish(const std::string* error);

private:
    ThreadState& m_thread;
    bool m_keep;
    bool m_finished = false;
    bool m_prevObserve;
    const char* m_prevCapture;
    std::uint64_t m_startSequence = 0;  // pushes after it are this forward's (StackEntry::sequence)
    std::unique_ptr<TaskScope> m_tasks; // what tasks forked by this forward inherit (R12)
};

} // namespace kforge::runtime
