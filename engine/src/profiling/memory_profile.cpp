// SPDX-License-Identifier: Apache-2.0
#include <kforge/memory_profile.h>

#include <kforge/module_path.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

namespace kforge {

MemorySummary summarizeMemory(const ProfileRun& run)
{
    MemorySummary summary;
    summary.recorded = !run.memory.empty();
    if (!summary.recorded)
        return summary;
    std::map<std::string, ModuleMemory> byModule;
    const double forwards = std::max(1, run.iterations);
    // Live bytes above each iteration's start: the running sum of the iteration's events.
    std::map<int, std::int64_t> live;
    for (const MemoryRecord& event : run.memory) {
        std::int64_t& now = live[event.iteration];
        now += event.bytes;
        if (now > summary.peakBytes) {
            summary.peakBytes = now;
            summary.peakModule = event.modulePath;
            summary.peakFunction = event.function;
        }
        // The module and each module above it: a module's figures hold its subtree's.
        std::vector<std::string_view> scopes = module_path::ancestorsOf(event.modulePath);
        scopes.insert(scopes.begin(), event.modulePath);
        for (const std::string_view path : scopes) {
            ModuleMemory& module = byModule[std::string(path)];
            module.path = path;
            if (event.bytes > 0) {
                module.allocatedBytes += double(event.bytes) / forwards;
                module.allocations += 1.0 / forwards;
            } else {
                module.freedBytes += double(-event.bytes) / forwards;
            }
            module.peakBytes = std::max(module.peakBytes, now);
        }
    }
    for (auto& [path, module] : byModule)
        summary.modules.push_back(std::move(module));
    std::stable_sort(summary.modules.begin(), summary.modules.end(), [](const ModuleMemory& a, const ModuleMemory& b) {
        if (a.path.empty() != b.path.empty())
            return a.path.empty();
        return a.allocatedBytes > b.allocatedBytes;
    });
    return summary;
}

} // namespace kforge
