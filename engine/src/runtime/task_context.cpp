// SPDX-License-Identifier: Apache-2.0
#include "runtime/task_context.h"

#include "runtime/observer.h"

#include <c10/util/ThreadLocalDebugInfo.h>

#include <atomic>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace kforge::runtime {

// The debug-info slot our snapshots travel in. PyTorch names no slot for third parties; the test slots are
// unused in a LibTorch process, and every read checks the type, so a foreign value there is ignored.
inline constexpr c10::DebugInfoKind kTaskInfoKind = c10::DebugInfoKind::TEST_INFO_2;

struct ForwardContext {
    std::uint64_t originThread = 0;
    bool observe = false;
    std::atomic<bool> finished{false};
    mutable std::mutex mutex;
    // (pushedOn, sequence); a set, as a failed forward asks once per entry it unwinds
    std::set<std::pair<std::uint64_t, std::uint64_t>> poppedElsewhere;
    std::vector<ElsewhereEntry> pushedElsewhere; // by threads following its snapshots
    // The forward's observers while it runs (cleared when it ends): threads running its tasks ask them for
    // companions (observer.h).
    std::vector<std::shared_ptr<ForwardObserver>> observers;
};

struct TaskSnapshot final : c10::DebugInfoBase, std::enable_shared_from_this<TaskSnapshot> {
    struct Entry {
        std::uint64_t runtimeId;
        int function;
        StackEntry entry; // holds its provider functions: alive while any task may still call them
    };
    std::shared_ptr<ForwardContext> forward;
    std::vector<Entry> entries;
    std::vector<const char*> modules; // ThreadState::observedModules where it was published
};

namespace {

// The debug-info node this thread pushed last: replaced in place by the next publication while still on top.
thread_local std::shared_ptr<c10::ThreadLocalDebugInfo> tlsPublishedHead;
// The thread's own observers while it follows a task snapshot (ThreadState::ownStacksAside's counterpart).
thread_local ObserverList tlsOwnObserversAside;

// The companions of the forward's observers for this thread; none once the forward has ended.
ObserverList companionsOf(ForwardContext& forward, std::uint64_t thread)
{
    ObserverList list;
    std::lock_guard lock(forward.mutex);
    for (const auto& observer : forward.observers)
        if (auto companion = observer->companionFor(thread))
            list.observers.push_back(std::move(companion));
    list.refresh();
    return list;
}

std::shared_ptr<TaskSnapshot> snapshotOf(ThreadState& thread, std::shared_ptr<ForwardContext> forward)
{
    auto snapshot = std::make_shared<TaskSnapshot>();
    snapshot->forward = std::move(forward);
    snapshot->modules = thread.observedModules;
    std::lock_guard lock(thread.mutex());
    for (const auto& [runtimeId, stacks] : thread.allStacks())
        for (int i = 0; i < kFunctionCount; ++i)
            for (const StackEntry& e : stacks[i])
                snapshot->entries.push_back({runtimeId, i, e});
    return snapshot;
}

void push(std::shared_ptr<TaskSnapshot> snapshot)
{
    if (tlsPublishedHead && c10::ThreadLocalDebugInfo::current() == tlsPublishedHead)
        c10::ThreadLocalDebugInfo::_pop(kTaskInfoKind);
    c10::ThreadLocalDebugInfo::_push(kTaskInfoKind, std::move(snapshot));
    tlsPublishedHead = c10::ThreadLocalDebugInfo::current();
}

const TaskSnapshot* carriedSnapshot()
{
    return dynamic_cast<const TaskSnapshot*>(c10::ThreadLocalDebugInfo::get(kTaskInfoKind));
}

// follow()'s stacks, observe flag, observers and module path, with the thread's lock held.
void followStacks(ThreadState& thread, const std::shared_ptr<const TaskSnapshot>& snapshot)
{
    std::lock_guard lock(thread.mutex());
    if (!thread.following()) {
        thread.ownStacksAside = std::move(thread.allStacks());
        thread.ownObserveAside = thread.observe;
        thread.ownModulesAside = std::move(thread.observedModules);
        tlsOwnObserversAside = std::move(threadObservers());
    }
    thread.allStacks().clear();
    thread.noteNewCopy();
    if (snapshot) {
        for (const TaskSnapshot::Entry& e : snapshot->entries) {
            thread.stacksOf(e.runtimeId)[e.function].push_back(e.entry);
            thread.raiseSequence(e.entry.sequence); // this thread's own pushes come later (R5)
        }
        thread.observe = snapshot->forward->observe;
        thread.observedModules = snapshot->modules;
        threadObservers() = companionsOf(*snapshot->forward, thread.id());
    } else {
        thread.allStacks() = std::move(thread.ownStacksAside);
        thread.ownStacksAside.clear();
        thread.observe = thread.ownObserveAside;
        thread.observedModules = std::move(thread.ownModulesAside);
        thread.ownModulesAside.clear();
        threadObservers() = std::move(tlsOwnObserversAside);
        tlsOwnObserversAside = {};
    }
    thread.rebuildTable();
    thread.setFollowing(snapshot);
}

// Replaces the thread's stacks by a copy of the snapshot's (or gives it its own back when `snapshot` is null).
void follow(ThreadState& thread, std::shared_ptr<const TaskSnapshot> snapshot)
{
    followStacks(thread, snapshot);
    // Outside the thread's lock: observers take locks of their own.
    if (snapshot)
        for (const auto& observer : threadObservers().observers)
            observer->followModules(snapshot->modules);
}
} // namespace

TaskScope::TaskScope(ThreadState& thread)
    : m_thread(thread), m_forward(std::make_shared<ForwardContext>()),
      m_enclosingHead(std::exchange(tlsPublishedHead, nullptr))
{
    m_forward->originThread = thread.id();
    m_forward->observe = thread.observe;
    m_forward->observers = observersOnThisThread().observers;
    m_guard = std::make_unique<c10::DebugInfoGuard>(kTaskInfoKind, snapshotOf(thread, m_forward));
    tlsPublishedHead = c10::ThreadLocalDebugInfo::current();
    ++m_thread.taskScopes;
}

TaskScope::~TaskScope()
{
    m_forward->finished.store(true, std::memory_order_release);
    {
        std::lock_guard lock(m_forward->mutex); // the observers may end with the forward
        m_forward->observers.clear();
    }
    --m_thread.taskScopes;
    m_guard.reset(); // the enclosing forward's node is on top again
    tlsPublishedHead = std::move(m_enclosingHead);
}

bool TaskScope::poppedElsewhere(const StackEntry& entry) const
{
    std::lock_guard lock(m_forward->mutex);
    return m_forward->poppedElsewhere.count({entry.pushedOn, entry.sequence}) > 0;
}

void publishTask(ThreadState& thread)
{
    if (thread.taskScopes == 0 && !thread.following())
        return;
    const TaskSnapshot* carried = thread.following() ? thread.following().get() : carriedSnapshot();
    if (!carried)
        return;
    auto snapshot = snapshotOf(thread, carried->forward);
    if (thread.following()) {
        std::lock_guard lock(thread.mutex());
        thread.setFollowing(snapshot); // its own publication: nothing to follow anew
    }
    push(std::move(snapshot));
}

void followTask(ThreadState& thread)
{
    const TaskSnapshot* carried = carriedSnapshot();
    if (carried == thread.following().get())
        return;
    follow(thread, carried ? carried->shared_from_this() : nullptr);
    thread.refreshModeKey();
}

std::vector<ElsewhereEntry> TaskScope::leftElsewhere() const
{
    std::lock_guard lock(m_forward->mutex);
    std::vector<ElsewhereEntry> left;
    const auto& popped = m_forward->poppedElsewhere;
    for (const ElsewhereEntry& pushed : m_forward->pushedElsewhere)
        if (!popped.count({pushed.entry.pushedOn, pushed.entry.sequence}))
            left.push_back(pushed);
    return left;
}

void notePushedElsewhere(const ThreadState& thread, std::uint64_t runtimeId, Function f, const StackEntry& entry)
{
    if (!thread.following())
        return;
    ForwardContext& forward = *thread.following()->forward;
    std::lock_guard lock(forward.mutex);
    forward.pushedElsewhere.push_back({runtimeId, f, entry});
}

void notePoppedElsewhere(const ThreadState& thread, const StackEntry& entry)
{
    if (!thread.following())
        return;
    ForwardContext& forward = *thread.following()->forward;
    std::lock_guard lock(forward.mutex);
    forward.poppedElsewhere.emplace(entry.pushedOn, entry.sequence);
}

bool followsFinishedForward(const ThreadState& thread)
{
    return thread.following() && thread.following()->forward->finished.load(std::memory_order_acquire);
}

bool isBusy(const ThreadState& thread)
{
    return thread.guardDepth.load() > 0 || (thread.following() && !followsFinishedForward(thread));
}

} // namespace kforge::runtime
