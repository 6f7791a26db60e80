#include "runtime/call_guard.h"

#include "runtime/event_sink.h"
#include "runtime/runtime_core.h"
#include "runtime/string_pool.h"

namespace kforge::runtime {

CallGuard::CallGuard(bool keepLeftovers, const char* capture)
    : m_thread(ThreadState::current()), m_keep(keepLeftovers), m_prevObserve(m_thread.observe),
      m_prevCapture(m_thread.capture)
{
    {
        std::lock_guard lock(m_thread.mutex());
        for (const auto& [runtimeId, stacks] : m_thread.allStacks()) {
            std::array<size_t, kFunctionCount> depths{};
            for (int i = 0; i < kFunctionCount; ++i)
                depths[i] = stacks[i].size();
            m_depths.emplace_back(runtimeId, depths);
        }
    }
    m_thread.guardDepth.fetch_add(1);
    m_thread.observe = m_prevObserve || events::observationWanted();
    if (capture)
        m_thread.capture = capture;
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
    {
        std::lock_guard lock(m_thread.mutex());
        for (auto& [runtimeId, stacks] : m_thread.allStacks()) {
            std::array<size_t, kFunctionCount> recorded{};
            for (const auto& [id, depths] : m_depths)
                if (id == runtimeId)
                    recorded = depths;
            const auto core = RuntimeCore::find(runtimeId);
            for (int i = 0; i < kFunctionCount; ++i) {
                auto& stack = stacks[i];
                const auto f = static_cast<Function>(i);
                for (size_t depth = stack.size(); depth > recorded[i]; --depth) {
                    const StackEntry& entry = stack[depth - 1];
                    LeftoverPatch patch = describeEntry(m_thread, runtimeId, f, entry);
                    patch.error = why;
                    patch.unwound = !m_keep;
                    if (events::recording())
                        events::emit(EventKind::Leftover, entry.modulePath, functionName(f).data(),
                                     nameOf(entry.installed.get()), int(depth), intern(why));
                    found.push_back(patch);
                    if (core)
                        core->addReport(std::move(patch));
                }
                if (m_keep)
                    continue;
                while (stack.size() > recorded[i]) {
                    if (events::recording())
                        events::emit(EventKind::Unwind, stack.back().modulePath, functionName(f).data(),
                                     nameOf(stack.back().installed.get()), int(stack.size()));
                    restoreEntry(m_thread, f, stack.back());
                    stack.pop_back();
                }
            }
        }
    }
    m_thread.guardDepth.fetch_sub(1);
    m_thread.observe = m_prevObserve;
    m_thread.capture = m_prevCapture;
    m_thread.refreshModeKey();
    return found;
}

} // namespace kforge::runtime
