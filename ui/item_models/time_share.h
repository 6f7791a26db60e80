// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/profiling.h>

#include <QString>

#include <vector>

namespace kforge::ui {

// One bar of the time-share chart: a function, module path or kernel, or the sum of the smaller ones.
struct TimeShareSlice {
    QString key;         // "gelu", "encoder.layers.0", "(no function)", "(root)", or "other"
    double totalUs = 0;  // summed kernel time
    double share = 0;    // of the run's total kernel time, 0..1
    long long calls = 0; // records in the group
    int groups = 1;      // how many groups "other" sums (1 for a named slice)
    bool isOther = false;

    QString label() const; // "gelu  42.1 %"
};

// The `topCount` largest groups by total time, largest first (ties by key), then "other" summing the rest
// when there is a rest of more than one group (a single remaining group keeps its own name). Function
// grouping names records without a function "(no function)", module grouping names the root "(root)";
// KernelGeometry is treated as Kernel.
std::vector<TimeShareSlice> timeShareSlices(const std::vector<kforge::KernelRecord>& records, kforge::GroupBy groupBy,
                                            int topCount);
// The same of the rows kforge::statistics made of a run's records in `groupBy` (Kernel for KernelGeometry).
std::vector<TimeShareSlice> timeShareSlices(std::vector<kforge::StatRow> rows, kforge::GroupBy groupBy, int topCount);

} // namespace kforge::ui
