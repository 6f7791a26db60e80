// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/benchmark.h>
#include <kforge/profiling.h>
#include <kforge/verify.h>
#include <kforge/runtime_types.h>
#include <kforge/speed_verdict.h>

#include <QString>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kforge::ui {

// One spelling of counts, sizes and function inventories for every view, so columns, tooltips and the
// status bar agree.
// An error message on one line (status bar, signals, dialogs' first line): line breaks become spaces.
QString oneLine(QString text);
inline QString oneLine(const char* text) { return oneLine(QString::fromUtf8(text)); }

QString formatCount(std::int64_t count);                              // "1,234,567" in the user's locale
QString formatCompactCount(std::int64_t count);                       // "1.23 M", "842 k", "950"
QString formatBytes(std::int64_t bytes);                              // "4.88 MiB"
QString formatFunctions(const std::map<std::string, int>& functions); // "gelu×2, linear×4"
QString formatModulePath(const std::string& path);                    // "encoder.layers.0", "(root)"

// Calls providers declined (the original served them), for the status bar after a run or profile: "3 calls declined
// by CpuGeluProvider(approximate=none): a dtype other than float32 and bfloat16; the original served them", or
// with several entries "7 calls declined (P: 3, Q: 4; see the plan's Declined column); the original served them".
// "" when there are none.
QString formatDeclines(const std::vector<kforge::EntryDeclines>& declines);
// One entry's declines, two lines for a tooltip: who declined how many calls of what, and the last reason.
QString formatEntryDeclines(const kforge::EntryDeclines& declines);

// A benchmark in one line: "Benchmark: 1.12× with the plan (95% interval 0.97× to 1.26×), median 34.8 ms → 31.0 ms
// per forward; outputs agree", with how far a stopped one got.
QString formatBenchmark(const kforge::BenchmarkResult& result);
// "faster", "slower", "no detectable change", or "not judged (too few rounds)" when no 95% interval exists.
QString formatSpeedVerdict(const kforge::SpeedComparison& speed);
// "faster — 1.23× (95% interval 1.20× to 1.26×; detects changes of 2.1% or more)"; with too few rounds the ratio and
// "not judged (too few rounds)".
QString formatSpeedComparison(const kforge::SpeedComparison& speed);
// A comparison row's verdict with its interval and detection limit (tooltips), or why it has none.
QString formatRowVerdict(const kforge::ComparisonRow& row);

// A verification in one line: "Verify: the plan keeps the outputs (cosine 1.000000, max abs error 0)", or "Verify:
// FAIL, output 0: cosine 0.87 < 0.999; first diverging module: blocks.0.attn (call 1)".
QString formatVerify(const kforge::VerifyReport& report);

} // namespace kforge::ui
