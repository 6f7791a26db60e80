// SPDX-License-Identifier: Apache-2.0
#pragma once
// The text and JSON of profile runs and comparisons, shared by kforge profile, compare, report and diff, and the
// cells of their tables, which the shareable reports (--html, --md) lay out too.
#include "output.h"

#include <kforge/profiling.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace kforge::cli {

// "ATen ops" (CPU) or "kernels" by `by`, "functions", "modules (own records, children excluded)".
std::string statisticsTitle(const ProfileRun& run, GroupBy by);
// The statistics rows of one grouping, `top` rows (0: all).
Table statisticsTable(const std::vector<StatRow>& rows, GroupBy by, size_t top);
// Before and after per function or module (`modules`: keys are module paths), speedup, interval and verdict.
Table comparisonTable(const std::vector<ComparisonRow>& rows, const std::string& title, bool modules);
// "none (baseline)" or "1 entry: (root) gelu -> CpuGeluProvider".
std::string planSummary(const ProfileRun& run);
// A row's verdict; rows present on one side only have none ("-").
std::string verdictText(const ComparisonRow& row);
// What differs between how two runs were made (model, device, executor, versions, threads, cores, plan, module
// tree), one line each: a timing difference may come from any of them.
std::vector<std::string> setupDifferences(const ProfileRun& a, const ProfileRun& b);

// "cpu: timing ATen op executions" / "cuda: NVIDIA H200, tracing CUDA kernels with CUPTI 13.0".
std::string deviceLine(const ProfileRun& run);
// runDescription, then the label, the device line, record counts and the statistics asked for (groupBy: kernel,
// geometry, function, module; "" for kernels, functions and modules); top 0 lists every row.
nlohmann::ordered_json runJson(const ProfileRun& run, const std::string& groupBy, size_t top,
                               const std::string& label = "");
// The model, device, plan, iterations and declines of a run.
void printRunHeader(std::ostream& out, const ProfileRun& run);
// The statistics tables asked for, `top` rows each (0: all).
void printRunTables(std::ostream& out, const ProfileRun& run, const std::string& groupBy, size_t top);
// Baseline vs plan per function and module, totals and the output error.
// `c` is compare(baseline, plan, ...): made once by the caller, with its bound on the detectable change.
nlohmann::ordered_json comparisonJson(const Comparison& c, const ProfileRun& baseline, const ProfileRun& plan,
                                      size_t top);
void printComparison(std::ostream& out, const Comparison& c, const ProfileRun& baseline, const ProfileRun& plan);

} // namespace kforge::cli
