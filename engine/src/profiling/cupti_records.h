// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUPTI activity records as plain values, and the parser that produces them (docs/design/architecture.md, Mechanisms).
//
// Two ways in, as Kineto tests them:
//   pattern 2: parseBuffer() walks a completed activity buffer with the real cuptiActivityGetNextRecord;
//   pattern 1: parseRecords() takes record pointers (synthetic structs in tests), no iterator involved.
// Both end in parseRecord(), the one place that reads CUPTI structs. Everything after it (the join of kernels
// with external correlation ids, attribution; kernel_attribution.h) is pure code over these values.
//
// The plain types need no CUPTI header. With KFORGE_WITH_CUPTI the header also names the record structs of
// the CUDA version we build against; KernelRecordStruct is chosen in exactly one place (below).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#ifdef KFORGE_WITH_CUPTI
#include <cupti.h>
#endif

namespace kforge::profiling {

#ifdef KFORGE_WITH_CUPTI
// The record struct versions CUPTI writes for the CUDA version we build against. Newer versions only append
// fields, and records are read through the current version only (the iterator advances by its size).
#if CUDA_VERSION >= 13010
using KernelRecordStruct = CUpti_ActivityKernel11; // adds `priority` (Kineto f2a74239)
#elif CUDA_VERSION >= 13000
using KernelRecordStruct = CUpti_ActivityKernel10; // 216 bytes: Kernel9 + isDeviceLaunched
#elif CUDA_VERSION >= 12000
using KernelRecordStruct = CUpti_ActivityKernel9;
#else
#error "KernelForge's CUPTI tracing needs CUDA 12 or newer"
#endif
#if CUDA_VERSION >= 13000
using MemcpyRecordStruct = CUpti_ActivityMemcpy6;
#else
using MemcpyRecordStruct = CUpti_ActivityMemcpy5;
#endif
using MemsetRecordStruct = CUpti_ActivityMemset4;
#if CUDA_VERSION >= 13000
using DeviceMemoryRecordStruct = CUpti_ActivityMemory4; // CUPTI_ACTIVITY_KIND_MEMORY2
#else
using DeviceMemoryRecordStruct = CUpti_ActivityMemory3;
#endif
using ApiRecordStruct = CUpti_ActivityAPI;
using ExternalCorrelationRecordStruct = CUpti_ActivityExternalCorrelation;
#endif

// External correlation kinds (CUpti_ExternalCorrelationKind values): CUSTOM0 carries our function-call ids,
// CUSTOM1 our module-scope ids.
inline constexpr std::uint32_t kExternalKindFunctionCall = 3; // CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0
inline constexpr std::uint32_t kExternalKindModuleScope = 4;  // CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1

// One kernel execution (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL or KERNEL).
struct KernelActivity {
    std::string name;                 // as CUPTI reports it (mangled C++ names stay mangled here)
    std::uint64_t start = 0, end = 0; // CUPTI timestamps, ns
    std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
    std::array<int, 3> grid{0, 0, 0};
    std::array<int, 3> block{0, 0, 0};
    int registers = 0;                                   // per thread
    int staticSharedMemory = 0, dynamicSharedMemory = 0; // bytes
    std::uint64_t graphNodeId = 0;                       // 0 unless a graph launch ran it
    std::uint32_t graphId = 0;
};

enum class MemKind { Memcpy, Memset };

// One memcpy (CUPTI_ACTIVITY_KIND_MEMCPY) or memset (CUPTI_ACTIVITY_KIND_MEMSET).
struct MemActivity {
    MemKind kind = MemKind::Memcpy;
    std::uint8_t copyKind = 0; // memcpy: CUpti_ActivityMemcpyKind (1 = HtoD, 2 = DtoH, 8 = DtoD, ...)
    std::uint8_t srcKind = 0;  // memcpy: CUpti_ActivityMemoryKind of the source
    std::uint8_t dstKind = 0;  // memcpy: of the destination; memset: of the memory set
    std::uint64_t bytes = 0;
    std::uint64_t start = 0, end = 0;
    std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
    std::uint64_t graphNodeId = 0;
    std::uint32_t graphId = 0;
};

// One allocation or release the driver made (CUPTI_ACTIVITY_KIND_MEMORY2): every cudaMalloc/cuMemAlloc and its free,
// so the caching allocator's segments, and what never passes through the caching allocator (AOTInductor's weights
// blob, cuBLAS and cuDNN workspaces, a library's own cudaMalloc).
struct DeviceMemoryActivity {
    bool release = false;        // CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, else an allocation
    std::uint8_t memoryKind = 0; // CUpti_ActivityMemoryKind (3 = device, 2 = pinned host, 5 = managed)
    std::uint64_t address = 0, bytes = 0;
    std::uint64_t timestamp = 0; // CUPTI ns
    std::uint32_t device = 0, correlation = 0;
};

enum class ApiKind { Runtime, Driver };

// One CUDA runtime or driver API call (the host side of a launch).
struct ApiActivity {
    ApiKind kind = ApiKind::Runtime;
    std::uint32_t correlation = 0;
    std::uint32_t cbid = 0;           // CUpti_runtime_api_trace_cbid or CUpti_driver_api_trace_cbid
    std::uint64_t start = 0, end = 0; // CUPTI timestamps, ns
    std::uint32_t process = 0, thread = 0;
};

// CUPTI emits one before each API record created while an external id of `kind` was pushed on that thread.
struct ExternalCorrelation {
    std::uint32_t kind = 0; // CUpti_ExternalCorrelationKind
    std::uint64_t externalId = 0;
    std::uint32_t correlation = 0;
};

// Everything parsed from one or more buffers, in arrival order (the join does not depend on the order).
struct ParsedActivities {
    std::vector<KernelActivity> kernels;
    std::vector<MemActivity> mems;
    std::vector<ApiActivity> apis;
    std::vector<ExternalCorrelation> externalCorrelations;
    std::vector<DeviceMemoryActivity> deviceMemory;
    std::uint64_t otherRecords = 0; // records of kinds we do not use

    void append(ParsedActivities&& other);
    std::size_t size() const
    {
        return kernels.size() + mems.size() + apis.size() + externalCorrelations.size() + deviceMemory.size();
    }
};

// A simultaneous pair of clocks, taken when tracing starts: CUPTI's timestamp and the host steady clock
// (runtime::nowNs()). CUPTI timestamps convert to host steady ns through it.
struct ClockOrigin {
    std::uint64_t cuptiNs = 0;
    std::int64_t hostNs = 0;
};

// The external ids that were current on the capturing thread when a CUDA graph node was created.
struct GraphNodeScope {
    std::uint64_t moduleScopeId = 0;  // CUSTOM1; 0 = none
    std::uint64_t functionCallId = 0; // CUSTOM0; 0 = none
};

// Reads one record (a CUpti_Activity of the current struct version). Returns false, counting it in
// otherRecords, for kinds we do not use; a null record is ignored. Without CUPTI it counts every record as other.
bool parseRecord(const void* record, ParsedActivities& out);

// Pattern 1: the records given by pointer, in order.
void parseRecords(const std::vector<const void*>& records, ParsedActivities& out);

struct BufferParseResult {
    std::size_t records = 0; // records the iterator returned
    int status = 0;          // the CUptiResult that ended the walk (12 = CUPTI_ERROR_MAX_LIMIT_REACHED: normal end)
    bool ok = false;         // the walk ended normally (or the buffer was empty)
};

// Pattern 2: walks validSize bytes of a completed buffer with cuptiActivityGetNextRecord until
// CUPTI_ERROR_MAX_LIMIT_REACHED. Without CUPTI: nothing parsed, ok = false.
BufferParseResult parseBuffer(std::uint8_t* buffer, std::size_t validSize, ParsedActivities& out);

} // namespace kforge::profiling
