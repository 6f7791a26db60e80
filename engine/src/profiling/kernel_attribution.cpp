// SPDX-License-Identifier: Apache-2.0
#include "profiling/kernel_attribution.h"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <iterator>
#include <limits>
#include <memory>
#include <tuple>
#include <unordered_map>

namespace kforge::profiling {

namespace {

// The ids CUPTI tagged one correlation id with. When a kind was tagged twice (it should not be), the larger
// id wins: ids grow as they are handed out, so it is the innermost scope, and the choice does not depend on
// the order the records arrived in.
struct ExternalIds {
    std::uint64_t functionCallId = 0;
    std::uint64_t moduleScopeId = 0;
};

const char* memcpyKindName(std::uint8_t kind)
{
    // CUpti_ActivityMemcpyKind
    static const char* const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return kind < std::size(names) ? names[kind] : "Unknown";
}

const char* memoryKindName(std::uint8_t kind)
{
    // CUpti_ActivityMemoryKind
    static const char* const names[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                        "Array",   "Managed",  "Device Static", "Managed Static"};
    return kind < std::size(names) ? names[kind] : "Unknown";
}

// Clock arithmetic modulo 2^64, as the CUPTI clock difference already is: timestamps of a record CUPTI could not
// time (0, or garbage) must give a wrong time, not undefined behaviour.
std::int64_t wrappingAdd(std::int64_t a, std::int64_t b)
{
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

std::int64_t wrappingSub(std::int64_t a, std::int64_t b)
{
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

int saturatedSum(int a, int b)
{
    return static_cast<int>(std::clamp<std::int64_t>(std::int64_t{a} + b, std::numeric_limits<int>::min(),
                                                     std::numeric_limits<int>::max()));
}

struct Attributor {
    const HostTables& tables;
    const AttributionOptions& options;
    AttributionStats& stats;
    std::unordered_map<std::uint32_t, ExternalIds> external;
    std::unordered_map<std::uint32_t, const ApiActivity*> apis;

    // Fills modulePath, function, op, provider, thread, iteration and graphReplay of `record`.
    void attribute(KernelRecord& record, std::uint32_t correlation, std::uint64_t graphNodeId,
                   std::uint64_t fallbackLaunchCuptiNs)
    {
        GraphNodeScope scope;
        bool fromNodeMap = false;
        record.graphReplay = graphNodeId != 0;
        if (record.graphReplay) {
            ++stats.graphReplay;
            const auto node = tables.graphNodes.find(graphNodeId);
            if (node != tables.graphNodes.end()) {
                scope = node->second;
                fromNodeMap = true;
            }
        }
        if (!fromNodeMap) {
            const auto ids = external.find(correlation);
            if (ids != external.end())
                scope = {ids->second.moduleScopeId, ids->second.functionCallId};
        }

        bool haveFunction = false, haveModule = false;
        if (scope.functionCallId) {
            const auto call = tables.functionCalls.find(scope.functionCallId);
            if (call != tables.functionCalls.end()) {
                record.modulePath = call->second.modulePath;
                record.function = call->second.function;
                record.op = call->second.op;
                record.provider = call->second.provider;
                haveFunction = haveModule = true;
            } else {
                ++stats.unknownIds;
            }
        }
        if (scope.moduleScopeId) {
            const auto module = tables.moduleScopes.find(scope.moduleScopeId);
            if (module != tables.moduleScopes.end()) {
                record.modulePath = module->second; // the innermost module at the launch
                haveModule = true;
            } else {
                ++stats.unknownIds;
            }
        }
        if (haveFunction)
            ++stats.withFunction;
        if (haveModule)
            ++stats.withModule;
        else
            ++stats.unattributed;
        if (fromNodeMap && haveModule)
            ++stats.graphNodeMapped;

        std::uint64_t launchCuptiNs = fallbackLaunchCuptiNs;
        const auto api = apis.find(correlation);
        if (api != apis.end()) {
            record.thread = api->second->thread;
            launchCuptiNs = api->second->start;
        } else {
            ++stats.withoutApiRecord;
        }
        record.iteration = iterationAt(cuptiToHostNs(launchCuptiNs, options.origin));
    }

    int iterationAt(std::int64_t hostNs) const
    {
        const auto& starts = tables.iterationStarts;
        if (starts.empty())
            return 0;
        auto next = std::upper_bound(starts.begin(), starts.end(), hostNs,
                                     [](std::int64_t t, const std::pair<std::int64_t, int>& s) { return t < s.first; });
        if (next == starts.begin())
            return starts.front().second; // launched before the first iteration began: count it to the first
        return std::prev(next)->second;
    }

    void setTiming(KernelRecord& record, std::uint64_t start, std::uint64_t end) const
    {
        record.startNs = wrappingSub(cuptiToHostNs(start, options.origin), options.profileStartHostNs);
        // A record CUPTI could not time carries garbage: its duration is 0 or saturates, never negative.
        const std::uint64_t duration = end > start ? end - start : 0;
        record.durationNs =
            static_cast<std::int64_t>(std::min<std::uint64_t>(duration, std::numeric_limits<std::int64_t>::max()));
    }
};

} // namespace

std::int64_t cuptiToHostNs(std::uint64_t cuptiNs, const ClockOrigin& origin)
{
    return wrappingAdd(origin.hostNs, static_cast<std::int64_t>(cuptiNs - origin.cuptiNs));
}

std::string demangleKernelName(const std::string& name)
{
    if (name.rfind("_Z", 0) != 0)
        return name;
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                     std::free);
    return status == 0 && demangled ? std::string(demangled.get()) : name;
}

std::string memActivityName(const MemActivity& mem)
{
    if (mem.kind == MemKind::Memset)
        return std::string("Memset (") + memoryKindName(mem.dstKind) + ")";
    return std::string("Memcpy ") + memcpyKindName(mem.copyKind) + " (" + memoryKindName(mem.srcKind) + " -> " +
           memoryKindName(mem.dstKind) + ")";
}

namespace {

// The join's indexes: each correlation id's external ids and API call.
void indexCorrelations(Attributor& attributor, const ParsedActivities& activities)
{
    for (const ExternalCorrelation& e : activities.externalCorrelations) {
        if (e.kind != kExternalKindFunctionCall && e.kind != kExternalKindModuleScope)
            continue; // OpenACC, CUSTOM2, or another tool's ids
        ExternalIds& ids = attributor.external[e.correlation];
        std::uint64_t& slot = e.kind == kExternalKindFunctionCall ? ids.functionCallId : ids.moduleScopeId;
        slot = std::max(slot, e.externalId);
    }
    for (const ApiActivity& api : activities.apis) {
        auto [it, inserted] = attributor.apis.emplace(api.correlation, &api);
        // Runtime and driver calls have distinct correlation ids; should two records share one, keep the
        // runtime call (the outer one), then the earlier.
        if (!inserted && std::tie(api.kind, api.start) < std::tie(it->second->kind, it->second->start))
            it->second = &api;
    }
}

} // namespace

std::vector<KernelRecord> attributeKernels(const ParsedActivities& activities, const HostTables& tables,
                                           const AttributionOptions& options, AttributionStats* statsOut)
{
    AttributionStats stats;
    Attributor attributor{tables, options, stats, {}, {}};
    indexCorrelations(attributor, activities);

    std::vector<KernelRecord> records;
    records.reserve(activities.kernels.size() + activities.mems.size());
    std::unordered_map<std::string, std::string> demangled;

    for (const KernelActivity& k : activities.kernels) {
        KernelRecord r;
        r.kind = "kernel";
        if (options.demangle) {
            auto [it, inserted] = demangled.try_emplace(k.name);
            if (inserted)
                it->second = demangleKernelName(k.name);
            r.name = it->second;
        } else {
            r.name = k.name;
        }
        attributor.setTiming(r, k.start, k.end);
        r.device = static_cast<int>(k.device);
        r.stream = k.stream;
        r.grid = k.grid;
        r.block = k.block;
        r.registersPerThread = k.registers;
        r.sharedMemoryBytes = saturatedSum(k.staticSharedMemory, k.dynamicSharedMemory);
        r.correlation = k.correlation;
        attributor.attribute(r, k.correlation, k.graphNodeId, k.start);
        ++stats.kernels;
        records.push_back(std::move(r));
    }
    for (const MemActivity& m : activities.mems) {
        KernelRecord r;
        r.kind = m.kind == MemKind::Memset ? "memset" : "memcpy";
        r.name = memActivityName(m);
        attributor.setTiming(r, m.start, m.end);
        r.device = static_cast<int>(m.device);
        r.stream = m.stream;
        r.correlation = m.correlation;
        attributor.attribute(r, m.correlation, m.graphNodeId, m.start);
        ++(m.kind == MemKind::Memset ? stats.memsets : stats.memcpys);
        records.push_back(std::move(r));
    }

    std::sort(records.begin(), records.end(), [](const KernelRecord& a, const KernelRecord& b) {
        return std::tie(a.startNs, a.durationNs, a.device, a.stream, a.correlation, a.kind, a.name) <
               std::tie(b.startNs, b.durationNs, b.device, b.stream, b.correlation, b.kind, b.name);
    });
    if (statsOut)
        *statsOut = stats;
    return records;
}

std::vector<MemoryRecord> attributeDeviceMemory(const ParsedActivities& activities, const HostTables& tables,
                                                const AttributionOptions& options)
{
    if (activities.deviceMemory.empty()) // a run without --memory: no join to index
        return {};
    AttributionStats stats;
    Attributor attributor{tables, options, stats, {}, {}};
    indexCorrelations(attributor, activities);
    std::vector<const DeviceMemoryActivity*> byTime;
    for (const DeviceMemoryActivity& m : activities.deviceMemory)
        byTime.push_back(&m);
    std::stable_sort(byTime.begin(), byTime.end(), [](const DeviceMemoryActivity* a, const DeviceMemoryActivity* b) {
        return a->timestamp < b->timestamp;
    });
    std::unordered_map<std::uint64_t, std::uint64_t> liveBytes; // by address: the allocation not yet released
    std::vector<MemoryRecord> records;
    records.reserve(byTime.size());
    std::int64_t total = 0; // the driver's live bytes after each record, of those allocated while tracing
    for (const DeviceMemoryActivity* m : byTime) {
        KernelRecord place; // the kernels' join, for its module, function, thread and iteration
        attributor.attribute(place, m->correlation, 0, m->timestamp);
        std::uint64_t bytes = m->bytes;
        if (m->release) {
            if (const auto it = liveBytes.find(m->address); it != liveBytes.end()) {
                bytes = bytes ? bytes : it->second;
                liveBytes.erase(it);
            }
        } else {
            liveBytes[m->address] = m->bytes;
        }
        MemoryRecord r;
        r.timeNs = wrappingSub(cuptiToHostNs(m->timestamp, options.origin), options.profileStartHostNs);
        const auto signedBytes = static_cast<std::int64_t>(
            std::min<std::uint64_t>(bytes, std::uint64_t(std::numeric_limits<std::int64_t>::max())));
        r.bytes = m->release ? -signedBytes : signedBytes;
        r.totalAllocatedBytes = total = wrappingAdd(total, r.bytes);
        r.modulePath = internedText(place.modulePath);
        r.function = internedText(place.function);
        r.device = internedText("cuda:" + std::to_string(m->device));
        r.thread = place.thread;
        r.iteration = place.iteration;
        r.address = m->address;
        r.driver = true;
        records.push_back(r);
    }
    return records;
}

} // namespace kforge::profiling
