// SPDX-License-Identifier: Apache-2.0
#include "run_statistics.h"

namespace kforge::ui {

void RunStatistics::clear()
{
    m_modules.clear();
    m_stacks.clear();
    m_totalCalls = 0;
}

bool RunStatistics::add(const kforge::Event& event)
{
    switch (event.kind) {
    case EventKind::ModuleEnter: {
        m_stacks[event.thread].push_back({event.modulePath, event.timeNs});
        ++m_modules[event.modulePath].entries;
        return true;
    }
    case EventKind::ModuleExit: {
        // Pop up to the matching frame: a dropped exit event must not shift every later attribution.
        auto it = m_stacks.find(event.thread);
        if (it == m_stacks.end())
            return false;
        std::vector<Frame>& stack = it->second;
        for (auto frame = stack.rbegin(); frame != stack.rend(); ++frame) {
            if (frame->path != event.modulePath)
                continue;
            m_modules[event.modulePath].timeNs += event.timeNs - frame->enteredNs;
            stack.erase(std::next(frame).base(), stack.end());
            return true;
        }
        return false;
    }
    case EventKind::ProviderCall:
    case EventKind::OriginalCall: {
        std::string path = currentModule(event.thread);
        if (path.empty())
            path = event.modulePath;
        ModuleRunStats& stats = m_modules[path];
        ++stats.calls;
        if (event.kind == EventKind::ProviderCall)
            ++stats.providerCalls;
        ++m_totalCalls;
        return true;
    }
    case EventKind::Leftover:
    case EventKind::Unwind:
        // The forward failed inside the frames still open on this thread: their exits will never come.
        if (event.kind == EventKind::Leftover)
            m_stacks.erase(event.thread);
        return false;
    default:
        return false;
    }
}

std::string RunStatistics::currentModule(std::uint64_t thread) const
{
    const auto it = m_stacks.find(thread);
    if (it == m_stacks.end() || it->second.empty())
        return {};
    return it->second.back().path;
}

} // namespace kforge::ui
