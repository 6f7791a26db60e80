#include "runtime/runtime_core.h"

#include "runtime/clock.h"
#include "runtime/event_sink.h"
#include "runtime/fault_injection.h"

#include <unordered_map>

namespace kforge::runtime {

namespace faults {
std::atomic<PushHook> gBeforePush{nullptr};
}

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

void restoreEntry(ThreadState& thread, Function f, const StackEntry& entry)
{
    thread.setInEffect(f, entry.saved, entry.savedScope);
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

void RuntimeCore::preHook(ThreadState& thread, const char* modulePath, const std::vector<ResolvedEntry>& entries)
{
    std::lock_guard lock(thread.mutex());
    FunctionStacks& stacks = thread.stacksOf(m_id);
    size_t done = 0;
    try {
        for (const ResolvedEntry& e : entries) {
            if (auto hook = faults::gBeforePush.load())
                hook(e.function, e.planIndex);
            auto& stack = stacks[static_cast<int>(e.function)];
            stack.push_back({thread.inEffectOwner(e.function), e.provider, modulePath, e.planIndex, nowNs(),
                             thread.capture, thread.scopeOf(e.function)});
            thread.setInEffect(e.function, e.provider, modulePath);
            ++done;
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
            restoreEntry(thread, f, stack.back());
            stack.pop_back();
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
        restoreEntry(thread, it->function, stack.back());
        stack.pop_back();
        if (events::recording())
            events::emit(EventKind::Pop, modulePath, fname(it->function), provider, int(stack.size()));
    }
}

void RuntimeCore::unwindAllThreads()
{
    m_lastUnwound = 0;
    for (const auto& thread : ThreadState::all()) {
        std::lock_guard lock(thread->mutex());
        auto& all = thread->allStacks();
        const auto it = all.find(m_id);
        if (it == all.end())
            continue;
        for (int i = 0; i < kFunctionCount; ++i) {
            auto& stack = it->second[i];
            if (stack.empty())
                continue;
            const auto f = static_cast<Function>(i);
            if (events::recording())
                events::emit(EventKind::Unwind, stack.back().modulePath, fname(f), nameOf(stack.back().installed.get()),
                             int(stack.size()));
            restoreEntry(*thread, f, stack.front());
            m_lastUnwound += stack.size();
        }
        all.erase(it);
    }
}

std::vector<LeftoverPatch> RuntimeCore::leftovers() const
{
    std::vector<LeftoverPatch> out;
    for (const auto& thread : ThreadState::all()) {
        if (thread->guardDepth.load() > 0)
            continue; // inside a forward: its patches are live, not left over
        std::lock_guard lock(thread->mutex());
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
    std::lock_guard lock(m_reportsMutex);
    return m_reports;
}

void RuntimeCore::clearReports()
{
    std::lock_guard lock(m_reportsMutex);
    m_reports.clear();
}

} // namespace kforge::runtime
