// SPDX-License-Identifier: Apache-2.0
#pragma once
// The JSON shape of each engine value type, defined once and written the same way into .kfprof files, Chrome
// traces' metadata and every `kforge ... --json` output (docs/json-output.md). They are nlohmann's ADL hooks, so
// `nlohmann::ordered_json j = moduleInfo;` works; keys come in the order written here.
#include <kforge/module_info.h>
#include <kforge/plan.h>
#include <kforge/profiling.h>
#include <kforge/runtime_types.h>
#include <kforge/tensor_digest.h>

#include <nlohmann/json.hpp>

namespace kforge {

// {"path", "name", "type", "qualified_type", "parameters", "parameter_bytes", "subtree_parameters",
//  "subtree_parameter_bytes", "children", "functions", "subtree_functions", "has_forward", "forward_called",
//  "depth"}
void to_json(nlohmann::ordered_json& out, const ModuleInfo& module);
// {"path", "dtype", "device", "shape", "sum", "max_abs"}; a sum or maximum JSON cannot spell (NaN, ±infinity) is
// written as the string "NaN", "Infinity" or "-Infinity" (jsonNumber).
void to_json(nlohmann::ordered_json& out, const TensorDigest& digest);
// {"function", "provider", "module", "thread", "runtime", "error", "unwound", "capture"}
void to_json(nlohmann::ordered_json& out, const LeftoverPatch& patch);
// {"entry", "scope", "function", "provider", "calls", "last_reason"}
void to_json(nlohmann::ordered_json& out, const EntryDeclines& declines);
// {"name", "function", "module", "calls", "total_us", "mean_us", "min_us", "median_us", "p95_us", "max_us", "share"}
void to_json(nlohmann::ordered_json& out, const StatRow& row);
// {"entry", "scope", "function", "provider", "kind", "reason", "fix", "message"}
void to_json(nlohmann::ordered_json& out, const PlanWarning& warning);

// {"iterations", "stalled_iterations", "stalled_calls", "excess_us", "smallest_us", "largest_us", "remains",
//  "cores", "load_average", "intra_op_threads", "message"}
void to_json(nlohmann::ordered_json& out, const StallReport& stalls);

// A double as JSON: itself when finite, else the string "NaN", "Infinity" or "-Infinity".
nlohmann::ordered_json jsonNumber(double value);

// What a profile run measured, without its records: {"model", "inputs", "device", "device_name",
// "graph_executor", "intra_op_threads", "cores", "load_average", "versions": {"torch", "cupti", "kforge"},
// "warmup_iterations", "iterations", "cancelled", "dropped_records", "wall_ns", "used_plan", "plan", "declines"}. The
// head of a run in a .kfprof file, of a run in a trace's metadata and of `kforge profile --json`; each adds its own
// keys after these.
nlohmann::ordered_json runDescription(const ProfileRun& run);

} // namespace kforge
