// SPDX-License-Identifier: Apache-2.0
// A run's allocations as PyTorch's memory snapshot: the pickled dict torch.cuda.memory._snapshot() returns, which
// PyTorch's memory visualiser (pytorch.org/memory_viz, torch.cuda._memory_viz) opens. Pickled with LibTorch's own
// pickler and plain dicts and lists, as PyTorch's C++ side writes its snapshots (torch/csrc/cuda/memory_snapshot.cpp).
//
// Mapping: device_traces[d] holds the device's events in time order ("alloc", then "free_requested" and
// "free_completed" for a free, as the caching allocator reports a free it makes at once), their frames the function
// call and the modules open when it happened, innermost first. The CPU allocator keeps no cache: each allocation still
// live at the end is a segment of its own, one active block. The run's device only: a CUDA run's host allocations are
// left out, a CPU run's events are device 0.
#include <kforge/profile_export.h>

#include <kforge/error.h>
#include <kforge/module_path.h>

#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <map>
#include <ostream>
#include <string>

namespace kforge {
namespace {

using Dict = c10::Dict<c10::IValue, c10::IValue>;
using List = c10::List<c10::IValue>;

Dict newDict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }
List newList() { return List(c10::AnyType::get()); }

// "cuda:1" -> 1; "cpu" -> 0.
int deviceIndex(std::string_view device)
{
    const auto colon = device.find(':');
    return colon == std::string_view::npos ? 0 : std::stoi(std::string(device.substr(colon + 1)));
}

// The caching allocator's view, as PyTorch's snapshot is: the driver's records (MemoryRecord::driver) stay out.
bool onRunDevice(const MemoryRecord& event, const std::string& runDevice)
{
    return !event.driver && event.device.rfind(runDevice, 0) == 0; // "cuda" takes "cuda:0"
}

Dict frame(std::string_view name, const std::string& filename)
{
    Dict f = newDict();
    f.insert("name", std::string(name));
    f.insert("filename", filename);
    f.insert("line", 0);
    return f;
}

// The function call, then each module from the innermost to the root.
List framesOf(const MemoryRecord& event)
{
    List frames = newList();
    if (!event.function.empty())
        frames.push_back(frame(event.function, "function call in " + module_path::displayName(event.modulePath)));
    frames.push_back(frame(module_path::displayName(event.modulePath), "module"));
    for (const std::string_view ancestor : module_path::ancestorsOf(event.modulePath))
        frames.push_back(frame(module_path::displayName(ancestor), "module"));
    return frames;
}

Dict traceEntry(const char* action, const MemoryRecord& event, std::int64_t size)
{
    Dict e = newDict();
    e.insert("action", action);
    e.insert("addr", std::int64_t(event.address));
    e.insert("size", size);
    e.insert("stream", 0);
    e.insert("time_us", event.timeNs / 1000);
    e.insert("frames", framesOf(event));
    e.insert("compile_context", "N/A");
    e.insert("user_metadata", "");
    return e;
}

Dict segmentOf(const MemoryRecord& alloc, int device)
{
    Dict block = newDict();
    block.insert("address", std::int64_t(alloc.address));
    block.insert("size", alloc.bytes);
    block.insert("requested_size", alloc.bytes);
    block.insert("state", "active_allocated");
    block.insert("frames", framesOf(alloc));
    List blocks = newList();
    blocks.push_back(block);
    Dict segment = newDict();
    segment.insert("device", device);
    segment.insert("address", std::int64_t(alloc.address));
    segment.insert("total_size", alloc.bytes);
    segment.insert("allocated_size", alloc.bytes);
    segment.insert("active_size", alloc.bytes);
    segment.insert("requested_size", alloc.bytes);
    segment.insert("stream", 0);
    segment.insert("segment_type", alloc.bytes < (std::int64_t(1) << 20) ? "small" : "large");
    segment.insert("segment_pool_id", c10::ivalue::Tuple::create({0, 0}));
    segment.insert("is_expandable", false);
    segment.insert("frames", newList());
    segment.insert("blocks", blocks);
    return segment;
}

} // namespace

void writeMemorySnapshot(const ProfileRun& run, std::ostream& out)
{
    if (run.memory.empty())
        throw Error("memory snapshot", "the run recorded no memory: profile it with memory recorded (kforge profile "
                                       "--memory)");
    for (const MemoryRecord& event : run.memory)
        if (event.address == 0 && onRunDevice(event, run.device))
            throw Error("memory snapshot", "the run's allocations carry no addresses (a file from before kforge "
                                           "recorded them): profile it again with memory recorded");
    int traceDevice = 0; // the run's device index
    List trace = newList();
    std::map<std::uint64_t, const MemoryRecord*> live; // by address: the allocation not yet freed
    for (const MemoryRecord& event : run.memory) {
        if (!onRunDevice(event, run.device))
            continue;
        traceDevice = deviceIndex(event.device);
        if (event.bytes > 0) {
            trace.push_back(traceEntry("alloc", event, event.bytes));
            live[event.address] = &event;
        } else {
            trace.push_back(traceEntry("free_requested", event, -event.bytes));
            trace.push_back(traceEntry("free_completed", event, -event.bytes));
            live.erase(event.address);
        }
    }
    List deviceTraces = newList();
    for (int d = 0; d <= traceDevice; ++d)
        deviceTraces.push_back(d == traceDevice ? trace : newList());
    List segments = newList();
    for (const auto& [address, alloc] : live)
        segments.push_back(segmentOf(*alloc, deviceIndex(alloc->device)));
    Dict snapshot = newDict();
    snapshot.insert("segments", segments);
    snapshot.insert("device_traces", deviceTraces);
    snapshot.insert("allocator_settings", newDict());
    snapshot.insert("external_annotations", newList());
    torch::jit::pickle([&out](const char* data, size_t size) { out.write(data, std::streamsize(size)); },
                       c10::IValue(snapshot));
}

} // namespace kforge
