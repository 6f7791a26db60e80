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
    // Summed as integers, divided once: per-forward figures that do not depend on the order of the events.
    struct Totals {
        std::int64_t allocated = 0, freed = 0, allocations = 0, peak = 0;
    };
    std::map<std::string, Totals> byModule;
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
            Totals& module = byModule[std::string(path)];
            if (event.bytes > 0) {
                module.allocated += event.bytes;
                ++module.allocations;
            } else {
                module.freed -= event.bytes;
            }
            module.peak = std::max(module.peak, now);
        }
    }
    for (const auto& [path, totals] : byModule)
        summary.modules.push_back({path, double(totals.allocated) / forwards, double(totals.freed) / forwards,
                                   double(totals.allocations) / forwards, totals.peak});
    std::stable_sort(summary.modules.begin(), summary.modules.end(), [](const ModuleMemory& a, const ModuleMemory& b) {
        if (a.path.empty() != b.path.empty())
            return a.path.empty();
        return a.allocatedBytes > b.allocatedBytes;
    });
    return summary;
}

} // namespace kforge
