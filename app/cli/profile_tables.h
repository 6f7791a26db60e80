// SPDX-License-Identifier: Apache-2.0
#pragma once
// The text and JSON of profile runs and comparisons, shared by kforge profile, compare and report.
#include <kforge/profiling.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>

namespace kforge::cli {

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
