// SPDX-License-Identifier: Apache-2.0
// The memory recorder (profiling/memory_recorder.h) by both of its routes. The CPU allocator's tap
// (profiling/cpu_allocator_tap.h), as a CPU recording uses it: the recording thread's allocations heard with their
// sizes, their frees paired with them, nothing else heard, the allocator put back. c10's reporting, as the CUDA caching
// allocator calls it: its allocated and reserved figures kept, through to the summary and the saved file.
#include "profiling/memory_recorder.h"

#include <kforge/memory_profile.h>
#include <kforge/profile_export.h>

#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>
#include <torch/torch.h>

#include "test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

namespace {

using kforge::MemoryRecord;
using kforge::ProfileRun;
using kforge::profiling::MemoryRecorder;

std::pair<const char*, const char*> noScope() { return {nullptr, nullptr}; }

std::uintptr_t addressOf(const torch::Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()); }

std::vector<MemoryRecord> recordsAt(const std::vector<MemoryRecord>& records, std::uintptr_t address)
{
    std::vector<MemoryRecord> at;
    std::copy_if(records.begin(), records.end(), std::back_inserter(at),
                 [&](const MemoryRecord& r) { return r.address == address; });
    return at;
}

// What recording one 4,000-byte tensor made and dropped on this thread gives, by either route.
std::vector<MemoryRecord> recordOneTensor(bool tap)
{
    MemoryRecorder recorder(noScope, tap);
    EXPECT_EQ(recorder.tapsCpuAllocator(), tap);
    std::uintptr_t address = 0;
    {
        const torch::Tensor t = torch::empty({1000}, torch::kFloat);
        address = addressOf(t);
    }
    return recordsAt(recorder.take(), address);
}

} // namespace

TEST(CpuAllocatorTap, HearsWhatC10sReportingHearsWithSizesAndLiveBytes)
{
    for (const bool tap : {false, true}) {
        SCOPED_TRACE(tap ? "tap" : "c10's reporting");
        const std::vector<MemoryRecord> records = recordOneTensor(tap);
        ASSERT_EQ(records.size(), 2u);
        EXPECT_EQ(records[0].bytes, 4000);
        EXPECT_EQ(records[1].bytes, -4000);
        EXPECT_EQ(records[0].device, "cpu");
        EXPECT_LE(records[0].timeNs, records[1].timeNs);
        // The live bytes after each: c10's table counts every block it was told of, the tap those it heard.
        EXPECT_EQ(records[0].totalAllocatedBytes - records[1].totalAllocatedBytes, 4000);
    }
}

TEST(CpuAllocatorTap, ABlockAllocatedBeforeRecordingIsNotHeardFreed)
{
    torch::Tensor older = torch::empty({256}, torch::kFloat);
    const std::uintptr_t address = addressOf(older);
    MemoryRecorder recorder(noScope, /*tapCpuAllocator=*/true);
    ASSERT_TRUE(recorder.tapsCpuAllocator());
    older.reset();
    // The free is heard but has no allocation to take its size from, so it is dropped (as c10 drops it).
    EXPECT_TRUE(recordsAt(recorder.take(), address).empty());
}

TEST(CpuAllocatorTap, OnlyTheRecordingThreadAndTheWorkItHandsToTheIntraOpPoolAreHeard)
{
    MemoryRecorder recorder(noScope, /*tapCpuAllocator=*/true);
    ASSERT_TRUE(recorder.tapsCpuAllocator());
    std::uintptr_t elsewhere = 0;
    std::thread([&] { elsewhere = addressOf(torch::empty({512}, torch::kFloat)); }).join();

    constexpr int kChunks = 8;
    std::atomic<int> chunks{0};
    at::parallel_for(0, kChunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const torch::Tensor scratch = torch::empty({333}, torch::kByte); // 333 bytes: made only here
            ++chunks;
        }
    });
    const std::vector<MemoryRecord> records = recorder.take();
    EXPECT_TRUE(recordsAt(records, elsewhere).empty()) << "a thread that is not recording was heard";
    const auto made =
        std::count_if(records.begin(), records.end(), [](const MemoryRecord& r) { return r.bytes == 333; });
    const auto freed =
        std::count_if(records.begin(), records.end(), [](const MemoryRecord& r) { return r.bytes == -333; });
    EXPECT_EQ(chunks.load(), kChunks);
    EXPECT_EQ(made, kChunks);
    EXPECT_EQ(freed, kChunks);
}

TEST(CpuAllocatorTap, TheAllocatorIsPutBackWhenTheLastRecordingEnds)
{
    c10::Allocator* const before = c10::GetAllocator(c10::DeviceType::CPU);
    torch::Tensor outlives;
    {
        MemoryRecorder outer(noScope, /*tapCpuAllocator=*/true);
        ASSERT_TRUE(outer.tapsCpuAllocator());
        EXPECT_NE(c10::GetAllocator(c10::DeviceType::CPU), before);
        {
            MemoryRecorder inner(noScope, /*tapCpuAllocator=*/true);
            ASSERT_TRUE(inner.tapsCpuAllocator());
        }
        EXPECT_NE(c10::GetAllocator(c10::DeviceType::CPU), before) << "put back while a recording still ran";
        outlives = torch::ones({4096}, torch::kFloat); // carries the tap's deleter
    }
    EXPECT_EQ(c10::GetAllocator(c10::DeviceType::CPU), before);
    EXPECT_EQ(outlives.sum().item<float>(), 4096.f);
    outlives.reset(); // freed by the allocator that made it, after the tap is gone (ASan would say otherwise)
    MemoryRecorder later(noScope, /*tapCpuAllocator=*/true);
    EXPECT_TRUE(later.take().empty());
}

namespace {

// An allocator whose blocks carry a context apart from their data: the tap cannot wrap it.
class BoxedContextAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(std::size_t bytes) override
    {
        auto* box = new Box{c10::GetDefaultCPUAllocator()->allocate(bytes)};
        return {box->block.get(), box, &deleteBox, c10::Device(c10::DeviceType::CPU)};
    }
    void copy_data(void* dest, const void* src, std::size_t count) const override
    {
        default_copy_data(dest, src, count);
    }

private:
    struct Box {
        c10::DataPtr block;
    };
    static void deleteBox(void* box) { delete static_cast<Box*>(box); }
};

} // namespace

TEST(CpuAllocatorTap, AnAllocatorItCannotWrapIsLeftInPlaceAndC10sReportingIsUsed)
{
    c10::Allocator* const before = c10::GetAllocator(c10::DeviceType::CPU);
    BoxedContextAllocator boxed;
    c10::SetAllocator(c10::DeviceType::CPU, &boxed);
    ASSERT_EQ(c10::GetAllocator(c10::DeviceType::CPU), &boxed);
    {
        MemoryRecorder recorder(noScope, /*tapCpuAllocator=*/true);
        EXPECT_FALSE(recorder.tapsCpuAllocator());
        EXPECT_EQ(c10::GetAllocator(c10::DeviceType::CPU), &boxed);
    }
    c10::SetAllocator(c10::DeviceType::CPU, before);
    ASSERT_EQ(c10::GetAllocator(c10::DeviceType::CPU), before);
}

// The CUDA caching allocator reports each block to the profiler with its live and reserved bytes (c10's
// reportMemoryUsageToProfiler, the call it makes): both are kept with the record, the summary gives the most reserved,
// and a saved run reads them back.
TEST(MemoryRecorder, TheCachingAllocatorsReservedBytesAreKept)
{
    constexpr std::int64_t kSegment = 2 << 20;
    int block = 0;
    ProfileRun run;
    run.device = "cuda";
    run.iterations = 1;
    {
        MemoryRecorder recorder(noScope, /*tapCpuAllocator=*/false);
        const c10::Device cuda(c10::DeviceType::CUDA, 0);
        c10::reportMemoryUsageToProfiler(&block, 512, 512, kSegment, cuda);
        c10::reportMemoryUsageToProfiler(&block, -512, 0, 2 * kSegment, cuda); // a second segment cached meanwhile
        run.memory = recorder.take();
    }
    ASSERT_EQ(run.memory.size(), 2u);
    EXPECT_EQ(run.memory[0].device, "cuda:0");
    EXPECT_EQ(run.memory[0].bytes, 512);
    EXPECT_EQ(run.memory[0].totalAllocatedBytes, 512);
    EXPECT_EQ(run.memory[0].totalReservedBytes, kSegment);
    EXPECT_EQ(run.memory[1].totalReservedBytes, 2 * kSegment);
    EXPECT_EQ(kforge::summarizeMemory(run).reservedPeakBytes, 2 * kSegment);

    kforge::test::TempDir dir;
    kforge::saveProfile(run, dir.path("cuda.kfprof").string());
    const ProfileRun saved = kforge::loadProfiles(dir.path("cuda.kfprof").string()).at(0).run;
    ASSERT_EQ(saved.memory.size(), 2u);
    EXPECT_EQ(saved.memory[1].totalReservedBytes, 2 * kSegment);
    EXPECT_EQ(kforge::summarizeMemory(saved).reservedPeakBytes, 2 * kSegment);
}
