// SPDX-License-Identifier: Apache-2.0
#include "memory_tables.h"

#include "output.h"

#include <kforge/module_path.h>

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

} // namespace kforge::cli
