// SPDX-License-Identifier: Apache-2.0
// The CPU profile's recorder (profiling/host_recorder.h), driven through its observer calls: what an op costs to
// record, and the records it builds afterwards.
#include <kforge/functions.h>

#include "profiling/host_recorder.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace {

// Allocations through operator new on this thread (std::string, std::vector, node containers all use it).
thread_local long tAllocations = 0;

} // namespace

void* operator new(std::size_t size)
{
    ++tAllocations;
    if (void* p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}
// The nothrow form too (std::stable_sort's temporary buffer): its blocks come back through the operator delete above,
// so they must come from malloc as well (AddressSanitizer: alloc-dealloc-mismatch otherwise).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept
{
    ++tAllocations;
    return std::malloc(size ? size : 1);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

using kforge::profiling::HostRecorder;

// Recording an op allocates nothing of its own: no string per record, only the amortised growth of one array. An op
// with a name longer than a short string and a module path as long as a transformer's made two or three allocations
// each when records were built during the forward, which cost small-op models more than torch.profiler
// (bench/bench_profiling_cost.py).
TEST(HostRecorder, RecordingAnOpAllocatesNothingPerOp)
{
    HostRecorder recorder(/*timeCpuOps=*/true);
    recorder.beginIteration(0);
    recorder.moduleEnter("model.layers.0.self_attn.q_proj");
    constexpr int kOps = 20'000;
    (void)kforge::functionName(kforge::Function::ScaledDotProductAttention); // the catalog, built at first use
    const long before = tAllocations;
    for (int i = 0; i < kOps; ++i) {
        recorder.opBegin();
        recorder.callBegin(static_cast<std::uint64_t>(i) + 1, kforge::Function::ScaledDotProductAttention,
                           "TorchSDPAKernelProvider", "aten::scaled_dot_product_attention");
        recorder.callEnd(static_cast<std::uint64_t>(i) + 1);
        recorder.opEnd("aten::scaled_dot_product_attention");
    }
    const long allocations = tAllocations - before;
    recorder.moduleExit("model.layers.0.self_attn.q_proj");
    recorder.endIteration();
    EXPECT_LT(allocations, 60) << "per op: " << double(allocations) / kOps;
    EXPECT_EQ(recorder.takeRecords().size(), size_t(kOps));
}

// The records built after the forwards say what the observer calls said: op, innermost module, the function call
// the op served and its provider, the iteration; ranges for the module scope and each call.
TEST(HostRecorder, RecordsNameTheOpModuleFunctionAndProvider)
{
    HostRecorder recorder(/*timeCpuOps=*/true);
    recorder.beginIteration(3);
    recorder.moduleEnter("blocks.0");
    recorder.opBegin();
    recorder.callBegin(7, kforge::Function::Gelu, "AtenGeluProvider", "aten::gelu");
    recorder.callDeclined(7);
    recorder.callEnd(7);
    recorder.opEnd("aten::gelu");
    recorder.opBegin();
    recorder.opEnd("aten::add");
    recorder.moduleExit("blocks.0");
    recorder.endIteration();

    const auto records = recorder.takeRecords();
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].name, "aten::gelu");
    EXPECT_EQ(records[0].op, "aten::gelu");
    EXPECT_EQ(records[0].kind, "cpu_op");
    EXPECT_EQ(records[0].modulePath, "blocks.0");
    EXPECT_EQ(records[0].function, "gelu");
    EXPECT_EQ(records[0].provider, "original"); // declined: the original served it
    EXPECT_EQ(records[0].correlation, 7u);
    EXPECT_EQ(records[0].iteration, 3);
    EXPECT_EQ(records[1].name, "aten::add");
    EXPECT_EQ(records[1].function, "");
    EXPECT_EQ(records[1].provider, "");
    EXPECT_LE(records[0].startNs + records[0].durationNs, records[1].startNs);

    const auto ranges = recorder.takeRanges();
    ASSERT_EQ(ranges.size(), 2u);
    EXPECT_EQ(ranges[0].kind, "function");
    EXPECT_EQ(ranges[0].name, "gelu");
    EXPECT_EQ(ranges[0].provider, "original");
    EXPECT_EQ(ranges[1].kind, "module");
    EXPECT_EQ(ranges[1].name, "blocks.0");
    EXPECT_TRUE(recorder.takeRecords().empty()) << "taking empties the recorder";
}

// An op named by a buffer of its own (a RecordFunction with a string name) may come again at the same address with
// another name: each record keeps the name it was given.
TEST(HostRecorder, AnOpNameReusingAnAddressKeepsItsOwnText)
{
    HostRecorder recorder(/*timeCpuOps=*/true);
    recorder.beginIteration(0);
    char name[32];
    for (const char* text : {"my_op_first", "my_op_second", "my_op_first"}) {
        std::strcpy(name, text);
        recorder.opBegin();
        recorder.opEnd(name);
    }
    std::strcpy(name, "overwritten");
    recorder.endIteration();
    const auto records = recorder.takeRecords();
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[0].name, "my_op_first");
    EXPECT_EQ(records[1].name, "my_op_second");
    EXPECT_EQ(records[2].name, "my_op_first");
}
