// SPDX-License-Identifier: Apache-2.0
#include "runtime/runtime_core.h"

#include "runtime/clock.h"
#include "runtime/event_sink.h"
#include "runtime/fault_injection.h"
#include "runtime/task_context.h"

#include <algorithm>
#include <unordered_map>

namespace kforge::runtime {

namespace faults {
std::atomic<PushHook> gBeforePush{nullptr};
thread_local std::uint64_t tlsStackSearchSteps = 0;
std::atomic<bool> gSelfTestFailed{false};
std::atomic<GuardHook> gOpeningTaskScope{nullptr};
std::atomic<EnterHook> gAfterHookSnapshot{nullptr};
} // namespace faults

namespace {

std::mutex& directoryMutex()
{
    static auto* m = new std::mutex();
    return *m;
}
std::unordered_map<std::uint64_t, std::weak_ptr<RuntimeCore>>& directory()
{
    static auto* d = new std::unordered_map<std::uint64_t, std::weak_ptr<RuntimeCore>>();
    return *d;
}
std::atomic<std::uint64_t> nextRuntimeId{1};

const char* fname(Function f) { return functionName(f).data(); } // the names are static literals

} // namespace

RuntimeCore::RuntimeCore(std::uint64_t id) : m_id(id) {}

std::shared_ptr<RuntimeCore> RuntimeCore::create()
{
    auto core = std::make_shared<RuntimeCore>(nextRuntimeId.fetch_add(1));
    std::lock_guard lock(directoryMutex());
    directory()[core->id()] = core;
    return core;
}

std::shared_ptr<RuntimeCore> RuntimeCore::find(std::uint64_t id)
{
    std::lock_guard lock(directoryMutex());
    const auto it = directory().find(id);
    return it == directory().end() ? nullptr : it->second.lock();
}

void removeEntry(ThreadState& thread, Function f, std::vector<StackEntry>& stack, size_t index)
{
    StackEntry& entry = stack[index];
    StackEntry* next = nullptr; // the push of `f` right after this one, in any runtime
    // Each stack is in push order, its sequences increasing: the first entry above `entry` is found by bisection (a
    // scan of every entry made the post-hook of a scope with many entries quadratic: bench_scope_entries).
    const auto before = [](std::uint64_t sequence, const StackEntry& e) {
        ++faults::tlsStackSearchSteps;
        return sequence < e.sequence;
    };
    for (auto& [runtimeId, stacks] : thread.allStacks()) {
        std::vector<StackEntry>& other = stacks[static_cast<int>(f)];
        const auto above = std::upper_bound(other.begin(), other.end(), entry.sequence, before);
        if (above != other.end() && (!next || above->sequence < next->sequence))
            next = &*above;
    }
    if (next) {
        next->saved = std::move(entry.saved);
        next->savedScope = entry.savedScope;
    } else {
        thread.setInEffect(f, std::move(entry.saved), entry.savedScope);
    }
    stack.erase(stack.begin() + std::ptrdiff_t(index));
}

std::vector<EntryRef> entriesLatestFirst(ThreadState& thread,
                                         const std::function<bool(std::uint64_t, const StackEntry&)>& select)
{
    std::vector<EntryRef> refs;
    for (const auto& [runtimeId, stacks] : thread.allStacks())
        for (int i = 0; i < kFunctionCount; ++i)
            for (const StackEntry& entry : stacks[i])
                if (select(runtimeId, entry))
                    refs.push_back({runtimeId, static_cast<Function>(i), entry.sequence});
    std::sort(refs.begin(), refs.end(), [](const EntryRef& a, const EntryRef& b) { return a.sequence > b.sequence; });
    return refs;
}

std::pair<std::vector<StackEntry>*, size_t> locate(ThreadState& thread, const EntryRef& ref)
{
    auto& stack = thread.stacksOf(ref.runtimeId)[static_cast<int>(ref.function)];
    // In push order, so bisected: a scan from the bottom made unwinding a scope's N entries (latest first, each at
    // the top) cost N^2 steps (bench_scope_entries, BM_unwindAfterAProviderError).
    const auto at =
        std::lower_bound(stack.begin(), stack.end(), ref.sequence, [](const StackEntry& e, std::uint64_t sequence) {
            ++faults::tlsStackSearchSteps;
            return e.sequence < sequence;
        });
    if (at == stack.end() || at->sequence != ref.sequence)
        return {&stack, stack.size()};
    return {&stack, size_t(at - stack.begin())};
}

void unwindEntry(ThreadState& thread, const EntryRef& ref)
{
    const auto [stack, index] = locate(thread, ref);
    if (index == stack->size())
        return;
    if (events::recording()) // the thread whose stacks these are, also when deactivate() unwinds them from another
        events::emitFor(thread.id(), EventKind::Unwind, (*stack)[index].modulePath, fname(ref.function),
                        nameOf((*stack)[index].installed.get()), int(index + 1));
    notePoppedElsewhere(thread, (*stack)[index]);
    removeEntry(thread, ref.function, *stack, index);
}

size_t unwindRuntime(ThreadState& thread, std::uint64_t runtimeId, std::uint64_t upToSequence)
{
    const auto refs = entriesLatestFirst(
        thread, [&](std::uint64_t id, const StackEntry& e) { return id == runtimeId && e.sequence <= upToSequence; });
    for (const EntryRef& ref : refs)
        unwindEntry(thread, ref);
    auto& all = thread.allStacks();
    if (const auto it = all.find(runtimeId); it != all.end())
        if (std::all_of(it->second.begin(), it->second.end(), [](const auto& stack) { return stack.empty(); }))
            all.erase(it);
    return refs.size();
}

LeftoverPatch describeEntry(const ThreadState& thread, std::uint64_t runtimeId, Function f, const StackEntry& entry)
{
    LeftoverPatch p;
    p.function = std::string(functionName(f));
    p.provider = nameOf(entry.installed.get());
    p.modulePath = entry.modulePath;
    p.thread = thread.id();
    p.runtimeId = runtimeId;
    p.timeNs = entry.timeNs;
    p.capture = entry.capture ? entry.capture : "";
    return p;
}

void RuntimeCore::preHook(ThreadState& thread, const char* modulePath, const std::vector<ResolvedEntry>& entries,
                          std::uint64_t activation)
{
    std::lock_guard lock(thread.mutex());
    if (activation != this->activation())
        return; // deactivate() ran since the caller's hook snapshot: it unwound nothing of this scope, so push nothing
    FunctionStacks& stacks = thread.stacksOf(m_id);
    size_t done = 0;
    try {
        for (const ResolvedEntry& e : entries) {
            if (auto hook = faults::gBeforePush.load())
                hook(e.function, e.planIndex);
            auto& stack = stacks[static_cast<int>(e.function)];
            stack.push_back({thread.inEffectOwner(e.function), e.provider, modulePath, e.planIndex, nowNs(),
                             thread.capture, thread.scopeOf(e.function), thread.nextSequence(), thread.id()});
            thread.setInEffect(e.function, e.provider, modulePath);
            ++done;
            if (thread.following()) // a task or continuation of a forward: it learns what was pushed here (R10, R12)
                notePushedElsewhere(thread, m_id, e.function, stack.back());
            if (thread.captureLog)
                thread.captureLog->push_back({modulePath, fname(e.function), e.provider->providerName});
            if (events::recording())
                events::emit(EventKind::Push, modulePath, fname(e.function), e.provider->providerName,
                             int(stack.size()));
        }
    } catch (...) {
        // Transactional (R3): undo this call's steps in reverse order, then rethrow.
        while (done-- > 0) {
            const Function f = entries[done].function;
            auto& stack = stacks[static_cast<int>(f)];
            notePoppedElsewhere(thread, stack.back());
            removeEntry(thread, f, stack, stack.size() - 1);
            if (events::recording())
                events::emit(EventKind::Pop, modulePath, fname(f), entries[done].provider->providerName,
                             int(stack.size()));
        }
        throw;
    }
}

void RuntimeCore::postHook(ThreadState& thread, const char* modulePath, const std::vector<ResolvedEntry>& entries)
{
    std::lock_guard lock(thread.mutex());
    FunctionStacks& stacks = thread.stacksOf(m_id);
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
        auto& stack = stacks[static_cast<int>(it->function)];
        if (stack.empty())
            continue;
        const char* provider = nameOf(stack.back().installed.get());
        notePoppedElsewhere(thread, stack.back());
        removeEntry(thread, it->function, stack, stack.size() - 1);
        if (events::recording())
            events::emit(EventKind::Pop, modulePath, fname(it->function), provider, int(stack.size()));
    }
}

void applyPendingUnwinds(ThreadState& thread)
{
    if (!thread.hasPendingUnwinds())
        return;
    {
        std::lock_guard lock(thread.mutex());
        for (const auto& pending : thread.takePendingUnwinds())
            unwindRuntime(thread, pending.runtimeId, pending.upToSequence);
    }
    thread.refreshModeKey();
    publishTask(thread);
}

void RuntimeCore::unwindAllThreads()
{
    m_lastUnwound = 0;
    ThreadState& self = ThreadState::current();
    for (const auto& thread : ThreadState::all()) {
        std::lock_guard lock(thread->mutex());
        if (!thread->allStacks().count(m_id))
            continue;
        // A thread running a forward or a task may be calling through these entries right now; one holding a
        // finished task's copy drops it when it next runs anything of ours (R12).
        if (thread.get() != &self && (isBusy(*thread) || thread->following()))
            thread->deferUnwind(m_id);
        else // latest first, spliced out of the chain where another runtime pushed on top (R5, R7)
            m_lastUnwound += unwindRuntime(*thread, m_id, thread->lastSequence());
    }
}

std::vector<LeftoverPatch> RuntimeCore::leftovers() const
{
    std::vector<LeftoverPatch> out;
    for (const auto& thread : ThreadState::all()) {
        std::lock_guard lock(thread->mutex());
        if (isBusy(*thread) || thread->following())
            continue; // inside a forward: its patches are live, not left over; a task's copy is no patch of its own
        const auto it = thread->allStacks().find(m_id);
        if (it == thread->allStacks().end())
            continue;
        for (int i = 0; i < kFunctionCount; ++i)
            for (const StackEntry& e : it->second[i])
                out.push_back(describeEntry(*thread, m_id, static_cast<Function>(i), e));
    }
    return out;
}

void RuntimeCore::addReport(LeftoverPatch patch)
{
    std::lock_guard lock(m_reportsMutex);
    m_reports.push_back(std::move(patch));
}

std::vector<LeftoverPatch> RuntimeCore::reports() const
{
    std::vector<LeftoverPatch> out;
    {
        std::lock_guard lock(m_reportsMutex);
        out = m_reports;
    }
    std::vector<std::uint64_t> live;
    for (const auto& thread : ThreadState::all())
        live.push_back(thread->id());
    for (LeftoverPatch& p : out) // a kept patch lives in its thread's table, and ends with the thread (R11)
        p.threadEnded = !p.unwound && std::find(live.begin(), live.end(), p.thread) == live.end();
    return out;
}

void RuntimeCore::clearReports()
{
    std::lock_guard lock(m_reportsMutex);
    m_reports.clear();
}

} // namespace kforge::runtime
