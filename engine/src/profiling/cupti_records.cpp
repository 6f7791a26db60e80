// SPDX-License-Identifier: Apache-2.0
#include "profiling/cupti_records.h"

#include <cstddef>
#include <cstring>
#include <iterator>
#include <type_traits>

namespace kforge::profiling {

#ifdef KFORGE_WITH_CUPTI
static_assert(kExternalKindFunctionCall == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
static_assert(kExternalKindModuleScope == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1);
#if CUDA_VERSION >= 13000 && CUDA_VERSION < 13010
static_assert(sizeof(KernelRecordStruct) == 216, "CUpti_ActivityKernel10 is 216 bytes in CUDA 13.0");
#endif
static_assert(sizeof(ApiRecordStruct) == 40);
static_assert(sizeof(ExternalCorrelationRecordStruct) == 24);
#endif

namespace {

template <typename T> void moveAppend(std::vector<T>& to, std::vector<T>& from)
{
    if (to.empty()) {
        to = std::move(from);
        return;
    }
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

#ifdef KFORGE_WITH_CUPTI
// An enum field of a record, as the 32 bits CUPTI wrote: loading a value outside the enum's range (a kind from a
// newer CUPTI, a corrupt record) through the enum type would be undefined behaviour. The records are packed, so
// the field is copied by offset: binding a reference to a packed field makes GCC copy it into a temporary of the
// enum type first (UBSan, scripts/check-sanitizers asan, caught that load).
template <std::size_t Size> std::uint32_t rawEnumAt(const void* record, std::size_t offset)
{
    static_assert(Size == sizeof(std::uint32_t));
    std::uint32_t raw = 0;
    std::memcpy(&raw, static_cast<const unsigned char*>(record) + offset, sizeof raw);
    return raw;
}
#define KFORGE_RAW_ENUM(record, field)                                                                                 \
    rawEnumAt<sizeof((record).field)>(&(record), offsetof(std::remove_cvref_t<decltype(record)>, field))

KernelActivity kernelOf(const KernelRecordStruct& k)
{
    KernelActivity a;
    a.name = k.name ? k.name : "";
    a.start = k.start;
    a.end = k.end;
    a.device = k.deviceId;
    a.context = k.contextId;
    a.stream = k.streamId;
    a.correlation = k.correlationId;
    a.grid = {k.gridX, k.gridY, k.gridZ};
    a.block = {k.blockX, k.blockY, k.blockZ};
    a.registers = k.registersPerThread;
    a.staticSharedMemory = k.staticSharedMemory;
    a.dynamicSharedMemory = k.dynamicSharedMemory;
    a.graphNodeId = k.graphNodeId;
    a.graphId = k.graphId;
    return a;
}

MemActivity memcpyOf(const MemcpyRecordStruct& m)
{
    MemActivity a;
    a.kind = MemKind::Memcpy;
    a.copyKind = m.copyKind;
    a.srcKind = m.srcKind;
    a.dstKind = m.dstKind;
    a.bytes = m.bytes;
    a.start = m.start;
    a.end = m.end;
    a.device = m.deviceId;
    a.context = m.contextId;
    a.stream = m.streamId;
    a.correlation = m.correlationId;
    a.graphNodeId = m.graphNodeId;
    a.graphId = m.graphId;
    return a;
}

MemActivity memsetOf(const MemsetRecordStruct& m)
{
    MemActivity a;
    a.kind = MemKind::Memset;
    a.dstKind = static_cast<std::uint8_t>(m.memoryKind);
    a.bytes = m.bytes;
    a.start = m.start;
    a.end = m.end;
    a.device = m.deviceId;
    a.context = m.contextId;
    a.stream = m.streamId;
    a.correlation = m.correlationId;
    a.graphNodeId = m.graphNodeId;
    a.graphId = m.graphId;
    return a;
}

DeviceMemoryActivity deviceMemoryOf(const DeviceMemoryRecordStruct& r)
{
    DeviceMemoryActivity a;
    a.release = KFORGE_RAW_ENUM(r, memoryOperationType) == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    a.memoryKind = static_cast<std::uint8_t>(KFORGE_RAW_ENUM(r, memoryKind));
    a.address = r.address;
    a.bytes = r.bytes;
    a.timestamp = r.timestamp;
    a.device = r.deviceId;
    a.correlation = r.correlationId;
    return a;
}

ApiActivity apiOf(const ApiRecordStruct& r, ApiKind kind)
{
    ApiActivity a;
    a.kind = kind;
    a.correlation = r.correlationId;
    a.cbid = r.cbid;
    a.start = r.start;
    a.end = r.end;
    a.process = r.processId;
    a.thread = r.threadId;
    return a;
}
#endif

} // namespace

void ParsedActivities::append(ParsedActivities&& other)
{
    moveAppend(kernels, other.kernels);
    moveAppend(mems, other.mems);
    moveAppend(apis, other.apis);
    moveAppend(externalCorrelations, other.externalCorrelations);
    moveAppend(deviceMemory, other.deviceMemory);
    otherRecords += other.otherRecords;
    other = ParsedActivities{};
}

bool parseRecord(const void* record, ParsedActivities& out)
{
    if (!record)
        return false;
#ifdef KFORGE_WITH_CUPTI
    const auto* activity = static_cast<const CUpti_Activity*>(record);
    switch (KFORGE_RAW_ENUM(*activity, kind)) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        out.kernels.push_back(kernelOf(*static_cast<const KernelRecordStruct*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        out.mems.push_back(memcpyOf(*static_cast<const MemcpyRecordStruct*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        out.mems.push_back(memsetOf(*static_cast<const MemsetRecordStruct*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        out.apis.push_back(apiOf(*static_cast<const ApiRecordStruct*>(record), ApiKind::Runtime));
        return true;
    case CUPTI_ACTIVITY_KIND_DRIVER:
        out.apis.push_back(apiOf(*static_cast<const ApiRecordStruct*>(record), ApiKind::Driver));
        return true;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        out.deviceMemory.push_back(deviceMemoryOf(*static_cast<const DeviceMemoryRecordStruct*>(record)));
        return true;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& e = *static_cast<const ExternalCorrelationRecordStruct*>(record);
        out.externalCorrelations.push_back({KFORGE_RAW_ENUM(e, externalKind), e.externalId, e.correlationId});
        return true;
    }
    default:
        break;
    }
#endif
    ++out.otherRecords;
    return false;
}

void parseRecords(const std::vector<const void*>& records, ParsedActivities& out)
{
    for (const void* record : records)
        parseRecord(record, out);
}

BufferParseResult parseBuffer(std::uint8_t* buffer, std::size_t validSize, ParsedActivities& out)
{
    BufferParseResult result;
#ifdef KFORGE_WITH_CUPTI
    if (!buffer || validSize == 0) {
        result.ok = true;
        result.status = CUPTI_ERROR_MAX_LIMIT_REACHED;
        return result;
    }
    CUpti_Activity* record = nullptr;
    for (;;) {
        const CUptiResult status = cuptiActivityGetNextRecord(buffer, validSize, &record);
        if (status == CUPTI_SUCCESS) {
            ++result.records;
            parseRecord(record, out);
            continue;
        }
        result.status = status;
        result.ok = status == CUPTI_ERROR_MAX_LIMIT_REACHED;
        break;
    }
#else
    (void)buffer;
    (void)validSize;
    (void)out;
#endif
    return result;
}

} // namespace kforge::profiling
