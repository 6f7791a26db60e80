// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/json_shapes.h> // IWYU pragma: export (every command writes these shapes)
#include <kforge/leftover_groups.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/plan_landing.h>
#include <kforge/profile_export.h>
#include <kforge/runtime_types.h>

#include "report.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kforge::cli {

std::string withThousands(long long value);
std::string functionsSummary(const std::map<std::string, int>& functions);
// "12.345" with `decimals` digits after the point.
std::string fixed(double value, int decimals);

// The one table layout of every command: columns sized to their widest cell (UTF-8 aware), two spaces apart,
// numbers right-aligned, no trailing blanks.
struct Column {
    std::string title;
    bool rightAligned = false;
};
std::string formatTable(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& rows);
// A table's cells before layout: the text tables and the shareable reports (--html, --md) lay out the same cells.
struct Table {
    std::vector<Column> columns;
    std::vector<std::vector<std::string>> rows;
};
inline std::string formatTable(const Table& table) { return formatTable(table.columns, table.rows); }
// All columns left-aligned.
std::string formatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

std::string describe(const TensorDigest& digest);
// One line for patches alike but for their push time: "gelu -> P pushed by module 'm' on thread 1, 4,096 entries
// (unwound): why".
std::string describe(const LeftoverGroup& group);
// "declined: plan entry 0 (gelu -> CpuGeluProvider, scope (root)) declined 12 call(s); ..."
std::string describe(const EntryDeclines& declines);

// The entries of `planFile` (either dialect; none when empty), then one per --provide spec.
Plan planFromOptions(const std::string& planFile, const std::vector<std::string>& provideSpecs);

// The plan a command runs: --plan FILE (either dialect), then one entry per --provide SPEC.
struct PlanOptions {
    std::string file;
    std::vector<std::string> provides;
    bool acceptChangedPlugins = false; // --accept-changed-plugins
    bool given() const { return !file.empty() || !provides.empty(); }
    Plan read() const { return planFromOptions(file, provides); }
};
// --plan FILE and --provide SPEC; `what` ends the help of both, e.g. "in effect while capturing".
void addPlanOptions(CLI::App* command, PlanOptions& options, const std::string& what = "");
// --device cpu|cuda (default: what `device` holds).
void addDeviceOption(CLI::App* command, std::string& device, const std::string& help);
// --quiet/-q: no progress on stderr.
void addQuietFlag(CLI::App* command, bool& quiet);
// --max-detectable PERCENT: the speed verdict's bound (speed_verdict.h); `fraction` holds it as a fraction.
void addMaxDetectableOption(CLI::App* command, double& fraction);
// --json: main prints the command's Report as JSON instead of text (main.cpp reads the flag, no command does).
void addJsonFlag(CLI::App* command, const std::string& help = "JSON output");

// A plan's notes (kforge::planNotes): a plan made for another model warned, and the entries that can never fire
// warned one a line ("kforge: warning: plan entry N (scope 'x', gelu -> P) can never fire: REASON") and listed in the
// --json output as "warnings".
void warnPlan(Report& report, const PlanNotes& notes);

// A plan landing on this machine (kforge::landPlan): the session moved to `device`; a plan read from a file has the
// entries whose provenance differs re-validated (those that fail are disabled and warned; a plan without provenance
// is noted as not re-validated); then warnPlan. Every command that runs a plan calls this once the plan is known.
void landPlan(Report& report, Plan& plan, ModelSession& session, const std::string& device, const PlanOptions& options);

// Commands that run forwards check this first, so nothing half-done is printed before the error.
void requireInputs(const ModelSession& session);

// Which model a command opens and what it feeds it, declared once for every command that runs forwards.
struct ModelOptions {
    std::string source;              // MODEL: a TorchScript file, a torch.export package (.pt2) or builtin:NAME
    std::vector<std::string> inputs; // --input DTYPE[SHAPE], one per forward argument
    std::string inputsFile;          // --inputs-file: tensors saved with torch.save
    OpenOptions open;                // --executor, --program, --threads (and run's --keep-leftovers)
};
// MODEL, --input, --inputs-file, --executor direct|optimized, --program and --threads (LibTorch's intra-op threads:
// one meaning in every command).
void addModelOptions(CLI::App* command, ModelOptions& options);
// --program NAME: which program of a torch.export package to open (OpenOptions::program); --compiled: a package's
// AOTInductor compiled code instead of its exported program, where it holds both (OpenOptions::compiled).
void addProgramOption(CLI::App* command, OpenOptions& open);
// "direct (the graph as scripted, nothing fused)" or "optimized (LibTorch's profiling executor)".
std::string describeGraphExecutor(const std::string& name);

// Opens the model and applies --input / --inputs-file; the session's warnings go to the report.
std::unique_ptr<ModelSession> openModel(const ModelOptions& options, Report& report);

// A model and the plan a command runs on it whole (bench, verify): opened and moved to `device`, its inputs
// required, the plan read (none refused in `command`'s name unless `planOptional`) and landed with its notes.
struct SessionWithPlan {
    std::unique_ptr<ModelSession> session;
    Plan plan;
};
SessionWithPlan openWithPlan(const std::string& command, const ModelOptions& model, const PlanOptions& plan,
                             const std::string& device, Report& report, bool planOptional = false);

// The run of `runs` that `choice` names: its label, else its number from 1; null when none does (report --run,
// diff --run-a/--run-b).
const SavedRun* runNamed(const std::vector<SavedRun>& runs, const std::string& choice);

} // namespace kforge::cli
