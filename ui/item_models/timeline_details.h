// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the timeline's details pane says: everything about the record the user clicked, or where the time went inside
// a Shift+dragged span (per function and per module, the time of the records inside it, clipped to it).
#include <kforge/profiling.h>

#include <QString>

namespace kforge::ui {

// "aten::addmm — cpu_op · module blocks.0.mlp · function linear served by original · op aten::addmm · 12.3 µs,
// starting at 1.20 ms, forward 2"
QString recordDetails(const kforge::ProfileRun& run, int recordIndex);

// "blocks.0.mlp — module scope · 310 µs, starting at 1.20 ms, forward 2 · 14 records inside, 290 µs: linear 200 µs,
// gelu 90 µs" (a function call's bar names its provider); the records inside are those of its thread within its span.
QString rangeDetails(const kforge::ProfileRun& run, int rangeIndex);

// "1.20 ms to 2.40 ms (1.20 ms), 812 µs recorded: functions linear 402 µs (49.5%), gelu 96 µs (11.8%), ...;
// modules blocks.0.mlp 310 µs (38.2%), ..." with the five largest of each.
QString spanSummary(const kforge::ProfileRun& run, double startNs, double endNs);

} // namespace kforge::ui
