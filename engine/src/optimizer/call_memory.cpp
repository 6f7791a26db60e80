// SPDX-License-Identifier: Apache-2.0
#include "optimizer/call_memory.h"

#include "profiling/memory_recorder.h"

#include <algorithm>
#include <utility>

namespace kforge::optimizer {

std::int64_t callPeakBytes(const std::vector<const torch::jit::Stack*>& samples, const std::string& device,
                           const SampleCall& call)
{
    std::int64_t peak = 0;
    for (const torch::jit::Stack* sample : samples) {
        torch::jit::Stack stack = *sample; // copies the IValues, not the tensors' storage: nothing allocated
        std::vector<MemoryRecord> events;
        {
            profiling::MemoryRecorder recorder([] { return std::pair<const char*, const char*>(nullptr, nullptr); },
                                               /*tapCpuAllocator=*/device == "cpu");
            call(stack);
            events = recorder.take();
        }
        std::int64_t live = 0;
        for (const MemoryRecord& event : events)
            if (event.device.rfind(device, 0) == 0) { // "cuda" counts "cuda:0"
                live += event.bytes;
                peak = std::max(peak, live);
            }
    }
    return peak;
}

} // namespace kforge::optimizer
