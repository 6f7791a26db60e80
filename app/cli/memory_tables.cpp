// SPDX-License-Identifier: Apache-2.0
#include "memory_tables.h"

#include "output.h"

#include <kforge/model_session.h>
#include <kforge/module_path.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kforge::cli {

namespace {

// The peak decomposed: what was alive at it, by the module and call that allocated it.
void printAliveAtPeak(std::ostream& out, const MemorySummary& memory, std::size_t top)
{
    if (memory.aliveAtPeak.empty())
        return;
    std::vector<std::vector<std::string>> rows;
    for (const PeakHolder& h : memory.aliveAtPeak) {
        if (top && rows.size() == top)
            break;
        rows.push_back({module_path::displayName(h.module), h.function.empty() ? "-" : h.function,
                        bytesText(double(h.bytes)), std::to_string(h.allocations),
                        fixed(100.0 * double(h.bytes) / double(memory.peakBytes), 1) + "%"});
    }
    out << "alive at the peak, by where it was allocated";
    if (top && memory.aliveAtPeak.size() > top)
        out << " (top " << top << " of " << memory.aliveAtPeak.size() << ")";
    out << '\n' << formatTable({"MODULE", "FUNCTION", "BYTES", "ALLOCATIONS", "OF THE PEAK"}, rows);
}

nlohmann::ordered_json aliveAtPeakJson(const MemorySummary& memory)
{
    nlohmann::ordered_json holders = nlohmann::ordered_json::array();
    for (const PeakHolder& h : memory.aliveAtPeak)
        holders.push_back(
            {{"module", h.module}, {"function", h.function}, {"bytes", h.bytes}, {"allocations", h.allocations}});
    return holders;
}

// Per function and the provider that served it: what its calls allocated, and the most live inside one call.
void printFunctionMemory(std::ostream& out, const MemorySummary& memory, std::size_t top)
{
    if (memory.functions.empty())
        return;
    std::vector<std::vector<std::string>> rows;
    for (const FunctionMemory& f : memory.functions) {
        if (top && rows.size() == top)
            break;
        rows.push_back({f.function, f.provider, fixed(f.calls, 1), bytesText(f.allocatedBytes), fixed(f.allocations, 1),
                        bytesText(double(f.peakInCallBytes))});
    }
    out << "memory by function call and provider (per forward; PEAK IN A CALL: the most live inside one call above "
           "its start, its workspace and outputs)";
    if (top && memory.functions.size() > top)
        out << " (top " << top << " of " << memory.functions.size() << ")";
    out << '\n' << formatTable({"FUNCTION", "PROVIDER", "CALLS", "ALLOCATED", "ALLOCATIONS", "PEAK IN A CALL"}, rows);
}

// A CUDA run's driver-level allocations (CUPTI's memory records), apart from the caching allocator's figures.
void printDriverMemory(std::ostream& out, const MemorySummary& memory, std::size_t top)
{
    if (memory.driverModules.empty())
        return;
    out << "\ndevice memory through the driver per forward (cudaMalloc and frees, the caching allocator's segments "
           "and what bypasses it): peak "
        << bytesText(double(memory.driverPeakBytes)) << " above the forward's start\n";
    std::vector<std::vector<std::string>> rows;
    for (const ModuleMemory& m : memory.driverModules) {
        if (top && rows.size() == top)
            break;
        rows.push_back({module_path::displayName(m.path), bytesText(m.allocatedBytes), fixed(m.allocations, 1),
                        bytesText(m.freedBytes)});
    }
    out << formatTable({"MODULE", "ALLOCATED", "ALLOCATIONS", "FREED"}, rows);
}

} // namespace

void printMemory(std::ostream& out, const MemorySummary& memory, std::size_t top)
{
    if (!memory.recorded) {
        out << "\nmemory: no allocation was reported during the measured forwards\n";
        return;
    }
    out << "\nmemory per forward: peak " << bytesText(double(memory.peakBytes)) << " above the forward's start, in "
        << module_path::displayName(memory.peakModule)
        << (memory.peakFunction.empty() ? "" : " (" + memory.peakFunction + ")") << '\n';
    if (memory.reservedPeakBytes > 0)
        out << "the caching allocator held at most " << bytesText(double(memory.reservedPeakBytes))
            << " reserved (its segments, allocated or cached)\n";
    std::vector<std::vector<std::string>> rows;
    for (const ModuleMemory& m : memory.modules) {
        if (top && rows.size() == top)
            break;
        rows.push_back({module_path::displayName(m.path), bytesText(m.allocatedBytes), fixed(m.allocations, 1),
                        bytesText(m.freedBytes), bytesText(double(m.peakBytes)),
                        m.liveAtExitBytes ? bytesText(double(*m.liveAtExitBytes)) : "-"});
    }
    out << "memory by module (its subtree; per forward; live bytes above the forward's start)";
    if (top && memory.modules.size() > top)
        out << " (top " << top << " of " << memory.modules.size() << "; --top 0 for all)";
    out << '\n' << formatTable({"MODULE", "ALLOCATED", "ALLOCATIONS", "FREED", "PEAK INSIDE", "LIVE AT EXIT"}, rows);
    printFunctionMemory(out, memory, top);
    printAliveAtPeak(out, memory, top);
    printDriverMemory(out, memory, top);
}

nlohmann::ordered_json memoryJson(const MemorySummary& memory)
{
    const auto functionsJson = [](const std::vector<FunctionMemory>& rows) {
        nlohmann::ordered_json functions = nlohmann::ordered_json::array();
        for (const FunctionMemory& f : rows)
            functions.push_back({{"function", f.function},
                                 {"provider", f.provider},
                                 {"calls", f.calls},
                                 {"allocated_bytes", f.allocatedBytes},
                                 {"allocations", f.allocations},
                                 {"peak_in_call_bytes", f.peakInCallBytes}});
        return functions;
    };
    const auto modulesJson = [](const std::vector<ModuleMemory>& rows) {
        nlohmann::ordered_json modules = nlohmann::ordered_json::array();
        for (const ModuleMemory& m : rows)
            modules.push_back({{"path", m.path},
                               {"allocated_bytes", m.allocatedBytes},
                               {"allocations", m.allocations},
                               {"freed_bytes", m.freedBytes},
                               {"peak_bytes", m.peakBytes},
                               {"live_at_exit_bytes", m.liveAtExitBytes ? nlohmann::ordered_json(*m.liveAtExitBytes)
                                                                        : nlohmann::ordered_json()}});
        return modules;
    };
    nlohmann::ordered_json out{{"recorded", memory.recorded},
                               {"peak_bytes", memory.peakBytes},
                               {"peak_module", memory.peakModule},
                               {"peak_function", memory.peakFunction},
                               {"reserved_peak_bytes", memory.reservedPeakBytes},
                               {"modules", modulesJson(memory.modules)},
                               {"functions", functionsJson(memory.functions)},
                               {"alive_at_peak", aliveAtPeakJson(memory)}};
    if (!memory.driverModules.empty())
        out["driver"] = {{"peak_bytes", memory.driverPeakBytes}, {"modules", modulesJson(memory.driverModules)}};
    return out;
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
    return (delta > 0 ? "+" : "") + bytesText(delta);
}

// Each function's memory on either side, its providers' rows summed: "original" against the plan's provider.
struct FunctionSide {
    std::string providers; // "original", "A, B" where module scopes differ
    double allocatedBytes = 0;
    std::int64_t peakInCallBytes = 0;
};

FunctionSide functionSide(const MemorySummary& memory, const std::string& function)
{
    FunctionSide side;
    for (const FunctionMemory& f : memory.functions) {
        if (f.function != function)
            continue;
        side.providers += (side.providers.empty() ? "" : ", ") + f.provider;
        side.allocatedBytes += f.allocatedBytes;
        side.peakInCallBytes = std::max(side.peakInCallBytes, f.peakInCallBytes);
    }
    return side;
}

// Per function, the baseline's provider against the plan's: what the calls allocated and the most live in one call
// (a provider's workspace shows here before it shows in a module's peak).
void printFunctionMemoryComparison(std::ostream& out, const MemorySummary& before, const MemorySummary& after,
                                   std::size_t top)
{
    std::vector<std::string> functions;
    for (const MemorySummary* side : {&after, &before})
        for (const FunctionMemory& f : side->functions)
            if (std::find(functions.begin(), functions.end(), f.function) == functions.end())
                functions.push_back(f.function);
    if (functions.empty())
        return;
    std::vector<std::vector<std::string>> rows;
    for (const std::string& function : functions) {
        if (top && rows.size() == top)
            break;
        const FunctionSide b = functionSide(before, function), a = functionSide(after, function);
        rows.push_back({function, b.providers.empty() ? "-" : b.providers, a.providers.empty() ? "-" : a.providers,
                        bytesText(b.allocatedBytes), bytesText(a.allocatedBytes),
                        change(b.allocatedBytes, a.allocatedBytes), bytesText(double(b.peakInCallBytes)),
                        bytesText(double(a.peakInCallBytes)),
                        change(double(b.peakInCallBytes), double(a.peakInCallBytes))});
    }
    out << "\nmemory by function and provider (per forward)";
    if (top && functions.size() > top)
        out << " (top " << top << " of " << functions.size() << "; --top 0 for all)";
    out << '\n'
        << formatTable({"FUNCTION", "PROVIDER BEFORE", "AFTER", "ALLOCATED BEFORE", "AFTER", "CHANGE",
                        "PEAK IN A CALL BEFORE", "AFTER", "CHANGE"},
                       rows);
}

} // namespace

void printMemoryComparison(std::ostream& out, const MemorySummary& before, const MemorySummary& after, std::size_t top)
{
    if (!before.recorded && !after.recorded) {
        out << "\nmemory: no allocation was reported during the measured forwards\n";
        return;
    }
    out << "\nmemory per forward: peak " << bytesText(double(before.peakBytes)) << " -> "
        << bytesText(double(after.peakBytes)) << " (" << change(double(before.peakBytes), double(after.peakBytes))
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
        rows.push_back({module_path::displayName(path), bytesText(allocatedBefore), bytesText(allocatedAfter),
                        change(allocatedBefore, allocatedAfter), bytesText(peakBefore), bytesText(peakAfter),
                        change(peakBefore, peakAfter)});
    }
    out << "memory by module (its subtree; per forward)";
    if (top && paths.size() > top)
        out << " (top " << top << " of " << paths.size() << "; --top 0 for all)";
    out << '\n'
        << formatTable({"MODULE", "ALLOCATED BEFORE", "AFTER", "CHANGE", "PEAK BEFORE", "AFTER", "CHANGE"}, rows);
    printFunctionMemoryComparison(out, before, after, top);
}

nlohmann::ordered_json memoryComparisonJson(const MemorySummary& before, const MemorySummary& after)
{
    return {{"baseline", memoryJson(before)},
            {"plan", memoryJson(after)},
            {"peak_change_bytes", after.peakBytes - before.peakBytes}};
}

void reportPeakChange(Report& report, ModelSession& session, const Plan& plan)
{
    try {
        const PeakMemoryChange change = measurePeakChange(session, plan, session.device());
        report.text << "peak memory per forward, without and with the plan: " << describePeakChange(change) << '\n';
        if (report.json.is_object())
            report.json["peak_memory"] = {{"baseline_bytes", change.baselineBytes},
                                          {"plan_bytes", change.planBytes},
                                          {"change_percent", change.percent()},
                                          {"baseline_peak_module", change.baselineModule},
                                          {"plan_peak_module", change.planModule}};
    } catch (const std::exception& e) {
        report.diagnostic(std::string("peak memory not measured: ") + e.what());
    }
}

} // namespace kforge::cli
