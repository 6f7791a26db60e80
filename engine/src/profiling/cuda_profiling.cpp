// SPDX-License-Identifier: Apache-2.0
// The CUDA side of a profile run: CUPTI activity tracing (cupti_activity_api) for the measured forwards,
// module scopes and function calls pushed as external correlation ids and NVTX ranges, and the records
// attributed on the host tables of the recorder (kernel_attribution).
#include "profiling/cuda_profiling.h"

#include "profiling/cupti_activity_api.h"
#include "profiling/cupti_info.h"
#include "profiling/kernel_attribution.h"
#include "profiling/nvtx_ranges.h"

#include <torch/cuda.h>

#ifdef KFORGE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kforge::profiling {

struct CudaProfiling::Impl {
    CuptiActivityApi& api = CuptiActivityApi::singleton();
    bool stopped = false;
    std::unordered_map<std::uint64_t, FunctionCallInfo> extraCalls;
    std::unordered_map<std::uint64_t, std::string> extraScopes;
    std::vector<MemoryRecord> deviceMemory; // finish()'s, with CUPTI's memory records enabled
};

namespace {

void pushModule(std::uint64_t id, const char* path)
{
    CuptiActivityApi::pushCorrelationId(CorrelationKind::ModuleScope, id);
    nvtx::pushModuleScope(path);
}
void popModule()
{
    nvtx::pop();
    CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope);
}
void pushCall(std::uint64_t id) { CuptiActivityApi::pushCorrelationId(CorrelationKind::FunctionCall, id); }
void popCall() { CuptiActivityApi::popCorrelationId(CorrelationKind::FunctionCall); }

} // namespace

bool CudaProfiling::available(std::string* why)
{
#ifndef KFORGE_WITH_CUPTI
    if (why)
        *why = "this build has no CUPTI";
    return false;
#else
    if (!torch::cuda::is_available()) {
        if (why)
            *why = "no CUDA device is visible on this machine";
        return false;
    }
    return CuptiActivityApi::available(why);
#endif
}

std::string CudaProfiling::deviceName()
{
#ifdef KFORGE_WITH_CUDA
    cudaDeviceProp prop{};
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        return prop.name;
#endif
    return "CUDA device";
}

std::string CudaProfiling::cuptiVersion() { return cuptiInfo(true).version; }

CudaProfiling::CudaProfiling(HostRecorder& recorder, bool deviceMemory)
    : m_recorder(recorder), m_impl(std::make_unique<Impl>())
{
    synchronize(); // warm-up work must not land in the trace
    m_impl->api.start(deviceMemory);
    pushScopesFrom(m_recorder);
}

void CudaProfiling::pushScopesFrom(HostRecorder& recorder)
{
    recorder.hooks = {&pushModule, &popModule, &pushCall, &popCall};
}

void CudaProfiling::trackGraphNodes(bool on)
{
    if (on)
        CuptiActivityApi::singleton().enableGraphNodeTracking();
    else
        CuptiActivityApi::singleton().disableGraphNodeTracking();
}

void CudaProfiling::addHostTables(const std::unordered_map<std::uint64_t, FunctionCallInfo>& functionCalls,
                                  const std::unordered_map<std::uint64_t, std::string>& moduleScopes)
{
    m_impl->extraCalls.insert(functionCalls.begin(), functionCalls.end());
    m_impl->extraScopes.insert(moduleScopes.begin(), moduleScopes.end());
}

CudaProfiling::~CudaProfiling()
{
    m_recorder.hooks = {};
    if (!m_impl->stopped) {
        try {
            m_impl->api.stop();
        } catch (...) {
        }
        CuptiActivityApi::popAllCorrelationIds();
    }
}

void CudaProfiling::synchronize()
{
#ifdef KFORGE_WITH_CUDA
    cudaDeviceSynchronize();
#endif
}

std::vector<KernelRecord> CudaProfiling::finish(std::uint64_t& dropped)
{
    m_recorder.hooks = {};
    synchronize();
    m_impl->api.stop();
    m_impl->stopped = true;
    CuptiActivityApi::popAllCorrelationIds();
    nvtx::popAll();

    // This run's scopes and calls, and those of a replayed capture (its graph nodes point at the latter).
    HostTables tables;
    for (const auto* calls : {&m_recorder.functionCalls, &m_impl->extraCalls})
        for (const auto& [id, call] : *calls)
            tables.functionCalls.emplace(
                id, FunctionCallAttribution{call.modulePath, call.function, call.op, call.provider});
    tables.moduleScopes = m_recorder.moduleScopes;
    tables.moduleScopes.insert(m_impl->extraScopes.begin(), m_impl->extraScopes.end());
    tables.graphNodes = m_impl->api.graphNodes();
    tables.iterationStarts = m_recorder.iterationStarts;
    AttributionOptions options;
    options.origin = m_impl->api.origin();
    options.profileStartHostNs = m_recorder.originNs();
    const ParsedActivities parsed = m_impl->api.parseCompletedBuffers();
    dropped = m_impl->api.droppedRecords();
    m_impl->deviceMemory = attributeDeviceMemory(parsed, tables, options);
    return attributeKernels(parsed, tables, options);
}

std::vector<MemoryRecord> CudaProfiling::takeDeviceMemory() { return std::move(m_impl->deviceMemory); }

} // namespace kforge::profiling
