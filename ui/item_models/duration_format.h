// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QString>

namespace kforge::ui {

// One spelling of profile times for the kernel table, the comparison table and their tooltips.
QString formatMicroseconds(double us); // "3.14", "42.7", "1,234" (µs, fewer decimals as values grow)
QString formatDuration(double us);     // with its unit: "850 ns", "42.7 µs", "12.3 ms", "1.25 s"
QString formatShare(double fraction);  // 0.1234 -> "12.3 %"
QString formatSpeedup(double speedup); // 1.234 -> "1.23×"

// A table column's time unit, chosen from its largest value so that a column reads "6,213 ms", not "6,212,983 µs",
// and every cell of it stays in one unit (comparable at a glance, as the header says).
struct TimeUnit {
    QString name = QStringLiteral("µs");
    double us = 1; // microseconds per unit
};
TimeUnit timeUnitFor(double largestUs);            // µs below 100 ms, ms below 100 s, else s
QString formatIn(double us, const TimeUnit& unit); // the value in `unit`, as formatMicroseconds spells it

} // namespace kforge::ui
