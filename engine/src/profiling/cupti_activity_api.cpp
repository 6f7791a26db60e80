// SPDX-License-Identifier: Apache-2.0
#include "profiling/cupti_activity_api.h"

#include <kforge/error.h>

#include "runtime/clock.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <atomic>
#include <cstring>
#include <utility>

namespace kforge::profiling {

#ifdef KFORGE_WITH_CUPTI
static_assert(kCuptiSuccess == CUPTI_SUCCESS);
static_assert(kCuptiErrorMaxLimitReached == CUPTI_ERROR_MAX_LIMIT_REACHED);
static_assert(kCuptiErrorNotInitialized == CUPTI_ERROR_NOT_INITIALIZED);
static_assert(kCuptiErrorQueueEmpty == CUPTI_ERROR_QUEUE_EMPTY);
static_assert(kCuptiErrorMultipleSubscribers == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
#endif

namespace {

// The started instance: CUPTI's buffer callbacks are process-global and reach it through these trampolines.
std::atomic<CuptiActivityApi*> g_bufferOwner{nullptr};

// Per thread: the external ids pushed successfully, per kind (CUPTI keeps the same stacks).
thread_local std::vector<std::uint64_t> t_correlationStacks[2];

std::vector<std::uint64_t>& stackOf(CorrelationKind kind)
{
    return t_correlationStacks[kind == CorrelationKind::FunctionCall ? 0 : 1];
}

std::uint8_t* allocateBuffer(std::size_t size)
{
    // aligned_alloc wants a size that is a multiple of the alignment.
    const std::size_t a = CuptiActivityApi::kBufferAlignment;
    return static_cast<std::uint8_t*>(std::aligned_alloc(a, (size + a - 1) / a * a));
}

#ifdef KFORGE_WITH_CUPTI
std::string resultString(CUptiResult result)
{
    const char* text = nullptr;
    if (cuptiGetResultString(result, &text) == CUPTI_SUCCESS && text)
        return std::string(text) + " (" + std::to_string(int(result)) + ")";
    return "CUPTI error " + std::to_string(int(result));
}

CUpti_ExternalCorrelationKind cuptiKindOf(CorrelationKind kind)
{
    return kind == CorrelationKind::FunctionCall ? CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0
                                                 : CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
}

// The kinds start() enables, in this order (disabled in reverse).
constexpr CUpti_ActivityKind kTracedKinds[] = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,
};

void CUPTIAPI bufferRequestedTrampoline(uint8_t** buffer, size_t* size, size_t* maxNumRecords)
{
    if (CuptiActivityApi* api = g_bufferOwner.load()) {
        api->bufferRequested(buffer, size, maxNumRecords);
        return;
    }
    // No instance (destroyed while CUPTI still works): hand out a buffer anyway, as refusing can crash old CUPTI.
    *buffer = allocateBuffer(CuptiActivityApi::kBufferSize);
    *size = *buffer ? CuptiActivityApi::kBufferSize : 0;
    *maxNumRecords = 0;
}

void CUPTIAPI bufferCompletedTrampoline(CUcontext, uint32_t streamId, uint8_t* buffer, size_t size, size_t validSize)
{
    if (CuptiActivityApi* api = g_bufferOwner.load())
        api->bufferCompleted(buffer, size, validSize, streamId);
    else
        std::free(buffer);
}

void CUPTIAPI subscriberCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata)
{
    if (domain != CUPTI_CB_DOMAIN_RESOURCE || !userdata || !cbdata)
        return;
    if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)
        return;
    auto* api = static_cast<CuptiActivityApi*>(userdata);
    const auto* resource = static_cast<const CUpti_ResourceData*>(cbdata);
    const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
    if (!graph || !graph->node)
        return;
    uint64_t nodeId = 0;
    if (cuptiGetGraphNodeId(graph->node, &nodeId) != CUPTI_SUCCESS)
        return;
    uint64_t originalId = 0;
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && graph->originalNode &&
        cuptiGetGraphNodeId(graph->originalNode, &originalId) == CUPTI_SUCCESS)
        api->recordGraphNodeClone(nodeId, originalId);
    else
        api->recordGraphNode(nodeId, CuptiActivityApi::currentScope());
}
#endif

} // namespace

CuptiActivityApi::CuptiActivityApi() : CuptiActivityApi(Options{}) {}

CuptiActivityApi::CuptiActivityApi(Options options) : m_options(options)
{
    if (m_options.bufferSize < kBufferAlignment)
        m_options.bufferSize = kBufferSize;
}

CuptiActivityApi::~CuptiActivityApi()
{
    try {
        stop();
        disableGraphNodeTracking();
    } catch (...) {
    }
    CuptiActivityApi* self = this;
    g_bufferOwner.compare_exchange_strong(self, nullptr);
}

CuptiActivityApi& CuptiActivityApi::singleton()
{
    // Never destroyed: CUPTI may call back during process exit.
    static auto* instance = new CuptiActivityApi();
    return *instance;
}

std::uint32_t CuptiActivityApi::cuptiVersion()
{
#ifdef KFORGE_WITH_CUPTI
    uint32_t version = 0;
    if (cuptiGetVersion(&version) == CUPTI_SUCCESS)
        return version;
#endif
    return 0;
}

bool CuptiActivityApi::available(std::string* why)
{
    auto fail = [&](std::string reason) {
        if (why)
            *why = std::move(reason);
        return false;
    };
#ifndef KFORGE_WITH_CUPTI
    return fail("this build has no CUPTI (it was configured without the CUDA toolkit), so CUDA kernels cannot be "
                "traced");
#else
    if (cuptiVersion() == 0)
        return fail("libcupti does not answer cuptiGetVersion, so CUDA kernels cannot be traced");
    int devices = 0;
    try {
        if (at::detail::getCUDAHooks().hasCUDA())
            devices = at::detail::getCUDAHooks().getNumGPUs();
    } catch (...) {
        devices = 0;
    }
    if (devices <= 0)
        return fail("no CUDA device is visible on this machine, so CUDA kernels cannot be traced (use the CPU "
                    "profile, which times ATen ops on the host)");
    if (why)
        why->clear();
    return true;
#endif
}

std::string CuptiActivityApi::subscriberConflictMessage(const std::string& other)
{
    std::string text = "another CUPTI client is already subscribed in this process";
    if (!other.empty())
        text += " (" + other + ")";
    text += ": CUPTI allows one at a time. It is usually LibTorch's own profiler (torch.profiler / Kineto), or the "
            "process runs under Nsight Systems, Nsight Compute or cuda-gdb. Never run the PyTorch profiler together "
            "with KernelForge's profiler: stop it (or run without the other tool) and profile again.";
    return text;
}

void CuptiActivityApi::subscribe()
{
#ifdef KFORGE_WITH_CUPTI
    std::lock_guard<std::mutex> lock(m_subscriberMutex);
    if (m_subscriber)
        return;
    CUpti_SubscriberHandle handle = nullptr;
    std::string other;
#ifdef CUpti_SubscriberParams_STRUCT_SIZE
    char otherName[2 * CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "KernelForge";
    params.oldSubscriberName = otherName;
    params.oldSubscriberSize = sizeof(otherName);
    const CUptiResult result = cuptiSubscribe_v2(&handle, subscriberCallback, this, &params);
    other = std::string(otherName, strnlen(otherName, sizeof(otherName)));
#else
    const CUptiResult result = cuptiSubscribe(&handle, subscriberCallback, this);
#endif
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        throw Error("CUPTI", subscriberConflictMessage(other));
    if (result != CUPTI_SUCCESS)
        throw Error("CUPTI", "cuptiSubscribe failed: " + resultString(result));
    for (CUpti_CallbackId cbid : {CUpti_CallbackId(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED),
                                  CUpti_CallbackId(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)}) {
        const CUptiResult enabled = cuptiEnableCallback(1, handle, CUPTI_CB_DOMAIN_RESOURCE, cbid);
        if (enabled != CUPTI_SUCCESS) {
            cuptiUnsubscribe(handle);
            throw Error("CUPTI", "cannot enable the CUDA graph node callbacks: " + resultString(enabled));
        }
    }
    m_subscriber = handle;
#else
    throw Error("CUPTI", "this build has no CUPTI (it was configured without the CUDA toolkit)");
#endif
}

void CuptiActivityApi::unsubscribe()
{
#ifdef KFORGE_WITH_CUPTI
    std::lock_guard<std::mutex> lock(m_subscriberMutex);
    if (!m_subscriber)
        return;
    auto handle = static_cast<CUpti_SubscriberHandle>(m_subscriber);
    cuptiEnableDomain(0, handle, CUPTI_CB_DOMAIN_RESOURCE);
    cuptiUnsubscribe(handle);
    m_subscriber = nullptr;
#endif
}

void CuptiActivityApi::start(bool deviceMemory)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_active)
            throw Error("CUPTI", "tracing is already started");
    }
    std::string why;
    if (!available(&why))
        throw Error("CUPTI", why);
#ifdef KFORGE_WITH_CUPTI
    CuptiActivityApi* expected = nullptr;
    if (!g_bufferOwner.compare_exchange_strong(expected, this) && expected != this)
        throw Error("CUPTI", "another KernelForge trace is running in this process; only one can run at a time");
    // Until tracing runs, a failure hands the buffer callbacks back.
    struct ReleaseOwner {
        CuptiActivityApi* self;
        bool armed = true;
        ~ReleaseOwner()
        {
            if (armed)
                g_bufferOwner.compare_exchange_strong(self, nullptr);
        }
    } releaseOwner{this};
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_completed.clear();
        m_handedOut = 0;
        m_rejected = 0;
        m_cuptiDropped = 0;
    }
#if CUDA_VERSION >= 12030
    // Before registering the callbacks and enabling kinds, and once per process (changing it during a session
    // is undefined). The default is on from CUDA 13; set it anyway, as Kineto does.
    static std::once_flag perThreadBuffers;
    std::call_once(perThreadBuffers, [] {
        uint8_t perThread = 1;
        size_t attrSize = sizeof(perThread);
        cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &attrSize, &perThread);
    });
#endif
    subscribe(); // throws on a conflict with another subscriber (LibTorch's profiler)
    auto undo = [&](std::size_t enabledKinds) {
        for (std::size_t i = enabledKinds; i-- > 0;)
            cuptiActivityDisable(kTracedKinds[i]);
        if (!graphNodeTracking())
            unsubscribe();
    };
    const CUptiResult registered = cuptiActivityRegisterCallbacks(bufferRequestedTrampoline, bufferCompletedTrampoline);
    if (registered != CUPTI_SUCCESS) {
        undo(0);
        if (registered == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
            throw Error("CUPTI", subscriberConflictMessage(""));
        throw Error("CUPTI", "cuptiActivityRegisterCallbacks failed: " + resultString(registered));
    }
    // Clock origin: CUPTI's timestamp between two host readings.
    {
        const std::int64_t before = runtime::nowNs();
        uint64_t cuptiNs = 0;
        cuptiGetTimestamp(&cuptiNs);
        const std::int64_t after = runtime::nowNs();
        std::lock_guard<std::mutex> lock(m_mutex);
        m_origin = {cuptiNs, before + (after - before) / 2};
    }
    for (std::size_t i = 0; i < std::size(kTracedKinds); ++i) {
        const CUptiResult enabled = cuptiActivityEnable(kTracedKinds[i]);
        if (enabled != CUPTI_SUCCESS) {
            undo(i);
            if (enabled == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
                throw Error("CUPTI", subscriberConflictMessage(""));
            throw Error("CUPTI", "cannot enable activity kind " + std::to_string(int(kTracedKinds[i])) + ": " +
                                     resultString(enabled));
        }
    }
    if (deviceMemory) {
        const CUptiResult enabled = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2);
        if (enabled != CUPTI_SUCCESS) {
            undo(std::size(kTracedKinds));
            throw Error("CUPTI", "cannot enable CUPTI's memory records (MEMORY2) that --memory records on a GPU: " +
                                     resultString(enabled) + "; profile without --memory to trace the kernels only");
        }
    }
    releaseOwner.armed = false;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_active = true;
    m_deviceMemory = deviceMemory;
#else
    (void)deviceMemory;
#endif
}

void CuptiActivityApi::stop()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_active)
            return;
    }
#ifdef KFORGE_WITH_CUPTI
    // No lock of ours here: CUPTI calls bufferCompleted from inside the flush.
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (m_deviceMemory)
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
    for (std::size_t i = std::size(kTracedKinds); i-- > 0;)
        cuptiActivityDisable(kTracedKinds[i]);
    // Records completed between the first flush and the disable.
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    if (!graphNodeTracking())
        unsubscribe();
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_cuptiDropped += dropped;
        m_active = false;
    }
    // Every buffer came back in the flushes; another instance may trace now (late callbacks find no owner).
    CuptiActivityApi* self = this;
    g_bufferOwner.compare_exchange_strong(self, nullptr);
#endif
}

bool CuptiActivityApi::active() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_active;
}

ClockOrigin CuptiActivityApi::origin() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_origin;
}

std::uint32_t CuptiActivityApi::versionForCap() const
{
    return m_options.cuptiVersion ? m_options.cuptiVersion : cuptiVersion();
}

void CuptiActivityApi::bufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxNumRecords)
{
    *maxNumRecords = 0; // as many records as fit
    bool refuse = false;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_handedOut >= m_options.maxBuffers) {
            // Refusing is safe from CUPTI 27 (CUDA 12.9) on; older CUPTI could crash, so it gets the buffer.
            refuse = versionForCap() >= 27;
            if (refuse)
                ++m_rejected;
        }
        if (!refuse)
            ++m_handedOut;
    }
    if (refuse) {
        *buffer = nullptr;
        *size = 0;
        return;
    }
    *buffer = allocateBuffer(m_options.bufferSize);
    *size = *buffer ? m_options.bufferSize : 0;
    if (!*buffer) {
        std::lock_guard<std::mutex> lock(m_mutex);
        --m_handedOut;
        ++m_rejected;
    }
}

void CuptiActivityApi::bufferCompleted(std::uint8_t* buffer, std::size_t size, std::size_t validSize,
                                       std::uint32_t streamId)
{
    BufferPtr owned(buffer);
    if (!owned || validSize == 0)
        return;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_completed.push_back({std::move(owned), size, validSize, streamId});
}

std::vector<ActivityBuffer> CuptiActivityApi::takeCompletedBuffers()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return std::exchange(m_completed, {});
}

ParsedActivities CuptiActivityApi::parseCompletedBuffers(bool* allOk)
{
    ParsedActivities parsed;
    bool ok = true;
    for (ActivityBuffer& buffer : takeCompletedBuffers())
        ok = parseBuffer(buffer.data.get(), buffer.validSize, parsed).ok && ok;
    if (allOk)
        *allOk = ok;
    return parsed;
}

std::uint64_t CuptiActivityApi::droppedRecords() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_cuptiDropped + m_rejected;
}

std::uint64_t CuptiActivityApi::cuptiDroppedRecords() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_cuptiDropped;
}

std::uint64_t CuptiActivityApi::rejectedBuffers() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_rejected;
}

std::size_t CuptiActivityApi::buffersHandedOut() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_handedOut;
}

int CuptiActivityApi::pushCorrelationId(CorrelationKind kind, std::uint64_t id)
{
#ifdef KFORGE_WITH_CUPTI
    const CUptiResult result = cuptiActivityPushExternalCorrelationId(cuptiKindOf(kind), id);
    if (result == CUPTI_SUCCESS)
        stackOf(kind).push_back(id);
    return int(result);
#else
    (void)kind;
    (void)id;
    return kCuptiErrorNotInitialized;
#endif
}

int CuptiActivityApi::popCorrelationId(CorrelationKind kind, std::uint64_t* lastId)
{
    auto& stack = stackOf(kind);
    if (stack.empty())
        return kCuptiErrorQueueEmpty;
    stack.pop_back();
#ifdef KFORGE_WITH_CUPTI
    uint64_t last = 0;
    const CUptiResult result = cuptiActivityPopExternalCorrelationId(cuptiKindOf(kind), &last);
    if (lastId)
        *lastId = last;
    return int(result);
#else
    return kCuptiErrorQueueEmpty;
#endif
}

std::size_t CuptiActivityApi::correlationDepth(CorrelationKind kind) { return stackOf(kind).size(); }

std::uint64_t CuptiActivityApi::currentCorrelationId(CorrelationKind kind)
{
    const auto& stack = stackOf(kind);
    return stack.empty() ? 0 : stack.back();
}

void CuptiActivityApi::popAllCorrelationIds()
{
    for (CorrelationKind kind : {CorrelationKind::FunctionCall, CorrelationKind::ModuleScope})
        while (popCorrelationId(kind) != kCuptiErrorQueueEmpty) {
        }
}

GraphNodeScope CuptiActivityApi::currentScope()
{
    return {currentCorrelationId(CorrelationKind::ModuleScope), currentCorrelationId(CorrelationKind::FunctionCall)};
}

void CuptiActivityApi::enableGraphNodeTracking()
{
    subscribe();
    std::lock_guard<std::mutex> lock(m_graphMutex);
    m_graphTracking = true;
}

void CuptiActivityApi::disableGraphNodeTracking()
{
    {
        std::lock_guard<std::mutex> lock(m_graphMutex);
        if (!m_graphTracking)
            return;
        m_graphTracking = false;
    }
    if (!active())
        unsubscribe();
}

bool CuptiActivityApi::graphNodeTracking() const
{
    std::lock_guard<std::mutex> lock(m_graphMutex);
    return m_graphTracking;
}

void CuptiActivityApi::recordGraphNode(std::uint64_t nodeId, GraphNodeScope scope)
{
    std::lock_guard<std::mutex> lock(m_graphMutex);
    m_graphNodes[nodeId] = scope;
}

void CuptiActivityApi::recordGraphNodeClone(std::uint64_t nodeId, std::uint64_t originalNodeId)
{
    std::lock_guard<std::mutex> lock(m_graphMutex);
    const auto original = m_graphNodes.find(originalNodeId);
    m_graphNodes[nodeId] = original != m_graphNodes.end() ? original->second : currentScope();
}

std::unordered_map<std::uint64_t, GraphNodeScope> CuptiActivityApi::graphNodes() const
{
    std::lock_guard<std::mutex> lock(m_graphMutex);
    return m_graphNodes;
}

void CuptiActivityApi::clearGraphNodes()
{
    std::lock_guard<std::mutex> lock(m_graphMutex);
    m_graphNodes.clear();
}

} // namespace kforge::profiling
