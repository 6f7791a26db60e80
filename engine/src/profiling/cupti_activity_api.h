// SPDX-License-Identifier: Apache-2.0
#pragma once
// CuptiActivityApi: the only code that talks to CUPTI for tracing (docs/design/architecture.md, Mechanisms; after
// Kineto's CuptiActivityApi). It owns the activity buffers, enables the activity kinds, pushes and pops
// external correlation ids, and keeps the capture-time map of CUDA graph nodes to module scopes. Parsing is
// in cupti_records.h, attribution in kernel_attribution.h (pure functions over the parsed records).
//
// Exclusivity: CUPTI allows one subscriber per process and its buffer callbacks are process-global. Never run
// LibTorch's profiler (Kineto) together with ours; start() refuses with a kforge::Error when another
// subscriber holds CUPTI. Only one CuptiActivityApi instance can be started at a time.
//
// The header needs no CUPTI header; every CUPTI call is in the .cpp under KFORGE_WITH_CUPTI.
#include "profiling/cupti_records.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::profiling {

// Which external correlation id: CUSTOM0 carries the function-call id, CUSTOM1 the module-scope id.
enum class CorrelationKind { FunctionCall, ModuleScope };

// CUptiResult values our static helpers return (the numbers of cupti_result.h).
inline constexpr int kCuptiSuccess = 0;
inline constexpr int kCuptiErrorMaxLimitReached = 12;
inline constexpr int kCuptiErrorNotInitialized = 15; // also: this build has no CUPTI
inline constexpr int kCuptiErrorQueueEmpty = 18;
inline constexpr int kCuptiErrorMultipleSubscribers = 39;

struct FreeDeleter {
    void operator()(std::uint8_t* p) const noexcept { std::free(p); }
};
using BufferPtr = std::unique_ptr<std::uint8_t[], FreeDeleter>;

// A completed activity buffer: validSize bytes of records in `data` (capacity `size`).
struct ActivityBuffer {
    BufferPtr data;
    std::size_t size = 0;
    std::size_t validSize = 0;
    std::uint32_t streamId = 0;
};

class CuptiActivityApi {
public:
    static constexpr std::size_t kBufferSize = 4u << 20;  // CUPTI recommends 1 to 10 MiB
    static constexpr std::size_t kBufferAlignment = 8;    // ACTIVITY_RECORD_ALIGNMENT
    static constexpr std::size_t kDefaultMaxBuffers = 64; // 256 MiB of records (about a million kernels)

    struct Options {
        std::size_t bufferSize = kBufferSize;
        std::size_t maxBuffers = kDefaultMaxBuffers; // per start(); past it buffers are refused (see below)
        std::uint32_t cuptiVersion = 0;              // 0: ask cuptiGetVersion(); tests set it
    };

    CuptiActivityApi();
    explicit CuptiActivityApi(Options options);
    ~CuptiActivityApi(); // stops tracing and ends graph-node tracking when this instance holds them
    CuptiActivityApi(const CuptiActivityApi&) = delete;
    CuptiActivityApi& operator=(const CuptiActivityApi&) = delete;

    // The process-wide instance (the profiler's).
    static CuptiActivityApi& singleton();

    // Whether CUDA kernel tracing can run here; when not, *why says why (no CUPTI in this build, libcupti
    // not loadable, no CUDA device visible).
    static bool available(std::string* why = nullptr);
    // cuptiGetVersion() (130001 for CUDA 13.0 Update 1; works without a GPU), 0 when unavailable.
    static std::uint32_t cuptiVersion();

    // Starts tracing: per-thread activity buffers where the CUDA version has them, the subscriber (which is
    // also the exclusivity check), the buffer callbacks, the clock origin, and the activity kinds
    // CONCURRENT_KERNEL, RUNTIME, DRIVER, EXTERNAL_CORRELATION, MEMCPY, MEMSET. Resets the buffer count and the
    // drop counters and discards buffers nobody took. kforge::Error when tracing cannot run or another CUPTI
    // subscriber (LibTorch's profiler, Nsight) is active. `deviceMemory` adds MEMORY2 (the driver's allocations and
    // releases: what profile --memory records beside the caching allocator's reports).
    void start(bool deviceMemory = false);
    // Flushes every buffer (forced, with no lock of ours held: CUPTI re-enters bufferCompleted), disables the
    // kinds and reads CUPTI's dropped-record count. Completed buffers stay queued for takeCompletedBuffers().
    // No-op when not started.
    void stop();
    bool active() const;

    // Taken at start(): (cuptiGetTimestamp, host steady clock ns).
    ClockOrigin origin() const;

    // The completed buffers, in completion order; the caller owns them.
    std::vector<ActivityBuffer> takeCompletedBuffers();
    // Takes the completed buffers and parses them (pattern 2); the buffers are freed. Sets *allOk to false
    // when a buffer's walk did not end with CUPTI_ERROR_MAX_LIMIT_REACHED.
    ParsedActivities parseCompletedBuffers(bool* allOk = nullptr);

    // Records lost since start(): CUPTI's dropped count (read at stop()) plus buffers we refused past the cap
    // (each refusal loses at least one record; the count is a lower bound).
    std::uint64_t droppedRecords() const;
    std::uint64_t cuptiDroppedRecords() const;
    std::uint64_t rejectedBuffers() const;
    std::size_t buffersHandedOut() const; // since start()

    // The buffer callbacks' bookkeeping. CUPTI reaches them through static trampolines; tests drive them
    // directly, as Kineto's CallbackCuptiActivityApi does.
    //  bufferRequested: an 8-aligned buffer of Options::bufferSize, *maxNumRecords = 0; past maxBuffers it
    //  refuses (nullptr, size 0, counted as dropped), but only when cuptiGetVersion() >= 27 (CUDA 12.9+; older
    //  CUPTI could crash on a refusal and gets the buffer).
    void bufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxNumRecords);
    //  bufferCompleted: queues a buffer holding records, frees an empty one. Takes ownership of `buffer`.
    void bufferCompleted(std::uint8_t* buffer, std::size_t size, std::size_t validSize, std::uint32_t streamId);

    // External correlation ids, per calling thread (CUPTI keeps one stack per kind and thread). Returns the
    // CUptiResult as int. Depth counts successful pushes only; pop with none pushed returns
    // kCuptiErrorQueueEmpty without calling CUPTI. Without CUPTI push returns kCuptiErrorNotInitialized.
    static int pushCorrelationId(CorrelationKind kind, std::uint64_t id);
    static int popCorrelationId(CorrelationKind kind, std::uint64_t* lastId = nullptr);
    static std::size_t correlationDepth(CorrelationKind kind);       // on this thread
    static std::uint64_t currentCorrelationId(CorrelationKind kind); // on this thread, 0 when none
    static void popAllCorrelationIds(); // both kinds, on this thread (what a failed forward left)
    // The ids current on this thread, as a graph node created now would record them.
    static GraphNodeScope currentScope();

    // CUDA graph nodes -> module scope, recorded at capture time. While tracking is on, the resource-domain
    // callbacks CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED / GRAPHNODE_CLONED record each node's id
    // (cuptiGetGraphNodeId) with the scope current on the creating thread; a clone inherits its original's
    // scope. Replayed kernels carry the node id (graphNodeId), so attribution finds the captured module.
    // Must be on during capture (which may precede start()); holds the CUPTI subscriber until disabled.
    // kforge::Error on a subscriber conflict or without CUPTI.
    void enableGraphNodeTracking();
    void disableGraphNodeTracking();
    bool graphNodeTracking() const;
    // The callbacks' seams (tests call them directly).
    void recordGraphNode(std::uint64_t nodeId, GraphNodeScope scope);
    void recordGraphNodeClone(std::uint64_t nodeId, std::uint64_t originalNodeId);
    std::unordered_map<std::uint64_t, GraphNodeScope> graphNodes() const;
    void clearGraphNodes();

    // The error text for a subscriber conflict (`other`: the other subscriber's name if CUPTI told it).
    static std::string subscriberConflictMessage(const std::string& other);

private:
    void subscribe();   // m_subscriber; throws on conflict
    void unsubscribe(); // when neither tracing nor graph-node tracking needs it
    std::uint32_t versionForCap() const;

    Options m_options;
    mutable std::mutex m_mutex; // buffers and counters; never held while calling into CUPTI's flush
    std::vector<ActivityBuffer> m_completed;
    std::size_t m_handedOut = 0;
    std::uint64_t m_rejected = 0;
    std::uint64_t m_cuptiDropped = 0;
    ClockOrigin m_origin;
    bool m_active = false;
    bool m_deviceMemory = false; // MEMORY2 enabled by start()

    mutable std::mutex m_graphMutex;
    std::unordered_map<std::uint64_t, GraphNodeScope> m_graphNodes;
    bool m_graphTracking = false;

    std::mutex m_subscriberMutex;
    void* m_subscriber = nullptr; // CUpti_SubscriberHandle
};

} // namespace kforge::profiling
