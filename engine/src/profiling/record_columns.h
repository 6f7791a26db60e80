// SPDX-License-Identifier: Apache-2.0
#pragma once
// The columns of a KernelRecord, a RangeRecord and a MemoryRecord: the one list, in file order, that the .kfprof tables
// (writer and reader) and the kernel CSV (writer and reader) visit. forEachColumn(record, visit) calls visit(name,
// field) once per column, `field` a reference to the record's member: std::string, an integer type, std::array<int, 3>
// (the .kfprof writes [x, y, z], the CSV name_x, name_y, name_z) or bool (written 0 or 1).
#include <kforge/profiling.h>

#include <array>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kforge::record_columns {

template <class R>
concept KernelRow = std::same_as<std::remove_const_t<R>, KernelRecord>;
template <class R>
concept RangeRow = std::same_as<std::remove_const_t<R>, RangeRecord>;
template <class R>
concept MemoryRow = std::same_as<std::remove_const_t<R>, MemoryRecord>;

template <KernelRow R, class Visit> void forEachColumn(R& r, Visit&& visit)
{
    visit("kind", r.kind);
    visit("name", r.name);
    visit("module", r.modulePath);
    visit("function", r.function);
    visit("op", r.op);
    visit("provider", r.provider);
    visit("start_ns", r.startNs);
    visit("duration_ns", r.durationNs);
    visit("thread", r.thread);
    visit("device", r.device);
    visit("stream", r.stream);
    visit("grid", r.grid);
    visit("block", r.block);
    visit("registers_per_thread", r.registersPerThread);
    visit("shared_memory_bytes", r.sharedMemoryBytes);
    visit("correlation", r.correlation);
    visit("iteration", r.iteration);
    visit("graph_replay", r.graphReplay);
    visit("input_shapes", r.inputShapes);
}

template <RangeRow R, class Visit> void forEachColumn(R& r, Visit&& visit)
{
    visit("kind", r.kind);
    visit("name", r.name);
    visit("provider", r.provider);
    visit("start_ns", r.startNs);
    visit("duration_ns", r.durationNs);
    visit("thread", r.thread);
    visit("iteration", r.iteration);
}

template <MemoryRow R, class Visit> void forEachColumn(R& r, Visit&& visit)
{
    visit("time_ns", r.timeNs);
    visit("bytes", r.bytes);
    visit("total_allocated_bytes", r.totalAllocatedBytes);
    visit("module", r.modulePath);
    visit("function", r.function);
    visit("device", r.device);
    visit("thread", r.thread);
    visit("iteration", r.iteration);
    visit("address", r.address);
    visit("driver", r.driver);
    visit("total_reserved_bytes", r.totalReservedBytes);
}

// Text columns: std::string, or a std::string_view of interned text (MemoryRecord's names: readers intern what they
// read).
template <class T> inline constexpr bool kIsInterned = std::is_same_v<std::remove_cvref_t<T>, std::string_view>;
template <class T>
inline constexpr bool kIsText = std::is_same_v<std::remove_cvref_t<T>, std::string> || kIsInterned<T>;
template <class T> inline constexpr bool kIsDims = std::is_same_v<std::remove_cvref_t<T>, std::array<int, 3>>;
template <class T> inline constexpr bool kIsFlag = std::is_same_v<std::remove_cvref_t<T>, bool>;

// The column names of a record type, as the .kfprof's "record_columns" / "range_columns" list them.
template <class Record> std::vector<std::string> names()
{
    std::vector<std::string> out;
    const Record r;
    forEachColumn(r, [&](const char* name, const auto&) { out.emplace_back(name); });
    return out;
}

// The kernel CSV's header: the same columns, each [x, y, z] as three ("grid_x", "grid_y", "grid_z").
inline std::vector<std::string> csvNames()
{
    std::vector<std::string> out;
    const KernelRecord r;
    forEachColumn(r, [&](const char* name, const auto& field) {
        if constexpr (kIsDims<decltype(field)>) {
            for (const char* axis : {"_x", "_y", "_z"})
                out.push_back(std::string(name) + axis);
        } else {
            out.emplace_back(name);
        }
    });
    return out;
}

} // namespace kforge::record_columns
