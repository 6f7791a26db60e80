// SPDX-License-Identifier: Apache-2.0
#pragma once
// A CPU data allocator for instruction counts: freed blocks wait on a free list per size and the next allocation of
// that size takes one back, so a tensor's data costs the same instructions whatever the heap looked like before.
// glibc's posix_memalign (c10's CPU allocator) splits and consolidates chunks by the heap's layout at that moment:
// two configurations making the same allocations differed by up to ~200 instructions per call in _int_free,
// malloc_consolidate and _int_memalign, more than the interposer costs. Only for counting children: it never
// returns memory to the system.
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kforge_bench {

class SteadyCpuAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(std::size_t bytes) override
    {
        const std::size_t units = (bytes + kUnit - 1) / kUnit;
        void* data = nullptr;
        if (units < kLists && !lists()[units].empty()) {
            data = lists()[units].back();
            lists()[units].pop_back();
        } else {
            auto* block = static_cast<char*>(std::aligned_alloc(kUnit, (units + 1) * kUnit));
            *reinterpret_cast<std::size_t*>(block) = units; // the header keeps the size class for the deleter
            data = block + kUnit;
        }
        return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &release; }
    void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }

    // Makes this the CPU allocator of the process from now on.
    static void install()
    {
        static SteadyCpuAllocator allocator;
        c10::SetCPUAllocator(&allocator, /*priority=*/100);
    }

private:
    static constexpr std::size_t kUnit = 64; // c10's CPU alignment
    static constexpr std::size_t kLists = 1024;
    static std::vector<std::vector<void*>>& lists()
    {
        static std::vector<std::vector<void*>> all(kLists);
        return all;
    }
    static void release(void* data)
    {
        char* block = static_cast<char*>(data) - kUnit;
        const std::size_t units = *reinterpret_cast<std::size_t*>(block);
        if (units < kLists)
            lists()[units].push_back(data);
        else
            std::free(block);
    }
};

} // namespace kforge_bench
