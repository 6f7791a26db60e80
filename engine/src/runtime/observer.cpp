// SPDX-License-Identifier: Apache-2.0
#include "runtime/observer.h"

#include "runtime/task_context.h"

#include <algorithm>

namespace kforge::runtime {

std::atomic<int> observing::gScopes{0};

namespace {

thread_local ObserverList tlsObservers;
std::atomic<std::uint64_t> nextId{1};

// A non-owning pointer in the list's shared form: an installed observer is owned by whoever installed it.
std::shared_ptr<ForwardObserver> unowned(ForwardObserver& observer)
{
    return std::shared_ptr<ForwardObserver>(std::shared_ptr<void>(), &observer);
}

} // namespace

void ObserverList::refresh()
{
    wantsSamples = std::any_of(observers.begin(), observers.end(), [](const auto& o) { return o->wantsSamples(); });
    wantsModuleOutputs =
        std::any_of(observers.begin(), observers.end(), [](const auto& o) { return o->wantsModuleOutputs(); });
}

ObserverScope::ObserverScope(ForwardObserver& observer) : m_observer(observer)
{
    // The thread runs its own code now: if it still follows the snapshot of a task it ran, it takes its own
    // observers back first, to which this one is added.
    ThreadState& thread = ThreadState::current();
    if (thread.guardDepth.load(std::memory_order_relaxed) == 0)
        followTask(thread);
    tlsObservers.observers.push_back(unowned(observer));
    tlsObservers.refresh();
    observing::gScopes.fetch_add(1, std::memory_order_relaxed);
}

ObserverScope::~ObserverScope()
{
    auto& list = tlsObservers.observers;
    const auto it = std::find_if(list.rbegin(), list.rend(), [&](const auto& o) { return o.get() == &m_observer; });
    if (it != list.rend())
        list.erase(std::next(it).base());
    tlsObservers.refresh();
    observing::gScopes.fetch_sub(1, std::memory_order_relaxed);
}

const ObserverList& observersOnThisThread() { return tlsObservers; }
ObserverList& threadObservers() { return tlsObservers; }

std::uint64_t nextObservationId() { return nextId.fetch_add(1, std::memory_order_relaxed); }

void notifyOpBegin()
{
    // An op's RecordFunction starts before the interposer or a module hook could follow a task on this thread: the
    // first op of a continuation after a wait would go to the observers of what the thread ran before (R12).
    ThreadState& thread = ThreadState::current();
    if (thread.guardDepth.load(std::memory_order_relaxed) == 0)
        followTask(thread);
    for (const auto& o : tlsObservers.observers)
        o->opBegin();
}

void notifyOpEnd(const char* name)
{
    for (const auto& o : tlsObservers.observers)
        o->opEnd(name);
}

void ObservedCall::begin(Function function, const char* provider, const char* op)
{
    m_id = nextObservationId();
    for (const auto& o : m_list->observers)
        o->callBegin(m_id, function, provider, op);
}

void ObservedCall::end()
{
    for (const auto& o : m_list->observers)
        o->callEnd(m_id);
}

void ObservedCall::tellDeclined()
{
    for (const auto& o : m_list->observers)
        o->callDeclined(m_id);
}

} // namespace kforge::runtime
