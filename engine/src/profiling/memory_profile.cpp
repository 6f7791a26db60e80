// SPDX-License-Identifier: Apache-2.0
#include <kforge/memory_profile.h>

#include <kforge/module_path.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace kforge {
namespace {

// The run's own device: a CUDA run's device allocations ("cuda:0"), not the host's beside them; every event of a run
// from a file that does not say its device.
bool onRunDevice(const MemoryRecord& event, const std::string& runDevice)
{
    return !event.driver && (runDevice.empty() || event.device.rfind(runDevice, 0) == 0);
}

// The allocations of event `at`'s iteration alive just after it, by the module and call that made them (paired with
// their frees by address; files from before addresses were recorded pair nothing and give no holders).
std::vector<PeakHolder> holdersAt(const std::vector<MemoryRecord>& events, size_t at, const std::string& device)
{
    const int iteration = events[at].iteration;
    std::map<std::uint64_t, const MemoryRecord*> alive;
    for (size_t i = 0; i <= at; ++i) {
        const MemoryRecord& event = events[i];
        if (event.iteration != iteration || event.address == 0 || !onRunDevice(event, device))
            continue;
        if (event.bytes > 0)
            alive[event.address] = &event;
        else
            alive.erase(event.address);
    }
    std::map<std::pair<std::string_view, std::string_view>, PeakHolder> byPlace;
    for (const auto& [address, allocation] : alive) {
        PeakHolder& holder = byPlace[{allocation->modulePath, allocation->function}];
        holder.module = allocation->modulePath;
        holder.function = allocation->function;
        holder.bytes += allocation->bytes;
        ++holder.allocations;
    }
    std::vector<PeakHolder> holders;
    for (auto& [place, holder] : byPlace)
        holders.push_back(std::move(holder));
    std::stable_sort(holders.begin(), holders.end(),
                     [](const PeakHolder& a, const PeakHolder& b) { return a.bytes > b.bytes; });
    return holders;
}

} // namespace

namespace {

// Per module, the bytes allocated and freed in it or below it and the peak reached while it was open, over the
// events `counted` takes (live bytes above each iteration's start, summed in the events' order); and the peak event.
struct ModuleFigures {
    std::vector<ModuleMemory> modules; // the root first, then by allocated bytes
    std::int64_t peakBytes = 0;
    size_t peakEvent = 0;
};

template <class Counted> ModuleFigures moduleFigures(const ProfileRun& run, Counted counted)
{
    // Summed as integers, divided once: per-forward figures that do not depend on the order of the events.
    struct Totals {
        std::int64_t allocated = 0, freed = 0, allocations = 0, peak = 0;
        std::optional<std::int64_t> liveAtExit;
    };
    ModuleFigures figures;
    std::map<std::string_view, Totals> byModule;
    const double forwards = std::max(1, run.iterations);
    std::map<int, std::int64_t> live;
    std::map<int, std::vector<LiveBytesStep>> steps; // by iteration
    for (size_t i = 0; i < run.memory.size(); ++i) {
        const MemoryRecord& event = run.memory[i];
        if (!counted(event))
            continue;
        std::int64_t& now = live[event.iteration];
        now += event.bytes;
        steps[event.iteration].push_back({event.timeNs, now});
        if (now > figures.peakBytes) {
            figures.peakBytes = now;
            figures.peakEvent = i;
        }
        // The module and each module above it: a module's figures hold its subtree's.
        std::vector<std::string_view> scopes = module_path::ancestorsOf(event.modulePath);
        scopes.insert(scopes.begin(), event.modulePath);
        for (const std::string_view path : scopes) {
            Totals& module = byModule[path];
            if (event.bytes > 0) {
                module.allocated += event.bytes;
                ++module.allocations;
            } else {
                module.freed -= event.bytes;
            }
            module.peak = std::max(module.peak, now);
        }
    }
    // When each module returned: the live bytes after the last event at or before its range's end.
    const auto earlier = [](const LiveBytesStep& a, const LiveBytesStep& b) { return a.timeNs < b.timeNs; };
    for (auto& [iteration, series] : steps) // another thread's event may come out of time order
        std::stable_sort(series.begin(), series.end(), earlier);
    for (const RangeRecord& range : run.ranges) {
        if (range.kind != "module")
            continue;
        const auto module = byModule.find(range.name);
        const auto series = steps.find(range.iteration);
        if (module == byModule.end())
            continue;
        std::int64_t liveThen = 0;
        if (series != steps.end()) {
            const auto after = std::upper_bound(series->second.begin(), series->second.end(),
                                                LiveBytesStep{range.startNs + range.durationNs, 0}, earlier);
            if (after != series->second.begin())
                liveThen = std::prev(after)->liveBytes;
        }
        std::optional<std::int64_t>& most = module->second.liveAtExit;
        most = std::max(most.value_or(liveThen), liveThen);
    }
    for (const auto& [path, totals] : byModule)
        figures.modules.push_back({std::string(path), double(totals.allocated) / forwards,
                                   double(totals.freed) / forwards, double(totals.allocations) / forwards, totals.peak,
                                   totals.liveAtExit});
    std::stable_sort(figures.modules.begin(), figures.modules.end(), [](const ModuleMemory& a, const ModuleMemory& b) {
        if (a.path.empty() != b.path.empty())
            return a.path.empty();
        return a.allocatedBytes > b.allocatedBytes;
    });
    return figures;
}

// Each allocation and free made inside a function call, given to the call's range (the innermost range of that
// function on the same thread holding its time), and summed per function and provider.
std::vector<FunctionMemory> functionFigures(const ProfileRun& run)
{
    std::map<std::uint64_t, std::vector<const RangeRecord*>> callsByThread; // by start
    for (const RangeRecord& range : run.ranges)
        if (range.kind == "function")
            callsByThread[range.thread].push_back(&range);
    for (auto& [thread, calls] : callsByThread)
        std::stable_sort(calls.begin(), calls.end(),
                         [](const RangeRecord* a, const RangeRecord* b) { return a->startNs < b->startNs; });
    const auto callOf = [&](const MemoryRecord& event) -> const RangeRecord* {
        const auto thread = callsByThread.find(event.thread);
        if (thread == callsByThread.end())
            return nullptr;
        const auto& calls = thread->second;
        auto it = std::upper_bound(calls.begin(), calls.end(), event.timeNs,
                                   [](std::int64_t t, const RangeRecord* r) { return t < r->startNs; });
        for (int walked = 0; it != calls.begin() && walked < 8; ++walked) { // nested calls are few
            const RangeRecord* call = *--it;
            if (call->name == event.function && event.timeNs <= call->startNs + call->durationNs)
                return call;
        }
        return nullptr;
    };
    struct Totals {
        std::int64_t allocated = 0, allocations = 0, peak = 0;
    };
    std::map<std::pair<std::string_view, std::string_view>, Totals> byFunction;
    std::map<const RangeRecord*, std::int64_t> liveInCall; // above the call's start
    for (const MemoryRecord& event : run.memory) {
        if (event.function.empty() || !onRunDevice(event, run.device))
            continue;
        const RangeRecord* call = callOf(event);
        if (!call)
            continue;
        Totals& totals = byFunction[{call->name, call->provider}];
        std::int64_t& live = liveInCall[call];
        live += event.bytes;
        totals.peak = std::max(totals.peak, live);
        if (event.bytes > 0) {
            totals.allocated += event.bytes;
            ++totals.allocations;
        }
    }
    std::map<std::pair<std::string_view, std::string_view>, std::int64_t> calls;
    for (const RangeRecord& range : run.ranges)
        if (range.kind == "function")
            ++calls[{range.name, range.provider}];
    const double forwards = std::max(1, run.iterations);
    std::vector<FunctionMemory> rows;
    for (const auto& [key, totals] : byFunction)
        rows.push_back({std::string(key.first), std::string(key.second), double(calls[key]) / forwards,
                        double(totals.allocated) / forwards, double(totals.allocations) / forwards, totals.peak});
    std::stable_sort(rows.begin(), rows.end(), [](const FunctionMemory& a, const FunctionMemory& b) {
        return a.allocatedBytes > b.allocatedBytes;
    });
    return rows;
}

} // namespace

MemorySummary summarizeMemory(const ProfileRun& run)
{
    MemorySummary summary;
    summary.recorded = !run.memory.empty();
    if (!summary.recorded)
        return summary;
    ModuleFigures allocator =
        moduleFigures(run, [&run](const MemoryRecord& event) { return onRunDevice(event, run.device); });
    summary.modules = std::move(allocator.modules);
    summary.peakBytes = allocator.peakBytes;
    if (summary.peakBytes > 0) {
        const MemoryRecord& peak = run.memory[allocator.peakEvent];
        summary.peakModule = std::string(peak.modulePath);
        summary.peakFunction = std::string(peak.function);
        summary.aliveAtPeak = holdersAt(run.memory, allocator.peakEvent, run.device);
    }
    for (const MemoryRecord& event : run.memory)
        if (onRunDevice(event, run.device))
            summary.reservedPeakBytes = std::max(summary.reservedPeakBytes, event.totalReservedBytes);
    summary.functions = functionFigures(run);
    ModuleFigures driver = moduleFigures(run, [](const MemoryRecord& event) { return event.driver; });
    summary.driverModules = std::move(driver.modules);
    summary.driverPeakBytes = driver.peakBytes;
    return summary;
}

LiveBytesSeries liveBytesOverTime(const ProfileRun& run)
{
    LiveBytesSeries series;
    std::map<int, std::int64_t> live; // by iteration, in the records' order as summarizeMemory() sums them
    for (const MemoryRecord& event : run.memory) {
        if (!onRunDevice(event, run.device))
            continue;
        std::int64_t& now = live[event.iteration];
        now += event.bytes;
        series.steps.push_back({event.timeNs, now});
    }
    // Threads record apart, so the records are not in time order across them; each step keeps its value.
    std::stable_sort(series.steps.begin(), series.steps.end(),
                     [](const LiveBytesStep& a, const LiveBytesStep& b) { return a.timeNs < b.timeNs; });
    for (size_t i = 0; i < series.steps.size(); ++i)
        if (series.peak < 0 || series.steps[i].liveBytes > series.steps[size_t(series.peak)].liveBytes)
            series.peak = int(i);
    return series;
}

std::vector<FlameFrame> memoryFlameGraph(const ProfileRun& run)
{
    // The allocations as records whose "duration" is their bytes: flameGraph() sums them per module and function
    // and keeps the forward's module order (its ranges), so both graphs read alike.
    ProfileRun allocations;
    allocations.iterations = run.iterations;
    allocations.modules = run.modules;
    allocations.ranges = run.ranges;
    for (const MemoryRecord& event : run.memory) {
        if (event.bytes <= 0 || !onRunDevice(event, run.device))
            continue;
        KernelRecord r;
        r.name = "allocations";
        r.modulePath = event.modulePath;
        r.function = event.function;
        r.durationNs = event.bytes * 1000; // flameGraph's microseconds are bytes here
        r.iteration = event.iteration;
        allocations.records.push_back(std::move(r));
    }
    if (allocations.records.empty())
        return {};
    return flameGraph(allocations);
}

} // namespace kforge
