// SPDX-License-Identifier: Apache-2.0
#include "memory_tables.h"

#include "output.h"

#include <kforge/module_path.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kforge::cli {

std::string formatBytes(double bytes)
{
    const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    double value = std::fabs(bytes);
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    return (bytes < 0 ? "-" : "") + (unit == 0 ? fixed(value, 0) : fixed(value, 2)) + " " + units[unit];
}

void printMemory(std::ostream& out, const MemorySummary& memory, std::size_t top)
{
    if (!memory.recorded) {
        out << "\nmemory: no allocation was reported during the measured forwards\n";
        return;
    }
    out << "\nmemory per forward: peak " << formatBytes(double(memory.peakBytes)) << " above the forward's start, in "
        << module_path::displayName(memory.peakModule)
        << (memory.peakFunction.empty() ? "" : " (" + memory.peakFunction + ")") << '\n';
    std::vector<std::vector<std::string>> rows;
    for (const ModuleMemory& m : memory.modules) {
        if (top && rows.size() == top)
            break;
        rows.push_back({module_path::displayName(m.path), formatBytes(m.allocatedBytes), fixed(m.allocations, 1),
                        formatBytes(m.freedBytes), formatBytes(double(m.peakBytes))});
    }
    out << "memory by module (its subtree; per forward)";
    if (top && memory.modules.size() > top)
        out << " (top " << top << " of " << memory.modules.size() << "; --top 0 for all)";
    out << '\n' << formatTable({"MODULE", "ALLOCATED", "ALLOCATIONS", "FREED", "PEAK INSIDE"}, rows);
}

nlohmann::ordered_json memoryJson(const MemorySummary& memory)
{
    nlohmann::ordered_json modules = nlohmann::ordered_json::array();
    for (const ModuleMemory& m : memory.modules)
        modules.push_back({{"path", m.path},
                           {"allocated_bytes", m.allocatedBytes},
                           {"allocations", m.allocations},
                           {"freed_bytes", m.freedBytes},
                           {"peak_bytes", m.peakBytes}});
    return {{"recorded", memory.recorded},
            {"peak_bytes", memory.peakBytes},
            {"peak_module", memory.peakModule},
            {"peak_function", memory.peakFunction},
            {"modules", modules}};
}

namespace {

const ModuleMemory* rowOf(const MemorySummary& memory, const std::string& path)
{
    for (const ModuleMemory& m : memory.modules)
        if (m.path == path)
            return &m;
    return nullptr;
}

std::string change(double before, double after)
{
    const double delta = after - before;
    return (delta > 0 ? "+" : "") + formatBytes(delta);
}

} // namespace

void printMemoryComparison(std::ostream& out, const MemorySummary& before, const MemorySummary& after, std::size_t top)
{
    if (!before.recorded && !after.recorded) {
        out << "\nmemory: no allocation was reported during the measured forwards\n";
        return;
    }
    out << "\nmemory per forward: peak " << formatBytes(double(before.peakBytes)) << " -> "
        << formatBytes(double(after.peakBytes)) << " (" << change(double(before.peakBytes), double(after.peakBytes))
        << "), in " << module_path::displayName(after.peakModule) << " with the plan\n";
    // The modules of either side, in the plan's order, then those only the baseline has.
    std::vector<std::string> paths;
    for (const MemorySummary* side : {&after, &before})
        for (const ModuleMemory& m : side->modules)
            if (std::find(paths.begin(), paths.end(), m.path) == paths.end())
                paths.push_back(m.path);
    std::vector<std::vector<std::string>> rows;
    for (const std::string& path : paths) {
        if (top && rows.size() == top)
            break;
        const ModuleMemory* b = rowOf(before, path);
        const ModuleMemory* a = rowOf(after, path);
        const double allocatedBefore = b ? b->allocatedBytes : 0, allocatedAfter = a ? a->allocatedBytes : 0;
        const double peakBefore = b ? double(b->peakBytes) : 0, peakAfter = a ? double(a->peakBytes) : 0;
        rows.push_back({module_path::displayName(path), formatBytes(allocatedBefore), formatBytes(allocatedAfter),
                        change(allocatedBefore, allocatedAfter), formatBytes(peakBefore), formatBytes(peakAfter),
                        change(peakBefore, peakAfter)});
    }
    out << "memory by module (its subtree; per forward)";
    if (top && paths.size() > top)
        out << " (top " << top << " of " << paths.size() << "; --top 0 for all)";
    out << '\n'
        << formatTable({"MODULE", "ALLOCATED BEFORE", "AFTER", "CHANGE", "PEAK BEFORE", "AFTER", "CHANGE"}, rows);
}

nlohmann::ordered_json memoryComparisonJson(const MemorySummary& before, const MemorySummary& after)
{
    return {{"baseline", memoryJson(before)},
            {"plan", memoryJson(after)},
            {"peak_change_bytes", after.peakBytes - before.peakBytes}};
}

} // namespace kforge::cli
