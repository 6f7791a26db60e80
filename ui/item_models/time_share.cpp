// SPDX-License-Identifier: Apache-2.0
#include "item_models/time_share.h"

#include "item_models/duration_format.h"
#include "item_models/format.h"

#include <algorithm>

namespace kforge::ui {

QString TimeShareSlice::label() const { return QStringLiteral("%1  %2").arg(key, formatShare(share)); }

std::vector<TimeShareSlice> timeShareSlices(const std::vector<kforge::KernelRecord>& records, kforge::GroupBy groupBy,
                                            int topCount)
{
    // Geometry splits one kernel into several bars, which says nothing about where time goes.
    if (groupBy == kforge::GroupBy::KernelGeometry)
        groupBy = kforge::GroupBy::Kernel;
    return timeShareSlices(kforge::statistics(records, groupBy), groupBy, topCount);
}

std::vector<TimeShareSlice> timeShareSlices(std::vector<kforge::StatRow> rows, kforge::GroupBy groupBy, int topCount)
{
    std::sort(rows.begin(), rows.end(), [](const kforge::StatRow& a, const kforge::StatRow& b) {
        return a.totalUs != b.totalUs ? a.totalUs > b.totalUs : a.key < b.key;
    });
    double total = 0;
    for (const kforge::StatRow& row : rows)
        total += row.totalUs;

    const auto keep = static_cast<size_t>(std::max(topCount, 1));
    // "other" standing for one group would hide a name for nothing.
    const size_t named = rows.size() <= keep + 1 ? rows.size() : keep;
    std::vector<TimeShareSlice> slices;
    for (size_t i = 0; i < named; ++i) {
        const kforge::StatRow& row = rows[i];
        TimeShareSlice slice;
        slice.key = groupBy == kforge::GroupBy::Module ? formatModulePath(row.key) : QString::fromStdString(row.key);
        slice.totalUs = row.totalUs;
        slice.calls = row.calls;
        slices.push_back(slice);
    }
    if (named < rows.size()) {
        TimeShareSlice other;
        other.key = QStringLiteral("other");
        other.isOther = true;
        other.groups = static_cast<int>(rows.size() - named);
        for (size_t i = named; i < rows.size(); ++i) {
            other.totalUs += rows[i].totalUs;
            other.calls += rows[i].calls;
        }
        slices.push_back(other);
    }
    for (TimeShareSlice& slice : slices)
        slice.share = total > 0 ? slice.totalUs / total : 0.0;
    return slices;
}

} // namespace kforge::ui
