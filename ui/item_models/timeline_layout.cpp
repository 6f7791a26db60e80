// SPDX-License-Identifier: Apache-2.0
#include "item_models/timeline_layout.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>

namespace kforge::ui {
namespace {

TimelineItem itemOf(std::int64_t startNs, std::int64_t durationNs)
{
    return {startNs, startNs + std::max<std::int64_t>(durationNs, 0), -1, -1};
}

// Host thread ids are large opaque numbers; lanes number them 1, 2, ... in order of first activity.
std::map<std::uint64_t, int> threadOrdinals(const kforge::ProfileRun& run)
{
    std::map<std::uint64_t, std::int64_t> firstSeen;
    const auto see = [&](std::uint64_t thread, std::int64_t ns) {
        auto [it, inserted] = firstSeen.emplace(thread, ns);
        if (!inserted)
            it->second = std::min(it->second, ns);
    };
    for (const kforge::RangeRecord& range : run.ranges)
        see(range.thread, range.startNs);
    for (const kforge::KernelRecord& record : run.records)
        if (record.device < 0)
            see(record.thread, record.startNs);
    std::vector<std::pair<std::int64_t, std::uint64_t>> order;
    for (const auto& [thread, ns] : firstSeen)
        order.emplace_back(ns, thread);
    std::sort(order.begin(), order.end());
    std::map<std::uint64_t, int> ordinals;
    for (const auto& [ns, thread] : order)
        ordinals.emplace(thread, static_cast<int>(ordinals.size()) + 1);
    return ordinals;
}

} // namespace

TimelineLayout::TimelineLayout(const kforge::ProfileRun& run)
{
    m_recordPlace.assign(run.records.size(), {-1, -1});
    m_rangePlace.assign(run.ranges.size(), {-1, -1});
    const std::map<std::uint64_t, int> ordinals = threadOrdinals(run);

    std::map<std::uint64_t, std::vector<TimelineItem>> modules, functions, cpuOps;
    std::map<std::pair<int, std::uint32_t>, std::vector<TimelineItem>> streams;
    for (size_t i = 0; i < run.ranges.size(); ++i) {
        const kforge::RangeRecord& range = run.ranges[i];
        TimelineItem item = itemOf(range.startNs, range.durationNs);
        item.range = static_cast<int>(i);
        (range.kind == "module" ? modules : functions)[range.thread].push_back(item);
    }
    for (size_t i = 0; i < run.records.size(); ++i) {
        const kforge::KernelRecord& record = run.records[i];
        TimelineItem item = itemOf(record.startNs, record.durationNs);
        item.record = static_cast<int>(i);
        if (record.device < 0)
            cpuOps[record.thread].push_back(item);
        else
            streams[{record.device, record.stream}].push_back(item);
    }

    std::vector<std::pair<int, std::uint64_t>> threads;
    for (const auto& [thread, ordinal] : ordinals)
        threads.emplace_back(ordinal, thread);
    std::sort(threads.begin(), threads.end());

    for (const auto& [ordinal, thread] : threads) {
        const QString name = QStringLiteral("Thread %1").arg(ordinal);
        if (auto it = modules.find(thread); it != modules.end())
            addLane({TimelineLane::Kind::Modules, name + QStringLiteral(" · modules"), thread}, std::move(it->second));
        if (auto it = functions.find(thread); it != functions.end())
            addLane({TimelineLane::Kind::Functions, name + QStringLiteral(" · functions"), thread},
                    std::move(it->second));
    }
    addMemoryLane(run);
    for (auto& [key, items] : streams) {
        TimelineLane lane{TimelineLane::Kind::Kernels,
                          QStringLiteral("GPU %1 · stream %2").arg(key.first).arg(key.second)};
        lane.device = key.first;
        lane.stream = key.second;
        addLane(lane, std::move(items));
    }
    for (const auto& [ordinal, thread] : threads)
        if (auto it = cpuOps.find(thread); it != cpuOps.end())
            addLane({TimelineLane::Kind::CpuOps, QStringLiteral("CPU ops · thread %1").arg(ordinal), thread},
                    std::move(it->second));
}

void TimelineLayout::addLane(TimelineLane lane, std::vector<TimelineItem> items)
{
    // Parents (earlier start, later end) before their children, so a child finds its parent's row taken.
    std::sort(items.begin(), items.end(), [](const TimelineItem& a, const TimelineItem& b) {
        return std::tie(a.startNs, b.endNs, a.record, a.range) < std::tie(b.startNs, a.endNs, b.record, b.range);
    });
    lane.firstRow = rowCount();
    std::vector<std::int64_t> rowEnds; // per row of this lane: where its last item ends
    for (const TimelineItem& item : items) {
        size_t row = 0;
        while (row < rowEnds.size() && rowEnds[row] > item.startNs)
            ++row;
        if (row == rowEnds.size()) {
            rowEnds.push_back(0);
            m_rows.emplace_back();
            m_laneOfRow.push_back(static_cast<int>(m_lanes.size()));
        }
        rowEnds[row] = item.endNs;
        auto& cells = m_rows[static_cast<size_t>(lane.firstRow) + row];
        const std::pair place{lane.firstRow + static_cast<int>(row), static_cast<int>(cells.size())};
        if (item.record >= 0)
            m_recordPlace[static_cast<size_t>(item.record)] = place;
        else if (item.range >= 0 && static_cast<size_t>(item.range) < m_rangePlace.size())
            m_rangePlace[static_cast<size_t>(item.range)] = place;
        cells.push_back(item);
        m_beginNs = m_hasItems ? std::min(m_beginNs, item.startNs) : item.startNs;
        m_endNs = m_hasItems ? std::max(m_endNs, item.endNs) : item.endNs;
        m_hasItems = true;
    }
    lane.rowCount = static_cast<int>(rowEnds.size());
    if (lane.rowCount > 0)
        m_lanes.push_back(std::move(lane));
}

void TimelineLayout::addMemoryLane(const kforge::ProfileRun& run)
{
    m_liveBytes = kforge::liveBytesOverTime(run);
    if (m_liveBytes.steps.empty())
        return;
    const QString device =
        QString::fromStdString(run.device.empty() ? std::string(run.memory.front().device) : run.device);
    TimelineLane lane{TimelineLane::Kind::Memory, QStringLiteral("Memory · %1").arg(device)};
    lane.firstRow = rowCount();
    lane.rowCount = MemoryLaneRows;
    for (int row = 0; row < MemoryLaneRows; ++row) {
        m_rows.emplace_back();
        m_laneOfRow.push_back(static_cast<int>(m_lanes.size()));
    }
    m_lanes.push_back(std::move(lane));
    const std::int64_t first = m_liveBytes.steps.front().timeNs, last = m_liveBytes.steps.back().timeNs;
    m_beginNs = m_hasItems ? std::min(m_beginNs, first) : first;
    m_endNs = m_hasItems ? std::max(m_endNs, last) : last;
    m_hasItems = true;
}

std::size_t TimelineLayout::firstStepFrom(double ns) const
{
    const auto& steps = m_liveBytes.steps;
    return static_cast<size_t>(
        std::partition_point(steps.begin(), steps.end(),
                             [ns](const kforge::LiveBytesStep& step) { return double(step.timeNs) < ns; }) -
        steps.begin());
}

std::int64_t TimelineLayout::liveBytesAt(double ns) const
{
    const auto& steps = m_liveBytes.steps;
    const auto after = std::partition_point(
        steps.begin(), steps.end(), [ns](const kforge::LiveBytesStep& step) { return double(step.timeNs) <= ns; });
    return after == steps.begin() ? 0 : std::prev(after)->liveBytes;
}

std::size_t TimelineLayout::firstEndingAfter(int row, double ns) const
{
    const auto& cells = m_rows[static_cast<size_t>(row)];
    return static_cast<size_t>(
        std::partition_point(cells.begin(), cells.end(),
                             [ns](const TimelineItem& item) { return double(item.endNs) <= ns; }) -
        cells.begin());
}

std::pair<int, int> TimelineLayout::locate(int record) const
{
    if (record < 0 || static_cast<size_t>(record) >= m_recordPlace.size())
        return {-1, -1};
    return m_recordPlace[static_cast<size_t>(record)];
}

std::pair<int, int> TimelineLayout::locateRange(int range) const
{
    if (range < 0 || static_cast<size_t>(range) >= m_rangePlace.size())
        return {-1, -1};
    return m_rangePlace[static_cast<size_t>(range)];
}

} // namespace kforge::ui
