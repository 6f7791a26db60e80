// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/memory_profile.h>
#include <kforge/profiling.h>

#include <QString>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kforge::ui {

// A record or a host range placed on the timeline.
struct TimelineItem {
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
    int record = -1; // index into ProfileRun::records, or -1
    int range = -1;  // index into ProfileRun::ranges, or -1
};

struct TimelineLane {
    enum class Kind { Modules, Functions, Kernels, CpuOps, Memory };
    Kind kind = Kind::Kernels;
    QString label;            // "Thread 1 · modules", "GPU 0 · stream 7", "CPU ops · thread 1", "Memory · cpu"
    std::uint64_t thread = 0; // host thread (Modules, Functions, CpuOps)
    int device = -1;          // Kernels
    std::uint32_t stream = 0;
    int firstRow = 0;
    int rowCount = 0;
};

// Where everything of a run goes on the timeline, computed once per run: lanes (per host thread its module
// scopes and function calls, then, for a run that recorded memory, the live bytes of its device (a lane of
// MemoryLaneRows empty rows the view draws as a curve), then kernels per device and stream, or CPU ops per
// thread), and within a lane
// rows, packed so that items in one row never overlap. Nested scopes land one row below their parent. As
// items in a row are sorted by start and do not overlap, their ends are sorted too, which lets the view
// find the visible part of a row by binary search.
class TimelineLayout {
public:
    static constexpr int MemoryLaneRows = 3;

    explicit TimelineLayout(const kforge::ProfileRun& run);

    const std::vector<TimelineLane>& lanes() const { return m_lanes; }
    int rowCount() const { return static_cast<int>(m_rows.size()); }
    int laneOfRow(int row) const { return m_laneOfRow[static_cast<size_t>(row)]; }
    const std::vector<TimelineItem>& row(int row) const { return m_rows[static_cast<size_t>(row)]; }
    // The first item of `row` that ends after `ns` (row(row).size() when none).
    std::size_t firstEndingAfter(int row, double ns) const;
    // {row, position in that row} of a record; {-1, -1} for an index out of range.
    std::pair<int, int> locate(int record) const;
    // The same of a range (a module's or a function call's bar).
    std::pair<int, int> locateRange(int range) const;

    // The memory lane's curve (empty steps when the run recorded no memory), and the live bytes at `ns`: those of the
    // last step at or before it, 0 before the first.
    const kforge::LiveBytesSeries& liveBytes() const { return m_liveBytes; }
    std::int64_t liveBytesAt(double ns) const;
    // The first step at or after `ns` (liveBytes().steps.size() when none).
    std::size_t firstStepFrom(double ns) const;

    // The time the run spans (0, 0 when empty).
    std::int64_t beginNs() const { return m_beginNs; }
    std::int64_t endNs() const { return m_endNs; }
    bool empty() const { return m_rows.empty(); }

private:
    void addLane(TimelineLane lane, std::vector<TimelineItem> items);
    void addMemoryLane(const kforge::ProfileRun& run);

    std::vector<TimelineLane> m_lanes;
    std::vector<std::vector<TimelineItem>> m_rows;
    std::vector<int> m_laneOfRow;
    std::vector<std::pair<int, int>> m_recordPlace;
    std::vector<std::pair<int, int>> m_rangePlace;
    kforge::LiveBytesSeries m_liveBytes;
    std::int64_t m_beginNs = 0, m_endNs = 0;
    bool m_hasItems = false;
};

} // namespace kforge::ui
