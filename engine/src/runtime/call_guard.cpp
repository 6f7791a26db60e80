// SPDX-License-Identifier: Apache-2.0
#include "runtime/call_guard.h"

#include "runtime/event_sink.h"
#include "runtime/fault_injection.h"
#include "runtime/hook_table.h"
#include "runtime/runtime_core.h"
#include "runtime/step_points.h"
#include "runtime/string_pool.h"

namespace kforge::runtime {
namespace {

// What tasks and continuations of the forward pushed on other threads and left there (the forward resumed elsewhere
// after a wait and failed inside a module it entered there) becomes this thread's, pushed anew in its order, so that
// it is reported, unwound or kept as the forward's own leftovers are (R10, R11, R12). Entries of a runtime
// deactivated since are not: deactivate() unwound its patches (R7). Caller holds thread.mutex().
void adoptEntriesLeftElsewhere(ThreadState& thread, const TaskScope& tasks)
{
    for (const ElsewhereEntry& left : tasks.leftElsewhere()) {
        const auto core = RuntimeCore::find(left.runtimeId);
        if (!core || !Hooks::isBound(core.get()))
            continue;
        StackEntry entry = left.entry;
        entry.saved = thread.inEffectOwner(left.function);
        entry.savedScope = thread.scopeOf(left.function);
        entry.sequence = thread.nextSequence();
        entry.pushedOn = thread.id();
        thread.setInEffect(left.function, entry.installed, entry.modulePath);
        thread.stacksOf(left.runtimeId)[static_cast<int>(left.function)].push_back(std::move(entry));
    }
}

} // namespace

CallGuard::CallGuard(bool keepLeftovers, const char* capture, bool forksTasks)
    : m_thread(ThreadState::current()), m_keep(keepLeftovers), m_prevObserve(m_thread.observe),
      m_prevCapture(m_thread.capture)
{
    applyPendingUnwinds(m_thread);
    {
        std::lock_guard lock(m_thread.mutex());
        m_startSequence = m_thread.lastSequence();
        m_thread.guardDepth.fetch_add(1); // from here on, other threads defer their unwinds to this one
    }
    m_thread.observe = m_prevObserve || events::observationWanted();
    if (capture)
        m_thread.capture = capture;
    try {
        if (forksTasks && (Hooks::anyBound() || m_thread.observe)) {
            if (const auto hook = faults::gOpeningTaskScope.load())
                hook();
            m_tasks = std::make_unique<TaskScope>(m_thread);
        }
    } catch (...) { // no destructor runs for a guard that was never made: leave the thread as it was
        m_thread.observe = m_prevObserve;
        m_thread.capture = m_prevCapture;
        std::lock_guard lock(m_thread.mutex());
        m_thread.guardDepth.fetch_sub(1);
        throw;
    }
    m_thread.refreshModeKey();
}

CallGuard::~CallGuard()
{
    if (!m_finished) {
        static const std::string unfinished = "the forward did not complete";
        finish(&unfinished);
    }
}

std::vector<LeftoverPatch> CallGuard::finish(const std::string* error)
{
    m_finished = true;
    std::vector<LeftoverPatch> found;
    const std::string why = error ? *error : "the forward returned with a module's exit not run";
    applyPendingUnwinds(m_thread); // a runtime deactivated meanwhile: its entries are not this forward's leftovers
    {
        std::lock_guard lock(m_thread.mutex());
        if (m_tasks && error) // (a task still running after a forward that returned is no leftover)
            adoptEntriesLeftElsewhere(m_thread, *m_tasks);
        // What this forward pushed and never popped, in every runtime; unwound latest push first (R5, R10).
        const auto left = entriesLatestFirst(
            m_thread, [&](std::uint64_t, const StackEntry& entry) { return entry.sequence > m_startSequence; });
        for (const EntryRef& ref : left) {
            const auto [stack, index] = locate(m_thread, ref);
            const StackEntry& entry = (*stack)[index];
            if (m_tasks && m_tasks->poppedElsewhere(entry)) {
                // The forward resumed on another thread after a wait and left the module there (R12).
                removeEntry(m_thread, ref.function, *stack, index);
                continue;
            }
            const char* function = functionName(ref.function).data();
            LeftoverPatch patch = describeEntry(m_thread, ref.runtimeId, ref.function, entry);
            patch.error = why;
            patch.unwound = !m_keep;
            if (events::recording())
                events::emit(EventKind::Leftover, entry.modulePath, function, nameOf(entry.installed.get()),
                             int(index + 1), intern(why));
            found.push_back(patch);
            if (const auto core = RuntimeCore::find(ref.runtimeId))
                core->addReport(std::move(patch));
            if (!m_keep)
                unwindEntry(m_thread, ref);
        }
    }
    m_tasks.reset();
    bool outermost = false;
    {
        std::lock_guard lock(m_thread.mutex());
        outermost = m_thread.guardDepth.fetch_sub(1) == 1;
    }
    if (outermost) {
        stepping::forwardEnded(); // a Step does not carry over into the next forward (R14)
        m_thread.hookTable.reset();
    }
    m_thread.observe = m_prevObserve;
    m_thread.capture = m_prevCapture;
    m_thread.refreshModeKey();
    return found;
}

} // namespace kforge::runtime
