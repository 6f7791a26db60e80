// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernel attribution: pure functions from parsed CUPTI activities (cupti_records.h) and the host's tables to
// kforge::KernelRecord values (docs/design/architecture.md, Mechanisms: "External correlation").
//
// The join: kernel.correlation -> the ExternalCorrelation records with that correlation id (CUSTOM0 =
// function-call id, CUSTOM1 = module-scope id) -> the host tables. Kernels replayed from a CUDA graph
// (graphNodeId != 0) all share the graph launch's correlation id; they are attributed per node through the
// capture-time map graphNodeId -> scope first, and fall back to the ids pushed around the replay.
// Nothing depends on the order records arrive in (buffers complete in any order; the external correlation
// record precedes its API record within a thread's buffer but may land in another buffer than the kernel).
// No CUPTI header or call here: tests run it on synthetic activities.
#include "profiling/cupti_records.h"

#include <kforge/profiling.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kforge::profiling {

// What one function-call id (CUSTOM0) stands for.
struct FunctionCallAttribution {
    std::string modulePath; // the innermost module the call ran in ("" = root)
    std::string function;   // "linear", "scaled_dot_product_attention", ...
    std::string op;         // "aten::linear"
    std::string provider;   // the provider that served it, or "original"
};

struct HostTables {
    std::unordered_map<std::uint64_t, FunctionCallAttribution> functionCalls; // CUSTOM0 id ->
    std::unordered_map<std::uint64_t, std::string> moduleScopes;              // CUSTOM1 id -> module path
    std::unordered_map<std::uint64_t, GraphNodeScope> graphNodes;             // graphNodeId -> ids at capture
    // (host steady ns when the iteration began, iteration number), ascending by time. A kernel belongs to the
    // last iteration that began at or before its launch (its API call; the kernel start when there is none).
    // Empty: every record gets iteration 0.
    std::vector<std::pair<std::int64_t, int>> iterationStarts;
};

struct AttributionOptions {
    ClockOrigin origin;                  // CuptiActivityApi::origin()
    std::int64_t profileStartHostNs = 0; // KernelRecord::startNs counts from here (host steady ns)
    bool demangle = true;                // kernel names: "_Z6kernelPf" -> "kernel(float*)"
};

struct AttributionStats {
    std::size_t kernels = 0, memcpys = 0, memsets = 0;
    std::size_t withFunction = 0;     // records attributed to a function call
    std::size_t withModule = 0;       // records attributed to a module scope (function or module id)
    std::size_t unattributed = 0;     // neither (modulePath "" and function "")
    std::size_t graphReplay = 0;      // records with a graph node id
    std::size_t graphNodeMapped = 0;  // ... attributed through the capture-time node map
    std::size_t unknownIds = 0;       // external ids that no host table knows
    std::size_t withoutApiRecord = 0; // no runtime/driver record with the correlation id (thread 0)
};

// CUPTI ns -> host steady ns through the origin pair.
std::int64_t cuptiToHostNs(std::uint64_t cuptiNs, const ClockOrigin& origin);

// The demangled name when `name` is a mangled C++ name, otherwise `name`.
std::string demangleKernelName(const std::string& name);

// "Memcpy HtoD (Pageable -> Device)", "Memset (Device)": the record names of memory operations.
std::string memActivityName(const MemActivity& mem);

// One KernelRecord per kernel, memcpy and memset (kind "kernel", "memcpy", "memset"), sorted by start time
// (then end, correlation, name). Unattributed records get modulePath "", function "", op "", provider "".
std::vector<KernelRecord> attributeKernels(const ParsedActivities& activities, const HostTables& tables,
                                           const AttributionOptions& options, AttributionStats* stats = nullptr);

// One MemoryRecord per driver allocation and release (MemoryRecord::driver; releases carry negative bytes), on the
// device "cuda:N", attributed as kernels are (the module and function call whose external ids tagged the cudaMalloc
// or free call), on the profile's clock, in time order. A release's bytes are its allocation's when CUPTI reports 0.
std::vector<MemoryRecord> attributeDeviceMemory(const ParsedActivities& activities, const HostTables& tables,
                                                const AttributionOptions& options);

} // namespace kforge::profiling
