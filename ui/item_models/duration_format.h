// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QString>

namespace kforge::ui {

// One spelling of profile times for the kernel table, the comparison table and their tooltips.
QString formatMicroseconds(double us); // "3.14", "42.7", "1,234" (µs, fewer decimals as values grow)
QString formatDuration(double us);     // with its unit: "850 ns", "42.7 µs", "12.3 ms", "1.25 s"
QString formatShare(double fraction);  // 0.1234 -> "12.3 %"
QString formatSpeedup(double speedup); // 1.234 -> "1.23×"

} // namespace kforge::ui
