// SPDX-License-Identifier: Apache-2.0
// CUPTI tracing (docs/design/architecture.md, Mechanisms): the record parser, the join of kernels with external
// correlation ids, CUDA-graph replay attribution, the buffer bookkeeping, the external-id stacks and NVTX.
// Synthetic buffers are malloc'ed, zeroed, 8-aligned and hold records of the CURRENT struct sizes: one test
// walks them with the real cuptiActivityGetNextRecord (pattern 2; libcupti answers without a GPU), the logic
// tests go through the record-pointer seam (pattern 1). The tracing tests need a CUDA device and skip without.
#include <kforge/error.h>
#include <kforge/profiling.h>

#include "profiling/cupti_activity_api.h"
#include "profiling/cupti_info.h"
#include "profiling/cupti_records.h"
#include "profiling/kernel_attribution.h"
#include "profiling/nvtx_ranges.h"
#include "runtime/clock.h"

#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#if defined(KFORGE_WITH_CUPTI) && __has_include(<ATen/cuda/CUDAGraph.h>) && __has_include(<cuda_runtime_api.h>)
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define KFORGE_TEST_CUDA_GRAPHS 1
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <thread>

using namespace kforge;
using namespace kforge::profiling;

#define REQUIRE_CUDA()                                                                                                 \
    if (!torch::cuda::is_available())                                                                                  \
    GTEST_SKIP() << "needs a CUDA device; none is visible on this machine"

#define REQUIRE_CUPTI_HEADERS()                                                                                        \
    if (!kCuptiHeaders)                                                                                                \
    GTEST_SKIP() << "this build has no CUPTI (configured without the CUDA toolkit): no records to write"

namespace {

#ifdef KFORGE_WITH_CUPTI
constexpr bool kCuptiHeaders = true;

// A synthetic activity buffer: malloc'ed, zeroed, 8-aligned; each record at the current struct size, at an
// 8-aligned offset, as CUPTI lays them out. `records` lists them for the pattern-1 seam.
class SyntheticBuffer {
public:
    explicit SyntheticBuffer(std::size_t capacity = 64 * 1024)
        : m_capacity(capacity), m_data(static_cast<std::uint8_t*>(std::aligned_alloc(8, capacity)))
    {
        std::memset(m_data, 0, m_capacity);
    }
    ~SyntheticBuffer() { std::free(m_data); }
    SyntheticBuffer(const SyntheticBuffer&) = delete;
    SyntheticBuffer& operator=(const SyntheticBuffer&) = delete;

    template <typename T> T* add(CUpti_ActivityKind kind)
    {
        m_used = (m_used + 7) / 8 * 8;
        if (m_used + sizeof(T) > m_capacity)
            throw std::runtime_error("synthetic buffer full");
        auto* record = reinterpret_cast<T*>(m_data + m_used);
        m_used += sizeof(T);
        reinterpret_cast<CUpti_Activity*>(record)->kind = kind;
        records.push_back(record);
        return record;
    }

    KernelRecordStruct* kernel(const char* name, std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                               std::uint64_t graphNodeId = 0)
    {
        auto* k = add<KernelRecordStruct>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        k->name = name;
        k->correlationId = correlation;
        k->start = start;
        k->end = end;
        k->deviceId = 0;
        k->contextId = 1;
        k->streamId = 7;
        k->graphNodeId = graphNodeId;
        k->graphId = graphNodeId ? 3 : 0;
        return k;
    }
    void external(std::uint32_t kind, std::uint64_t externalId, std::uint32_t correlation)
    {
        auto* e = add<ExternalCorrelationRecordStruct>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
        e->externalKind = static_cast<CUpti_ExternalCorrelationKind>(kind);
        e->externalId = externalId;
        e->correlationId = correlation;
    }
    ApiRecordStruct* api(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, std::uint32_t thread = 11,
                         CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_RUNTIME)
    {
        auto* a = add<ApiRecordStruct>(kind);
        a->correlationId = correlation;
        a->start = start;
        a->end = end;
        a->threadId = thread;
        a->processId = 99;
        a->cbid = 211; // cudaLaunchKernel_v7000
        return a;
    }
    MemcpyRecordStruct* memcpy(std::uint32_t correlation, std::uint64_t bytes, std::uint64_t start, std::uint64_t end)
    {
        auto* m = add<MemcpyRecordStruct>(CUPTI_ACTIVITY_KIND_MEMCPY);
        m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
        m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m->bytes = bytes;
        m->correlationId = correlation;
        m->start = start;
        m->end = end;
        m->streamId = 7;
        return m;
    }
    MemsetRecordStruct* memset(std::uint32_t correlation, std::uint64_t bytes, std::uint64_t start, std::uint64_t end)
    {
        auto* m = add<MemsetRecordStruct>(CUPTI_ACTIVITY_KIND_MEMSET);
        m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m->bytes = bytes;
        m->correlationId = correlation;
        m->start = start;
        m->end = end;
        m->streamId = 8;
        return m;
    }

    // A driver allocation or release (CUPTI_ACTIVITY_KIND_MEMORY2), as cudaMalloc or cudaFree makes one.
    DeviceMemoryRecordStruct* deviceMemory(bool release, std::uint32_t correlation, std::uint64_t address,
                                           std::uint64_t bytes, std::uint64_t timestamp)
    {
        auto* m = add<DeviceMemoryRecordStruct>(CUPTI_ACTIVITY_KIND_MEMORY2);
        m->memoryOperationType =
            release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m->correlationId = correlation;
        m->address = address;
        m->bytes = bytes;
        m->timestamp = timestamp;
        m->deviceId = 1;
        return m;
    }

    std::uint8_t* data() { return m_data; }
    std::size_t used() const { return m_used; }
    ParsedActivities parsedBySeam() const
    {
        ParsedActivities parsed;
        parseRecords(records, parsed);
        return parsed;
    }

    std::vector<const void*> records;

private:
    std::size_t m_capacity;
    std::size_t m_used = 0;
    std::uint8_t* m_data;
};
#else
constexpr bool kCuptiHeaders = false;
#endif

HostTables sampleTables()
{
    HostTables t;
    t.functionCalls[101] = {"blocks.0", "linear", "aten::linear", "original"};
    t.functionCalls[102] = {"blocks.0.attn", "scaled_dot_product_attention", "aten::scaled_dot_product_attention",
                            "TorchSDPAKernelProvider(backend=FLASH_ATTENTION)"};
    t.moduleScopes[1] = "";
    t.moduleScopes[2] = "blocks.0";
    t.moduleScopes[3] = "blocks.0.attn";
    return t;
}

AttributionOptions sampleOptions()
{
    AttributionOptions o;
    o.origin = {1'000'000, 5'000}; // CUPTI 1'000'000 ns == host 5'000 ns
    o.profileStartHostNs = 4'000;
    return o;
}

[[maybe_unused]] const KernelRecord* findByName(const std::vector<KernelRecord>& records, const std::string& name)
{
    for (const auto& r : records)
        if (r.name == name)
            return &r;
    return nullptr;
}

[[maybe_unused]] bool sameRecords(const std::vector<KernelRecord>& a, const std::vector<KernelRecord>& b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto& x = a[i];
        const auto& y = b[i];
        if (std::tie(x.kind, x.name, x.modulePath, x.function, x.op, x.provider, x.startNs, x.durationNs, x.thread,
                     x.device, x.stream, x.grid, x.block, x.registersPerThread, x.sharedMemoryBytes, x.correlation,
                     x.iteration, x.graphReplay) != std::tie(y.kind, y.name, y.modulePath, y.function, y.op, y.provider,
                                                             y.startNs, y.durationNs, y.thread, y.device, y.stream,
                                                             y.grid, y.block, y.registersPerThread, y.sharedMemoryBytes,
                                                             y.correlation, y.iteration, y.graphReplay))
            return false;
    }
    return true;
}

} // namespace

// ---------------------------------------------------------------------------------------------------------------
// Struct versions and the real iterator (pattern 2)

TEST(CuptiRecords, KernelStructIsTheOneOfThisCudaVersion)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
#if CUDA_VERSION >= 13000 && CUDA_VERSION < 13010
    EXPECT_TRUE((std::is_same_v<KernelRecordStruct, CUpti_ActivityKernel10>));
    EXPECT_EQ(sizeof(KernelRecordStruct), 216u);
    // Kernel9 is a field-for-field prefix of Kernel10.
    EXPECT_EQ(sizeof(CUpti_ActivityKernel9), 208u);
    EXPECT_EQ(offsetof(CUpti_ActivityKernel9, graphNodeId), offsetof(CUpti_ActivityKernel10, graphNodeId));
#endif
    EXPECT_EQ(sizeof(ApiRecordStruct), 40u);
    EXPECT_EQ(sizeof(ExternalCorrelationRecordStruct), 24u);
#endif
}

TEST(CuptiRecords, CuptiAnswersItsVersionWithoutAGpu)
{
    REQUIRE_CUPTI_HEADERS();
    const std::uint32_t version = CuptiActivityApi::cuptiVersion();
    EXPECT_GE(version, 27u) << "libcupti did not answer cuptiGetVersion";
    const CuptiInfo info = cuptiInfo(torch::cuda::is_available());
    EXPECT_TRUE(info.linked);
    EXPECT_EQ(info.version, std::to_string(version));
}

TEST(CuptiRecords, Pattern2_RealIteratorWalksASyntheticBuffer)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    SyntheticBuffer buffer;
    buffer.external(kExternalKindFunctionCall, 101, 5);
    buffer.external(kExternalKindModuleScope, 2, 5);
    buffer.api(5, 1'000'100, 1'000'200);
    auto* k = buffer.kernel("_Z6kernelPf", 5, 1'000'300, 1'000'800, 0);
    k->gridX = 4, k->gridY = 2, k->gridZ = 1;
    k->blockX = 128, k->blockY = 1, k->blockZ = 1;
    k->registersPerThread = 32;
    k->staticSharedMemory = 1024;
    k->dynamicSharedMemory = 2048;
    buffer.memcpy(6, 4096, 1'000'900, 1'001'000);
    buffer.memset(7, 512, 1'001'100, 1'001'150);
    buffer.api(8, 1'000'000, 1'000'050, 11, CUPTI_ACTIVITY_KIND_DRIVER);
    buffer.add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD); // a kind we do not use

    ParsedActivities parsed;
    const BufferParseResult result = parseBuffer(buffer.data(), buffer.used(), parsed);
    EXPECT_TRUE(result.ok) << "status " << result.status;
    EXPECT_EQ(result.status, kCuptiErrorMaxLimitReached);
    EXPECT_EQ(result.records, buffer.records.size());

    ASSERT_EQ(parsed.kernels.size(), 1u);
    const KernelActivity& kernel = parsed.kernels[0];
    EXPECT_EQ(kernel.name, "_Z6kernelPf");
    EXPECT_EQ(kernel.correlation, 5u);
    EXPECT_EQ(kernel.start, 1'000'300u);
    EXPECT_EQ(kernel.end, 1'000'800u);
    EXPECT_EQ(kernel.stream, 7u);
    EXPECT_EQ(kernel.context, 1u);
    EXPECT_EQ(kernel.grid, (std::array<int, 3>{4, 2, 1}));
    EXPECT_EQ(kernel.block, (std::array<int, 3>{128, 1, 1}));
    EXPECT_EQ(kernel.registers, 32);
    EXPECT_EQ(kernel.staticSharedMemory, 1024);
    EXPECT_EQ(kernel.dynamicSharedMemory, 2048);
    EXPECT_EQ(kernel.graphNodeId, 0u);

    ASSERT_EQ(parsed.mems.size(), 2u);
    EXPECT_EQ(parsed.mems[0].kind, MemKind::Memcpy);
    EXPECT_EQ(parsed.mems[0].bytes, 4096u);
    EXPECT_EQ(parsed.mems[0].copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    EXPECT_EQ(parsed.mems[1].kind, MemKind::Memset);
    EXPECT_EQ(parsed.mems[1].bytes, 512u);
    EXPECT_EQ(parsed.mems[1].stream, 8u);

    ASSERT_EQ(parsed.apis.size(), 2u);
    EXPECT_EQ(parsed.apis[0].kind, ApiKind::Runtime);
    EXPECT_EQ(parsed.apis[0].correlation, 5u);
    EXPECT_EQ(parsed.apis[0].thread, 11u);
    EXPECT_EQ(parsed.apis[0].cbid, 211u);
    EXPECT_EQ(parsed.apis[1].kind, ApiKind::Driver);

    ASSERT_EQ(parsed.externalCorrelations.size(), 2u);
    EXPECT_EQ(parsed.externalCorrelations[0].kind, kExternalKindFunctionCall);
    EXPECT_EQ(parsed.externalCorrelations[0].externalId, 101u);
    EXPECT_EQ(parsed.externalCorrelations[0].correlation, 5u);
    EXPECT_EQ(parsed.externalCorrelations[1].kind, kExternalKindModuleScope);
    EXPECT_EQ(parsed.otherRecords, 1u);

    // Pattern 1 over the same records reads the same values.
    const ParsedActivities bySeam = buffer.parsedBySeam();
    EXPECT_TRUE(sameRecords(attributeKernels(parsed, sampleTables(), sampleOptions()),
                            attributeKernels(bySeam, sampleTables(), sampleOptions())));
    EXPECT_EQ(bySeam.otherRecords, 1u);
#endif
}

TEST(CuptiRecords, Pattern2_EmptyBufferEndsNormally)
{
    REQUIRE_CUPTI_HEADERS();
    ParsedActivities parsed;
    std::uint8_t* nothing = nullptr;
    const BufferParseResult result = parseBuffer(nothing, 0, parsed);
    EXPECT_TRUE(result.ok);
    EXPECT_EQ(result.records, 0u);
    EXPECT_EQ(parsed.size(), 0u);
}

TEST(CuptiRecords, NullRecordsAreIgnoredAndAppendMerges)
{
    ParsedActivities parsed;
    EXPECT_FALSE(parseRecord(nullptr, parsed));
    EXPECT_EQ(parsed.otherRecords, 0u);
    ParsedActivities a, b;
    a.kernels.push_back({});
    b.kernels.push_back({});
    b.apis.push_back({});
    b.otherRecords = 2;
    a.append(std::move(b));
    EXPECT_EQ(a.kernels.size(), 2u);
    EXPECT_EQ(a.apis.size(), 1u);
    EXPECT_EQ(a.otherRecords, 2u);
}

// ---------------------------------------------------------------------------------------------------------------
// Attribution (pattern 1: synthetic records through the seam)

TEST(KernelAttribution, FieldsTimingAndAttribution)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    SyntheticBuffer buffer;
    buffer.external(kExternalKindFunctionCall, 101, 5);
    buffer.external(kExternalKindModuleScope, 2, 5);
    buffer.api(5, 1'000'100, 1'000'200, 42);
    auto* k = buffer.kernel("_Z6kernelPf", 5, 1'000'300, 1'000'800);
    k->gridX = 4, k->gridY = 2, k->gridZ = 1;
    k->blockX = 128, k->blockY = 1, k->blockZ = 1;
    k->registersPerThread = 32;
    k->staticSharedMemory = 1024;
    k->dynamicSharedMemory = 2048;
    k->deviceId = 1;

    AttributionStats stats;
    const auto records = attributeKernels(buffer.parsedBySeam(), sampleTables(), sampleOptions(), &stats);
    ASSERT_EQ(records.size(), 1u);
    const KernelRecord& r = records[0];
    EXPECT_EQ(r.kind, "kernel");
    EXPECT_EQ(r.name, "kernel(float*)");
    EXPECT_EQ(r.modulePath, "blocks.0");
    EXPECT_EQ(r.function, "linear");
    EXPECT_EQ(r.op, "aten::linear");
    EXPECT_EQ(r.provider, "original");
    // CUPTI 1'000'300 -> host 5'300 -> 1'300 after the profile start (4'000).
    EXPECT_EQ(r.startNs, 1'300);
    EXPECT_EQ(r.durationNs, 500);
    EXPECT_EQ(r.thread, 42u);
    EXPECT_EQ(r.device, 1);
    EXPECT_EQ(r.stream, 7u);
    EXPECT_EQ(r.grid, (std::array<int, 3>{4, 2, 1}));
    EXPECT_EQ(r.block, (std::array<int, 3>{128, 1, 1}));
    EXPECT_EQ(r.registersPerThread, 32);
    EXPECT_EQ(r.sharedMemoryBytes, 3072);
    EXPECT_EQ(r.correlation, 5u);
    EXPECT_FALSE(r.graphReplay);
    EXPECT_EQ(stats.kernels, 1u);
    EXPECT_EQ(stats.withFunction, 1u);
    EXPECT_EQ(stats.unattributed, 0u);
#endif
}

TEST(KernelAttribution, OutOfOrderBuffersGiveTheSameRecords)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    // Three buffers as three threads / flushes could complete them: kernels in one, the host side in others.
    SyntheticBuffer hostA, hostB, device;
    hostA.external(kExternalKindFunctionCall, 101, 1);
    hostA.external(kExternalKindModuleScope, 2, 1);
    hostA.api(1, 1'000'010, 1'000'020);
    hostB.external(kExternalKindFunctionCall, 102, 2);
    hostB.external(kExternalKindModuleScope, 3, 2);
    hostB.api(2, 1'000'030, 1'000'040);
    device.kernel("gemm", 1, 1'000'100, 1'000'200);
    device.kernel("flash_fwd", 2, 1'000'200, 1'000'500);
    device.memset(2, 64, 1'000'190, 1'000'195);

    std::vector<const SyntheticBuffer*> order = {&hostA, &hostB, &device};
    std::vector<KernelRecord> reference;
    std::mt19937 rng(7);
    for (int trial = 0; trial < 6; ++trial) {
        ParsedActivities parsed;
        for (const SyntheticBuffer* b : order)
            parsed.append(b->parsedBySeam());
        const auto records = attributeKernels(parsed, sampleTables(), sampleOptions());
        if (trial == 0) {
            reference = records;
            ASSERT_EQ(records.size(), 3u);
            // Sorted by start time, whatever the arrival order.
            EXPECT_EQ(records[0].name, "gemm");
            EXPECT_EQ(records[1].kind, "memset");
            EXPECT_EQ(records[2].name, "flash_fwd");
            EXPECT_EQ(records[0].function, "linear");
            EXPECT_EQ(records[2].function, "scaled_dot_product_attention");
            EXPECT_EQ(records[2].modulePath, "blocks.0.attn");
            EXPECT_EQ(records[1].function, "scaled_dot_product_attention");
        } else {
            EXPECT_TRUE(sameRecords(records, reference)) << "trial " << trial;
        }
        std::shuffle(order.begin(), order.end(), rng);
    }
#endif
}

TEST(KernelAttribution, CorrelationRecordsBeforeOrAfterTheKernels)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    SyntheticBuffer before, after;
    before.external(kExternalKindFunctionCall, 101, 9);
    before.external(kExternalKindModuleScope, 2, 9);
    before.api(9, 1'000'000, 1'000'010);
    before.kernel("gemm", 9, 1'000'100, 1'000'300);

    after.kernel("gemm", 9, 1'000'100, 1'000'300);
    after.api(9, 1'000'000, 1'000'010);
    after.external(kExternalKindModuleScope, 2, 9);
    after.external(kExternalKindFunctionCall, 101, 9);

    const auto a = attributeKernels(before.parsedBySeam(), sampleTables(), sampleOptions());
    const auto b = attributeKernels(after.parsedBySeam(), sampleTables(), sampleOptions());
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].function, "linear");
    EXPECT_EQ(a[0].modulePath, "blocks.0");
    EXPECT_TRUE(sameRecords(a, b));
#endif
}

TEST(KernelAttribution, MissingCorrelationLeavesTheKernelUnattributed)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    SyntheticBuffer buffer;
    buffer.kernel("orphan", 77, 1'000'100, 1'000'200);   // no external record, no API record
    buffer.external(kExternalKindFunctionCall, 999, 78); // an id no table knows
    buffer.kernel("unknown_id", 78, 1'000'300, 1'000'400);
    buffer.external(kExternalKindModuleScope, 3, 79); // a module scope, no function call
    buffer.kernel("module_only", 79, 1'000'500, 1'000'600);
    buffer.external(2 /* OPENACC: not ours */, 101, 80);
    buffer.kernel("foreign_kind", 80, 1'000'700, 1'000'800);

    AttributionStats stats;
    const auto records = attributeKernels(buffer.parsedBySeam(), sampleTables(), sampleOptions(), &stats);
    ASSERT_EQ(records.size(), 4u);
    for (const char* name : {"orphan", "unknown_id", "foreign_kind"}) {
        const KernelRecord* r = findByName(records, name);
        ASSERT_NE(r, nullptr) << name;
        EXPECT_EQ(r->modulePath, "") << name;
        EXPECT_EQ(r->function, "") << name;
        EXPECT_EQ(r->op, "") << name;
        EXPECT_EQ(r->provider, "") << name;
        EXPECT_EQ(r->thread, 0u) << name;
    }
    const KernelRecord* moduleOnly = findByName(records, "module_only");
    ASSERT_NE(moduleOnly, nullptr);
    EXPECT_EQ(moduleOnly->modulePath, "blocks.0.attn");
    EXPECT_EQ(moduleOnly->function, "");
    EXPECT_EQ(stats.unattributed, 3u);
    EXPECT_EQ(stats.withModule, 1u);
    EXPECT_EQ(stats.withFunction, 0u);
    EXPECT_EQ(stats.unknownIds, 1u);
    EXPECT_EQ(stats.withoutApiRecord, 4u);
#endif
}

TEST(KernelAttribution, InnermostIdWinsWhenAKindIsTaggedTwice)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    SyntheticBuffer x, y;
    x.external(kExternalKindModuleScope, 2, 4);
    x.external(kExternalKindModuleScope, 3, 4);
    x.kernel("k", 4, 1'000'000, 1'000'100);
    y.external(kExternalKindModuleScope, 3, 4);
    y.external(kExternalKindModuleScope, 2, 4);
    y.kernel("k", 4, 1'000'000, 1'000'100);
    const auto a = attributeKernels(x.parsedBySeam(), sampleTables(), sampleOptions());
    const auto b = attributeKernels(y.parsedBySeam(), sampleTables(), sampleOptions());
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].modulePath, "blocks.0.attn");
    EXPECT_TRUE(sameRecords(a, b));
#endif
}

TEST(KernelAttribution, GraphReplayKernelsShareOneCorrelationAndAreAttributedPerNode)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    HostTables tables = sampleTables();
    tables.graphNodes[1001] = {2, 101}; // captured inside blocks.0 / linear
    tables.graphNodes[1002] = {3, 102}; // captured inside blocks.0.attn / sdpa
    tables.graphNodes[1003] = {3, 0};   // captured inside blocks.0.attn, outside any function

    // One cudaGraphLaunch (correlation 50) inside the root module scope, four kernels from it; node 1004 was not
    // seen at capture and falls back to the ids pushed around the replay.
    SyntheticBuffer buffer;
    buffer.external(kExternalKindModuleScope, 1, 50);
    buffer.api(50, 1'000'000, 1'000'020);
    buffer.kernel("node_a", 50, 1'000'100, 1'000'200, 1001);
    buffer.kernel("node_b", 50, 1'000'200, 1'000'300, 1002);
    buffer.kernel("node_c", 50, 1'000'300, 1'000'400, 1003);
    buffer.kernel("node_d", 50, 1'000'400, 1'000'500, 1004);
    buffer.kernel("eager", 51, 1'000'600, 1'000'700); // not a replay
    buffer.external(kExternalKindFunctionCall, 101, 51);

    AttributionStats stats;
    const auto records = attributeKernels(buffer.parsedBySeam(), tables, sampleOptions(), &stats);
    ASSERT_EQ(records.size(), 5u);
    const KernelRecord* a = findByName(records, "node_a");
    const KernelRecord* b = findByName(records, "node_b");
    const KernelRecord* c = findByName(records, "node_c");
    const KernelRecord* d = findByName(records, "node_d");
    const KernelRecord* eager = findByName(records, "eager");
    ASSERT_TRUE(a && b && c && d && eager);
    for (const KernelRecord* r : {a, b, c, d}) {
        EXPECT_TRUE(r->graphReplay) << r->name;
        EXPECT_EQ(r->correlation, 50u) << r->name;
        EXPECT_EQ(r->thread, 11u) << r->name;
    }
    EXPECT_EQ(a->modulePath, "blocks.0");
    EXPECT_EQ(a->function, "linear");
    EXPECT_EQ(b->modulePath, "blocks.0.attn");
    EXPECT_EQ(b->function, "scaled_dot_product_attention");
    EXPECT_EQ(c->modulePath, "blocks.0.attn");
    EXPECT_EQ(c->function, "");
    EXPECT_EQ(d->modulePath, ""); // the root scope pushed around the replay
    EXPECT_EQ(d->function, "");
    EXPECT_FALSE(eager->graphReplay);
    EXPECT_EQ(eager->function, "linear");
    EXPECT_EQ(stats.graphReplay, 4u);
    EXPECT_EQ(stats.graphNodeMapped, 3u);
#endif
}

TEST(KernelAttribution, MemoryOperationsAreRecordsToo)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    SyntheticBuffer buffer;
    buffer.external(kExternalKindModuleScope, 2, 30);
    buffer.memcpy(30, 1 << 20, 1'000'000, 1'000'400);
    buffer.memset(31, 256, 1'000'500, 1'000'510);
    AttributionStats stats;
    const auto records = attributeKernels(buffer.parsedBySeam(), sampleTables(), sampleOptions(), &stats);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].kind, "memcpy");
    EXPECT_EQ(records[0].name, "Memcpy HtoD (Pageable -> Device)");
    EXPECT_EQ(records[0].modulePath, "blocks.0");
    EXPECT_EQ(records[0].durationNs, 400);
    EXPECT_EQ(records[0].stream, 7u);
    EXPECT_EQ(records[1].kind, "memset");
    EXPECT_EQ(records[1].name, "Memset (Device)");
    EXPECT_EQ(records[1].modulePath, "");
    EXPECT_EQ(stats.memcpys, 1u);
    EXPECT_EQ(stats.memsets, 1u);
#endif
}

// CUPTI's memory records (the driver's allocations and releases: cudaMalloc, AOTInductor's weights, cuBLAS
// workspaces) become MemoryRecords marked driver, attributed through the cudaMalloc call's external ids as kernels are,
// on the profile's clock and in time order; a release CUPTI reports with 0 bytes takes its allocation's size. Parsed
// through the real iterator (pattern 2) and the seam (pattern 1) alike.
TEST(KernelAttribution, DriverAllocationsAreAttributedMemoryRecords)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    SyntheticBuffer buffer;
    buffer.external(kExternalKindFunctionCall, 101, 5); // cudaMalloc inside blocks.0's linear (a workspace)
    buffer.external(kExternalKindModuleScope, 2, 5);
    buffer.api(5, 1'000'100, 1'000'200, 42);
    buffer.external(kExternalKindModuleScope, 3, 6); // its free, later, in blocks.0.attn
    buffer.api(6, 1'000'900, 1'000'950, 42);
    buffer.deviceMemory(true, 6, 0xA000, 0, 1'000'920);        // listed first: the join sorts by time
    buffer.deviceMemory(false, 5, 0xA000, 8 << 20, 1'000'150); // 8 MiB
    buffer.deviceMemory(false, 7, 0xB000, 4096, 1'000'300);    // no API record or ids: unattributed
    const ParsedActivities parsed = buffer.parsedBySeam();
    ASSERT_EQ(parsed.deviceMemory.size(), 3u);
    EXPECT_TRUE(parsed.deviceMemory[0].release);
    EXPECT_EQ(parsed.deviceMemory[1].bytes, std::uint64_t(8) << 20);

    const std::vector<MemoryRecord> records = attributeDeviceMemory(parsed, sampleTables(), sampleOptions());
    ASSERT_EQ(records.size(), 3u);
    const MemoryRecord &alloc = records[0], &other = records[1], &release = records[2];
    EXPECT_TRUE(alloc.driver && other.driver && release.driver);
    EXPECT_EQ(alloc.bytes, 8 << 20);
    EXPECT_EQ(alloc.modulePath, "blocks.0");
    EXPECT_EQ(alloc.function, "linear");
    EXPECT_EQ(alloc.device, "cuda:1");
    EXPECT_EQ(alloc.timeNs, 1'150); // CUPTI 1'000'150 -> host 5'150 -> 1'150 after the profile start
    EXPECT_EQ(alloc.thread, 42u);
    EXPECT_EQ(alloc.address, 0xA000u);
    EXPECT_EQ(other.modulePath, "");
    EXPECT_EQ(other.function, "");
    EXPECT_EQ(release.bytes, -(8 << 20)); // its allocation's size
    EXPECT_EQ(release.modulePath, "blocks.0.attn");
    EXPECT_EQ(release.totalAllocatedBytes, 4096); // the driver's live bytes after it, of those traced

    // The real iterator reads the same records from the buffer.
    ParsedActivities walked;
    ASSERT_TRUE(parseBuffer(buffer.data(), buffer.used(), walked).ok);
    ASSERT_EQ(walked.deviceMemory.size(), 3u);
    EXPECT_EQ(walked.deviceMemory[1].address, 0xA000u);
    EXPECT_EQ(walked.deviceMemory[1].device, 1u);
#endif
}

TEST(KernelAttribution, IterationsFollowTheLaunchTime)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    HostTables tables = sampleTables();
    // Host times (origin: CUPTI 1'000'000 == host 5'000): iterations 0 and 1 begin at host 5'000 and 6'000.
    tables.iterationStarts = {{5'000, 0}, {6'000, 1}};
    SyntheticBuffer buffer;
    buffer.api(1, 1'000'900, 1'000'950);            // launched in iteration 0 (host 5'900) ...
    buffer.kernel("late", 1, 1'001'100, 1'001'200); // ... runs during iteration 1: still iteration 0
    buffer.api(2, 1'001'500, 1'001'510);
    buffer.kernel("second", 2, 1'001'600, 1'001'700);
    buffer.kernel("no_api", 3, 1'001'800, 1'001'900); // falls back to its own start
    buffer.kernel("before_all", 4, 998'000, 998'100); // before the first iteration: the first
    const auto records = attributeKernels(buffer.parsedBySeam(), tables, sampleOptions());
    EXPECT_EQ(findByName(records, "late")->iteration, 0);
    EXPECT_EQ(findByName(records, "second")->iteration, 1);
    EXPECT_EQ(findByName(records, "no_api")->iteration, 1);
    EXPECT_EQ(findByName(records, "before_all")->iteration, 0);
    EXPECT_EQ(findByName(records, "before_all")->startNs, -1'000); // host 3'000: before the profile start
#endif
}

TEST(KernelAttribution, PureHelpers)
{
    EXPECT_EQ(cuptiToHostNs(1'000'500, {1'000'000, 20}), 520);
    EXPECT_EQ(cuptiToHostNs(999'990, {1'000'000, 20}), 10);
    EXPECT_EQ(demangleKernelName("_Z6kernelPf"), "kernel(float*)");
    EXPECT_EQ(demangleKernelName("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
    EXPECT_EQ(demangleKernelName("_Zgarbage"), "_Zgarbage");
    MemActivity m;
    m.kind = MemKind::Memcpy;
    m.copyKind = 2;
    m.srcKind = 3;
    m.dstKind = 2;
    EXPECT_EQ(memActivityName(m), "Memcpy DtoH (Device -> Pinned)");
    m.copyKind = 200;
    EXPECT_EQ(memActivityName(m), "Memcpy Unknown (Device -> Pinned)");

    AttributionOptions raw = sampleOptions();
    raw.demangle = false;
    ParsedActivities parsed;
    parsed.kernels.push_back({});
    parsed.kernels.back().name = "_Z6kernelPf";
    EXPECT_EQ(attributeKernels(parsed, {}, raw)[0].name, "_Z6kernelPf");
    EXPECT_TRUE(attributeKernels({}, {}, raw).empty());
}

// ---------------------------------------------------------------------------------------------------------------
// Buffers, drops, external ids, graph-node map, availability

TEST(CuptiActivityApi, BuffersAreAlignedAndCappedFromCupti27)
{
    CuptiActivityApi::Options options;
    options.maxBuffers = 3;
    options.cuptiVersion = 130001;
    CuptiActivityApi api(options);
    std::vector<std::uint8_t*> handed;
    for (int i = 0; i < 5; ++i) {
        std::uint8_t* buffer = nullptr;
        std::size_t size = 123, maxRecords = 123;
        api.bufferRequested(&buffer, &size, &maxRecords);
        EXPECT_EQ(maxRecords, 0u);
        if (i < 3) {
            ASSERT_NE(buffer, nullptr);
            EXPECT_EQ(size, CuptiActivityApi::kBufferSize);
            EXPECT_EQ(size, 4u << 20);
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer) % 8, 0u);
            handed.push_back(buffer);
        } else {
            EXPECT_EQ(buffer, nullptr);
            EXPECT_EQ(size, 0u);
        }
    }
    EXPECT_EQ(api.buffersHandedOut(), 3u);
    EXPECT_EQ(api.rejectedBuffers(), 2u);
    EXPECT_EQ(api.droppedRecords(), 2u); // rejections count as drops
    EXPECT_EQ(api.cuptiDroppedRecords(), 0u);
    for (std::uint8_t* b : handed)
        api.bufferCompleted(b, CuptiActivityApi::kBufferSize, 0, 0); // empty: freed, not queued
    EXPECT_TRUE(api.takeCompletedBuffers().empty());
}

TEST(CuptiActivityApi, OldCuptiNeverGetsARefusal)
{
    CuptiActivityApi::Options options;
    options.maxBuffers = 1;
    options.cuptiVersion = 26; // before CUDA 12.9: refusing could crash CUPTI
    CuptiActivityApi api(options);
    for (int i = 0; i < 3; ++i) {
        std::uint8_t* buffer = nullptr;
        std::size_t size = 0, maxRecords = 0;
        api.bufferRequested(&buffer, &size, &maxRecords);
        ASSERT_NE(buffer, nullptr);
        api.bufferCompleted(buffer, size, 0, 0);
    }
    EXPECT_EQ(api.rejectedBuffers(), 0u);
    EXPECT_EQ(api.droppedRecords(), 0u);
}

TEST(CuptiActivityApi, CompletedBuffersAreQueuedAndParsedThroughTheRealIterator)
{
    REQUIRE_CUPTI_HEADERS();
#ifdef KFORGE_WITH_CUPTI
    CuptiActivityApi::Options options;
    options.bufferSize = 64 * 1024;
    CuptiActivityApi api(options);

    SyntheticBuffer first, second;
    first.kernel("k2", 2, 1'000'300, 1'000'400);
    second.external(kExternalKindFunctionCall, 102, 2);
    second.api(2, 1'000'000, 1'000'010);
    second.kernel("k1", 1, 1'000'100, 1'000'200);
    for (SyntheticBuffer* synthetic : {&first, &second}) {
        std::uint8_t* buffer = nullptr;
        std::size_t size = 0, maxRecords = 0;
        api.bufferRequested(&buffer, &size, &maxRecords);
        ASSERT_NE(buffer, nullptr);
        ASSERT_EQ(size, options.bufferSize);
        std::memcpy(buffer, synthetic->data(), synthetic->used());
        api.bufferCompleted(buffer, size, synthetic->used(), 7);
    }
    bool ok = false;
    const ParsedActivities parsed = api.parseCompletedBuffers(&ok);
    EXPECT_TRUE(ok);
    EXPECT_EQ(parsed.kernels.size(), 2u);
    EXPECT_TRUE(api.takeCompletedBuffers().empty());
    const auto records = attributeKernels(parsed, sampleTables(), sampleOptions());
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].name, "k1");
    EXPECT_EQ(records[1].name, "k2");
    EXPECT_EQ(records[1].function, "scaled_dot_product_attention"); // its correlation came in the other buffer
#endif
}

TEST(CuptiActivityApi, PopWithNothingPushedSaysQueueEmpty)
{
    CuptiActivityApi::popAllCorrelationIds();
    std::uint64_t last = 0;
    EXPECT_EQ(CuptiActivityApi::popCorrelationId(CorrelationKind::FunctionCall, &last), kCuptiErrorQueueEmpty);
    EXPECT_EQ(CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope, &last), kCuptiErrorQueueEmpty);
    EXPECT_EQ(CuptiActivityApi::correlationDepth(CorrelationKind::FunctionCall), 0u);

    // Pushing needs a CUDA driver; where it works the ids nest per kind and pop in reverse order.
    const int pushed = CuptiActivityApi::pushCorrelationId(CorrelationKind::ModuleScope, 21);
    if (pushed != kCuptiSuccess) {
        EXPECT_EQ(CuptiActivityApi::correlationDepth(CorrelationKind::ModuleScope), 0u);
        EXPECT_EQ(CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope), kCuptiErrorQueueEmpty);
        return;
    }
    ASSERT_EQ(CuptiActivityApi::pushCorrelationId(CorrelationKind::ModuleScope, 22), kCuptiSuccess);
    ASSERT_EQ(CuptiActivityApi::pushCorrelationId(CorrelationKind::FunctionCall, 7), kCuptiSuccess);
    EXPECT_EQ(CuptiActivityApi::correlationDepth(CorrelationKind::ModuleScope), 2u);
    EXPECT_EQ(CuptiActivityApi::currentScope().moduleScopeId, 22u);
    EXPECT_EQ(CuptiActivityApi::currentScope().functionCallId, 7u);
    // Per thread: another thread sees none.
    std::thread([] {
        EXPECT_EQ(CuptiActivityApi::correlationDepth(CorrelationKind::ModuleScope), 0u);
        EXPECT_EQ(CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope), kCuptiErrorQueueEmpty);
    }).join();
    EXPECT_EQ(CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope, &last), kCuptiSuccess);
    EXPECT_EQ(last, 22u);
    CuptiActivityApi::popAllCorrelationIds();
    EXPECT_EQ(CuptiActivityApi::correlationDepth(CorrelationKind::ModuleScope), 0u);
    EXPECT_EQ(CuptiActivityApi::correlationDepth(CorrelationKind::FunctionCall), 0u);
}

TEST(CuptiActivityApi, GraphNodeMapClonesInheritTheirOriginalsScope)
{
    CuptiActivityApi api;
    api.recordGraphNode(5, {2, 101});
    api.recordGraphNode(6, {3, 0});
    api.recordGraphNodeClone(15, 5); // instantiation copies
    api.recordGraphNodeClone(16, 6);
    api.recordGraphNodeClone(17, 99); // original never seen: the scope current on this thread (none here)
    const auto nodes = api.graphNodes();
    ASSERT_EQ(nodes.size(), 5u);
    EXPECT_EQ(nodes.at(15).moduleScopeId, 2u);
    EXPECT_EQ(nodes.at(15).functionCallId, 101u);
    EXPECT_EQ(nodes.at(16).moduleScopeId, 3u);
    EXPECT_EQ(nodes.at(17).moduleScopeId, CuptiActivityApi::currentScope().moduleScopeId);
    api.clearGraphNodes();
    EXPECT_TRUE(api.graphNodes().empty());
}

TEST(CuptiActivityApi, SubscriberConflictSaysNeverToRunThePyTorchProfilerWithOurs)
{
    const std::string text = CuptiActivityApi::subscriberConflictMessage("CUPTI for Kineto");
    EXPECT_NE(text.find("CUPTI for Kineto"), std::string::npos);
    EXPECT_NE(text.find("Never run the PyTorch profiler together with KernelForge's profiler"), std::string::npos);
}

TEST(CuptiActivityApi, NotAvailableWithoutADeviceAndStartRefuses)
{
    if (torch::cuda::is_available())
        GTEST_SKIP() << "a CUDA device is present: the refusal path does not apply";
    std::string why;
    EXPECT_FALSE(CuptiActivityApi::available(&why));
    EXPECT_FALSE(why.empty());
    if (kCuptiHeaders) {
        EXPECT_NE(why.find("no CUDA device is visible"), std::string::npos) << why;
    } else {
        EXPECT_NE(why.find("no CUPTI"), std::string::npos) << why;
    }
    CuptiActivityApi api;
    try {
        api.start();
        FAIL() << "start() traced without a device";
    } catch (const Error& e) {
        EXPECT_EQ(e.where(), "CUPTI");
        EXPECT_EQ(e.why(), why);
    }
    EXPECT_FALSE(api.active());
    api.stop(); // harmless when not started
}

TEST(Nvtx, RangesNestPerThreadAndPopAllClosesLeftovers)
{
    using namespace kforge::profiling::nvtx;
    popAll();
    EXPECT_FALSE(pop());
    pushModuleScope("blocks.0");
    pushFunctionCall("linear", "original");
    pushRange("step");
    EXPECT_EQ(depth(), 3u);
    std::thread([] { EXPECT_EQ(depth(), 0u); }).join();
    EXPECT_TRUE(pop());
    popAll();
    EXPECT_EQ(depth(), 0u);
    {
        ModuleRange module("");
        FunctionRange function("gelu", "");
        EXPECT_EQ(depth(), 2u);
    }
    EXPECT_EQ(depth(), 0u);
    EXPECT_EQ(moduleRangeName(""), "module <root>");
    EXPECT_EQ(moduleRangeName("blocks.0"), "module blocks.0");
    EXPECT_EQ(functionRangeName("linear", "original"), "function linear [original]");
    EXPECT_EQ(functionRangeName("gelu", ""), "function gelu");
    if (kCuptiHeaders) {
        EXPECT_TRUE(compiledIn()); // the CUDA toolkit's nvtx3 headers
    }
}

// ---------------------------------------------------------------------------------------------------------------
// On a CUDA device

TEST(CuptiGpu, TracesAMatmulAndAttributesItToThePushedFunctionCall)
{
    REQUIRE_CUDA();
    std::string why;
    ASSERT_TRUE(CuptiActivityApi::available(&why)) << why;
    const auto options = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
    at::Tensor a = at::randn({256, 256}, options);
    at::Tensor b = at::randn({256, 256}, options);
    at::matmul(a, b); // cuBLAS handles and workspaces outside the trace
    torch::cuda::synchronize();

    CuptiActivityApi& api = CuptiActivityApi::singleton();
    const std::int64_t profileStart = runtime::nowNs();
    api.start();
    ASSERT_EQ(CuptiActivityApi::pushCorrelationId(CorrelationKind::ModuleScope, 2), kCuptiSuccess);
    ASSERT_EQ(CuptiActivityApi::pushCorrelationId(CorrelationKind::FunctionCall, 101), kCuptiSuccess);
    at::Tensor c = at::matmul(a, b);
    EXPECT_EQ(CuptiActivityApi::popCorrelationId(CorrelationKind::FunctionCall), kCuptiSuccess);
    at::Tensor d = c + 1; // in blocks.0, outside the function call
    EXPECT_EQ(CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope), kCuptiSuccess);
    at::Tensor e = d * 2; // outside everything
    torch::cuda::synchronize();
    api.stop();

    bool ok = false;
    const ParsedActivities parsed = api.parseCompletedBuffers(&ok);
    EXPECT_TRUE(ok);
    EXPECT_FALSE(parsed.externalCorrelations.empty());
    AttributionOptions attribution;
    attribution.origin = api.origin();
    attribution.profileStartHostNs = profileStart;
    AttributionStats stats;
    const auto records = attributeKernels(parsed, sampleTables(), attribution, &stats);
    ASSERT_GE(records.size(), 3u);

    int matmulKernels = 0, moduleOnly = 0, outside = 0;
    for (const KernelRecord& r : records) {
        if (r.kind != "kernel")
            continue;
        EXPECT_GT(r.durationNs, 0) << r.name;
        EXPECT_GE(r.startNs, 0) << r.name;
        EXPECT_LT(r.startNs, runtime::nowNs() - profileStart) << r.name;
        EXPECT_EQ(r.device, a.device().index()) << r.name;
        EXPECT_GT(r.block[0], 0) << r.name;
        EXPECT_FALSE(r.graphReplay) << r.name;
        if (r.function == "linear") {
            ++matmulKernels;
            EXPECT_EQ(r.modulePath, "blocks.0");
            EXPECT_EQ(r.op, "aten::linear");
            EXPECT_NE(r.thread, 0u);
        } else if (r.modulePath == "blocks.0") {
            ++moduleOnly;
        } else {
            ++outside;
        }
    }
    EXPECT_GE(matmulKernels, 1) << "no kernel was attributed to the pushed function-call id";
    EXPECT_GE(moduleOnly, 1);
    EXPECT_GE(outside, 1);
    EXPECT_EQ(api.droppedRecords(), 0u);
    EXPECT_EQ(CuptiActivityApi::correlationDepth(CorrelationKind::ModuleScope), 0u);
}

TEST(CuptiGpu, GraphReplayKernelsAreAttributedToTheCapturedModule)
{
    REQUIRE_CUDA();
#ifndef KFORGE_TEST_CUDA_GRAPHS
    GTEST_SKIP() << "this build has no CUDA graph headers";
#else
    const auto options = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
    at::Tensor a = at::randn({128, 128}, options);
    at::Tensor b = at::randn({128, 128}, options);
    at::matmul(a, b).relu(); // warm up outside the capture
    torch::cuda::synchronize();

    CuptiActivityApi& api = CuptiActivityApi::singleton();
    api.clearGraphNodes();
    api.enableGraphNodeTracking();
    at::cuda::CUDAGraph graph;
    at::Tensor out;
    {
        c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
        c10::cuda::CUDAStreamGuard guard(stream);
        ASSERT_EQ(CuptiActivityApi::pushCorrelationId(CorrelationKind::ModuleScope, 2), kCuptiSuccess);
        ASSERT_EQ(CuptiActivityApi::pushCorrelationId(CorrelationKind::FunctionCall, 101), kCuptiSuccess);
        graph.capture_begin();
        at::Tensor mm = at::matmul(a, b);
        CuptiActivityApi::popCorrelationId(CorrelationKind::FunctionCall);
        ASSERT_EQ(CuptiActivityApi::pushCorrelationId(CorrelationKind::ModuleScope, 3), kCuptiSuccess);
        out = mm.relu();
        CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope);
        graph.capture_end();
        CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope);
    }
    torch::cuda::synchronize();
    const auto nodes = api.graphNodes();
    EXPECT_FALSE(nodes.empty()) << "no GRAPHNODE_CREATED/CLONED callback arrived during capture";

    const std::int64_t profileStart = runtime::nowNs();
    api.start();
    ASSERT_EQ(CuptiActivityApi::pushCorrelationId(CorrelationKind::ModuleScope, 1), kCuptiSuccess); // root
    graph.replay();
    CuptiActivityApi::popCorrelationId(CorrelationKind::ModuleScope);
    torch::cuda::synchronize();
    api.stop();
    api.disableGraphNodeTracking();

    HostTables tables = sampleTables();
    tables.graphNodes = nodes;
    AttributionOptions attribution;
    attribution.origin = api.origin();
    attribution.profileStartHostNs = profileStart;
    AttributionStats stats;
    const auto records = attributeKernels(api.parseCompletedBuffers(), tables, attribution, &stats);
    int replayed = 0, linear = 0, relu = 0;
    std::set<std::uint64_t> correlations;
    for (const KernelRecord& r : records) {
        if (r.kind != "kernel" || !r.graphReplay)
            continue;
        ++replayed;
        correlations.insert(r.correlation);
        if (r.function == "linear" && r.modulePath == "blocks.0")
            ++linear;
        if (r.function == "" && r.modulePath == "blocks.0.attn")
            ++relu;
    }
    EXPECT_GE(replayed, 2);
    EXPECT_EQ(correlations.size(), 1u) << "the kernels of one replay share the launch's correlation id";
    EXPECT_GE(linear, 1) << "the matmul node was not attributed to the captured function call";
    EXPECT_GE(relu, 1) << "the relu node was not attributed to the captured module";
    EXPECT_GE(stats.graphNodeMapped, std::size_t(linear + relu));
#endif
}

TEST(CuptiGpu, AnotherSubscriberMakesStartRefuse)
{
    REQUIRE_CUDA();
#ifdef KFORGE_WITH_CUPTI
    CUpti_SubscriberHandle other = nullptr;
    const CUptiResult subscribed = cuptiSubscribe(
        &other, [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}, nullptr);
    if (subscribed != CUPTI_SUCCESS)
        GTEST_SKIP() << "could not subscribe a second CUPTI client here (" << int(subscribed) << ")";
    CuptiActivityApi api;
    try {
        api.start();
        ADD_FAILURE() << "start() ran next to another CUPTI subscriber";
        api.stop();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("Never run the PyTorch profiler together"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(api.active());
    cuptiUnsubscribe(other);
#endif
}
