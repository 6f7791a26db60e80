// SPDX-License-Identifier: Apache-2.0
// kforge profile, kforge compare, kforge report: profile runs and their tables, baseline vs plan, saved .kfprof
// files (opened without the model or a GPU). Ctrl+C stops a run after the current forward with a partial result.
#include "commands.h"
#include "output.h"
#include "progress.h"

#include <kforge/error.h>
#include <kforge/module_path.h>
#include <kforge/profile_export.h>
#include <kforge/profiler.h>
#include <kforge/runtime.h>

#include <cstdio>
#include <iostream>
#include <optional>

namespace kforge::cli {
namespace {

// ---- formatting ------------------------------------------------------------------------------------------------

std::string general(double v)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

std::string deviceLine(const ProfileRun& run)
{
    if (run.device == "cpu")
        return "cpu: timing ATen op executions";
    return run.device + ": " + (run.deviceName.empty() ? std::string("CUDA device") : run.deviceName) +
           ", tracing CUDA kernels" + (run.cuptiVersion.empty() ? "" : " with CUPTI " + run.cuptiVersion);
}

std::string planSummary(const ProfileRun& run)
{
    if (!run.usedPlan)
        return "none (baseline)";
    std::string out = std::to_string(run.plan.entries.size()) + (run.plan.entries.size() == 1 ? " entry" : " entries");
    for (size_t i = 0; i < run.plan.entries.size(); ++i) {
        const PlanEntry& e = run.plan.entries[i];
        out += (i ? "; " : ": ") + module_path::displayName(e.scope) + " " + e.function + " -> " + e.providerType() +
               (e.enabled ? "" : " (disabled)");
    }
    return out;
}

struct Grouping {
    std::string name; // "kernel", "geometry", "function", "module"
    GroupBy by;
};

Grouping groupingOf(const std::string& name)
{
    if (name == "geometry")
        return {name, GroupBy::KernelGeometry};
    if (name == "function")
        return {name, GroupBy::Function};
    if (name == "module")
        return {name, GroupBy::Module};
    return {"kernel", GroupBy::Kernel};
}

// The tables to show: the one asked for, or kernels, functions and modules.
std::vector<Grouping> groupings(const std::string& groupBy)
{
    if (!groupBy.empty())
        return {groupingOf(groupBy)};
    return {groupingOf("kernel"), groupingOf("function"), groupingOf("module")};
}

std::string tableTitle(const ProfileRun& run, const Grouping& g)
{
    const std::string what = run.device == "cpu" ? "ATen ops" : "kernels";
    switch (g.by) {
    case GroupBy::Kernel:
        return what;
    case GroupBy::KernelGeometry:
        return what + " by grid and block";
    case GroupBy::Function:
        return "functions";
    case GroupBy::Module:
        return "modules (own records, children excluded)";
    }
    return what;
}

std::string statsTable(const std::vector<StatRow>& rows, const Grouping& g, size_t top)
{
    const bool byKernel = g.by == GroupBy::Kernel || g.by == GroupBy::KernelGeometry;
    std::vector<Column> columns{{g.by == GroupBy::Function ? "FUNCTION"
                                 : g.by == GroupBy::Module ? "MODULE"
                                                           : "NAME",
                                 false},
                                {"CALLS", true},
                                {"TOTAL ms", true},
                                {"MEAN µs", true},
                                {"MEDIAN µs", true},
                                {"P95 µs", true},
                                {"MAX µs", true},
                                {"SHARE %", true}};
    if (byKernel) {
        columns.push_back({"FUNCTION", false});
        columns.push_back({"MODULE", false});
    }
    std::vector<std::vector<std::string>> cells;
    for (size_t i = 0; i < rows.size() && (top == 0 || i < top); ++i) {
        const StatRow& r = rows[i];
        std::vector<std::string> row{g.by == GroupBy::Module ? module_path::displayName(r.key) : r.key,
                                     withThousands(r.calls),
                                     fixed(r.totalUs / 1000.0, 3),
                                     fixed(r.meanUs, 1),
                                     fixed(r.medianUs, 1),
                                     fixed(r.p95Us, 1),
                                     fixed(r.maxUs, 1),
                                     fixed(100.0 * r.share, 1)};
        if (byKernel) {
            row.push_back(r.function.empty() ? "-" : r.function);
            row.push_back(r.modulePath == "(several)" ? r.modulePath : module_path::displayName(r.modulePath));
        }
        cells.push_back(std::move(row));
    }
    return formatTable(columns, cells);
}

// runDescription, then the label, the device line, record counts and the statistics asked for.
nlohmann::ordered_json runJson(const ProfileRun& run, const std::string& groupBy, size_t top,
                               const std::string& label = "")
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (!label.empty())
        out["label"] = label;
    out.update(runDescription(run));
    out["device_line"] = deviceLine(run);
    out["records"] = run.records.size();
    out["ranges"] = run.ranges.size();
    for (const Grouping& g : groupings(groupBy)) {
        auto rows = statistics(run.records, g.by);
        if (top != 0 && rows.size() > top)
            rows.resize(top);
        out[g.by == GroupBy::Function ? "functions" : g.by == GroupBy::Module ? "modules" : "kernels"] = rows;
        if (g.by == GroupBy::KernelGeometry)
            out["kernel_grouping"] = "geometry";
    }
    return out;
}

void printRunHeader(const ProfileRun& run)
{
    std::string inputs;
    for (const auto& d : run.inputs)
        inputs += (inputs.empty() ? "" : ", ") + d;
    std::cout << "model " << run.model << (inputs.empty() ? "" : "  inputs " + inputs) << '\n';
    std::cout << deviceLine(run) << '\n';
    if (!run.graphExecutor.empty())
        std::cout << "graph executor: " << describeGraphExecutor(run.graphExecutor) << '\n';
    std::cout << "plan: " << planSummary(run) << '\n';
    std::cout << "warm-up " << run.warmupIterations << ", measured " << run.iterations
              << (run.iterations == 1 ? " iteration" : " iterations") << ": " << withThousands(long(run.records.size()))
              << " records";
    if (run.iterations > 0 && run.wallNs > 0)
        std::cout << ", " << fixed(double(run.wallNs) / 1e6, 3) << " ms wall ("
                  << fixed(double(run.wallNs) / 1e6 / run.iterations, 3) << " ms per iteration)";
    std::cout << '\n';
    if (run.droppedRecords)
        std::cout << "dropped records: " << withThousands(long(run.droppedRecords))
                  << " (the tables miss them; raise the buffer limit or profile fewer iterations)\n";
    if (run.cancelled)
        std::cout << "cancelled: partial result of " << run.iterations << " measured iteration(s)\n";
    for (const EntryDeclines& d : run.declines)
        std::cout << describe(d) << '\n';
}

void printRunTables(const ProfileRun& run, const std::string& groupBy, size_t top)
{
    if (run.records.empty()) {
        std::cout << "\nno records" << (run.cancelled ? " (cancelled before the measured iterations)" : "") << '\n';
        return;
    }
    for (const Grouping& g : groupings(groupBy)) {
        const auto rows = statistics(run.records, g.by);
        std::cout << '\n' << tableTitle(run, g) << " by total time";
        if (top && rows.size() > top)
            std::cout << " (top " << top << " of " << rows.size() << "; --top 0 for all)";
        std::cout << '\n' << statsTable(rows, g, top);
    }
}

// ---- comparison ------------------------------------------------------------------------------------------------

std::string speedupText(const ComparisonRow& r)
{
    if (r.planUs <= 0)
        return r.baselineUs > 0 ? "(gone)" : "-";
    if (r.baselineUs <= 0)
        return "(new)";
    return fixed(r.speedup, 2) + "x";
}

std::string comparisonTable(const std::vector<ComparisonRow>& rows, const char* title, bool modules)
{
    std::vector<std::vector<std::string>> cells;
    for (const ComparisonRow& r : rows)
        cells.push_back({modules ? module_path::displayName(r.key) : r.key, fixed(r.baselineUs, 1), fixed(r.planUs, 1),
                         speedupText(r)});
    const std::vector<Column> columns{{title, false}, {"BEFORE µs", true}, {"AFTER µs", true}, {"SPEEDUP", true}};
    return formatTable(columns, cells);
}

nlohmann::ordered_json comparisonRowsJson(const std::vector<ComparisonRow>& rows)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const ComparisonRow& r : rows)
        out.push_back({{"name", r.key}, {"before_us", r.baselineUs}, {"after_us", r.planUs}, {"speedup", r.speedup}});
    return out;
}

nlohmann::ordered_json comparisonJson(const ProfileRun& baseline, const ProfileRun& plan, size_t top)
{
    const Comparison c = compare(baseline, plan);
    return {
        {"baseline", runJson(baseline, "function", top, "baseline")},
        {"plan", runJson(plan, "function", top, "plan")},
        {"functions", comparisonRowsJson(c.byFunction)},
        {"modules", comparisonRowsJson(c.byModule)},
        {"total", {{"before_us", c.baselineTotalUs}, {"after_us", c.planTotalUs}, {"speedup", c.speedup}}},
        {"output",
         {{"comparable", c.outputsComparable}, {"max_abs_error", c.maxAbsError}, {"max_rel_error", c.maxRelError}}}};
}

void printComparison(const ProfileRun& baseline, const ProfileRun& plan)
{
    const Comparison c = compare(baseline, plan);
    std::string inputs;
    for (const auto& d : baseline.inputs)
        inputs += (inputs.empty() ? "" : ", ") + d;
    std::cout << "model " << baseline.model << (inputs.empty() ? "" : "  inputs " + inputs) << '\n'
              << deviceLine(baseline) << '\n'
              << "plan: " << planSummary(plan) << '\n'
              << "baseline: warm-up " << baseline.warmupIterations << ", " << baseline.iterations
              << " iteration(s); plan: warm-up " << plan.warmupIterations << ", " << plan.iterations
              << " iteration(s); times are per iteration\n";
    if (baseline.cancelled || plan.cancelled)
        std::cout << "cancelled: partial result\n";
    std::cout << '\n' << comparisonTable(c.byFunction, "FUNCTION", false);
    std::cout << '\n' << comparisonTable(c.byModule, "MODULE", true);
    std::cout << "\ntotal per iteration: " << fixed(c.baselineTotalUs, 1) << " µs -> " << fixed(c.planTotalUs, 1)
              << " µs, speedup " << (c.planTotalUs > 0 ? fixed(c.speedup, 2) + "x" : std::string("-")) << '\n';
    if (c.outputsComparable)
        std::cout << "output: max abs error " << general(c.maxAbsError) << ", max rel error " << general(c.maxRelError)
                  << '\n';
    else
        std::cout << "output: not comparable (the runs' outputs differ in number or size)\n";
}

// ---- shared options --------------------------------------------------------------------------------------------

struct RunSetup {
    ModelOptions model;
    std::string planFile;
    std::vector<std::string> provides;
    std::string device = "cpu";
    int warmup = 3;
    int iterations = 10;
    std::string trace;
    bool json = false;
    bool quiet = false;
    std::string save;
    size_t top = 20;
    bool graph = false;
};

void addSetupOptions(CLI::App* cmd, RunSetup& o)
{
    addModelOptions(cmd, o.model);
    cmd->add_option("--plan", o.planFile, "plan file (kforge or AITune dialect); --provide entries come after it")
        ->type_name("FILE");
    cmd->add_option("--provide", o.provides, "SCOPE:FUNCTION:PROVIDER[:{json settings}] plan entry")->type_name("SPEC");
    cmd->add_option("--device", o.device, "cpu times ATen op executions; cuda traces CUDA kernels with CUPTI")
        ->check(CLI::IsMember({"cpu", "cuda"}))
        ->capture_default_str();
    cmd->add_option("--warmup", o.warmup, "forwards before measuring")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    cmd->add_option("--iterations", o.iterations, "measured forwards")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd->add_option("--trace", o.trace, "write a Chrome trace JSON (opens in Perfetto, chrome://tracing)")
        ->type_name("FILE.json");
    cmd->add_option("-o,--out,--save", o.save,
                    "save the run(s) to a .kfprof file for kforge report and the GUI (--save: the older spelling)")
        ->type_name("FILE.kfprof");
    cmd->add_flag("--graph", o.graph,
                  "capture one forward into a CUDA graph (the plan in effect) and profile its replays (cuda only)");
    cmd->add_flag("--json", o.json, "JSON output");
    cmd->add_flag("--quiet,-q", o.quiet, "no progress on stderr");
}

Plan planOf(const RunSetup& o) { return planFromOptions(o.planFile, o.provides); }

ProfileRun runProfile(ModelSession& session, const RunSetup& o, Plan plan, bool usePlan, const std::string& prefix)
{
    ProfileOptions options;
    options.device = o.device;
    options.warmupIterations = o.warmup;
    options.iterations = o.iterations;
    if (o.graph) {
        // Replays run no host code: the providers in effect while capturing are the ones the replays run.
        if (o.device != "cuda")
            throw Error("--graph", "graph capture needs --device cuda");
        std::optional<KernelProviderRuntime> runtime;
        if (usePlan) {
            runtime.emplace(session, plan);
            runtime->activate();
        }
        const CaptureRecord capture = session.capture(std::max(1, o.warmup));
        if (runtime)
            runtime->deactivate();
        if (!capture.ok)
            throw Error("graph capture of '" + session.displayName() + "'",
                        capture.error + " (" + std::to_string(capture.leftovers.size()) + " leftover patch(es))");
        options.replayCapture = capture.id;
        usePlan = false; // baked into the graph
    }
    options.plan = std::move(plan);
    options.usePlan = usePlan;
    Progress progress(o.quiet, prefix);
    options.progress = progress.callback(o.warmup);
    ProfileRun run = profile(session, options);
    progress.done();
    run.usedPlan = run.usedPlan || (o.graph && !run.plan.entries.empty());
    if (run.cancelled && run.records.empty())
        run.iterations = 0; // stopped during the warm-up: nothing was measured
    return run;
}

void reportInterrupted(const ProfileRun& run)
{
    std::cerr << "kforge: interrupted: partial result of " << run.iterations << " measured iteration(s)\n";
}

void writeOutputs(const std::vector<LabeledRun>& runs, const RunSetup& o, const std::string& csv,
                  nlohmann::ordered_json& files)
{
    if (!o.trace.empty()) {
        // One run: lanes named "host", "cuda:0"; several: "host (baseline)", "host (plan)", ...
        std::vector<LabeledRun> traced = runs;
        if (traced.size() == 1)
            traced[0].label.clear();
        writeFileStreaming(o.trace, [&](std::ostream& out) { writeChromeTrace(traced, out); });
        files["trace"] = o.trace;
    }
    if (!csv.empty()) {
        writeFileStreaming(csv, [&](std::ostream& out) { writeCsv(*runs.front().run, out); });
        files["csv"] = csv;
    }
    if (!o.save.empty()) {
        saveProfiles(runs, o.save);
        files["save"] = o.save;
    }
}

void printFiles(const nlohmann::ordered_json& files)
{
    if (files.empty())
        return;
    std::cout << '\n';
    for (const auto& [key, what] :
         {std::pair{"trace", "trace written to "}, std::pair{"csv", "CSV written to "}, std::pair{"save", "saved to "}})
        if (files.contains(key))
            std::cout << what << files.at(key).get<std::string>() << '\n';
}

} // namespace

Command addProfileCommand(CLI::App& app)
{
    struct Options : RunSetup {
        std::string csv;
        std::string groupBy;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("profile", "Profile forwards: time per kernel (CUDA) or ATen op (cpu), per "
                                              "function and per module; export traces and result files");
    addSetupOptions(cmd, *o);
    cmd->add_option("--csv", o->csv, "write one CSV row per kernel execution with its attribution")
        ->type_name("FILE.csv");
    cmd->add_option("--group-by", o->groupBy,
                    "one table: kernel, geometry (kernel + grid/block), function or module "
                    "(default: kernel, function and module tables)")
        ->check(CLI::IsMember({"kernel", "geometry", "function", "module"}));
    cmd->add_option("--top", o->top, "rows per table (0 = all; JSON lists all unless given)")->capture_default_str();
    auto* topOption = cmd->get_option("--top");
    return {cmd, [o, topOption] {
                auto session = openModel(o->model);
                requireInputs(*session);
                const bool usePlan = !o->planFile.empty() || !o->provides.empty();
                const Plan plan = planOf(*o);
                const auto warnings = usePlan ? warnPlan(plan, *session, o->device) : std::vector<PlanWarning>{};
                InterruptGuard guard;
                const ProfileRun run = runProfile(*session, *o, plan, usePlan, "");
                nlohmann::ordered_json files = nlohmann::ordered_json::object();
                writeOutputs({LabeledRun{run.usedPlan ? "plan" : "baseline", &run}}, *o, o->csv, files);
                if (o->json) {
                    nlohmann::ordered_json out = runJson(run, o->groupBy, topOption->count() ? o->top : 0);
                    out["files"] = files;
                    out["warnings"] = nlohmann::ordered_json(warnings);
                    std::cout << out.dump(2) << '\n';
                } else {
                    printRunHeader(run);
                    printRunTables(run, o->groupBy, o->top);
                    printFiles(files);
                }
                if (run.cancelled) {
                    reportInterrupted(run);
                    return kInterruptedExitCode;
                }
                return 0;
            }};
}

Command addCompareCommand(CLI::App& app)
{
    auto o = std::make_shared<RunSetup>();
    auto* cmd = app.add_subcommand("compare", "Profile the model without and with a plan: time per function and per "
                                              "module before and after, speedup, output error");
    addSetupOptions(cmd, *o);
    return {cmd, [o] {
                if (o->planFile.empty() && o->provides.empty())
                    throw Error("kforge compare", "needs a plan: --plan FILE and/or --provide SPEC");
                const Plan plan = planOf(*o);
                auto session = openModel(o->model);
                requireInputs(*session);
                const auto warnings = warnPlan(plan, *session, o->device);
                InterruptGuard guard;
                const ProfileRun baseline = runProfile(*session, *o, {}, false, "baseline: ");
                ProfileRun planned;
                const bool planRan = !baseline.cancelled;
                if (planRan)
                    planned = runProfile(*session, *o, plan, true, "plan: ");
                std::vector<LabeledRun> runs{{"baseline", &baseline}};
                if (planRan)
                    runs.push_back({"plan", &planned});
                nlohmann::ordered_json files = nlohmann::ordered_json::object();
                writeOutputs(runs, *o, "", files);
                if (!planRan) {
                    // Interrupted during the baseline: what was measured, and no comparison.
                    if (o->json) {
                        nlohmann::ordered_json out{{"baseline", runJson(baseline, "function", 0, "baseline")},
                                                   {"cancelled", true},
                                                   {"files", files},
                                                   {"warnings", nlohmann::ordered_json(warnings)}};
                        std::cout << out.dump(2) << '\n';
                    } else {
                        printRunHeader(baseline);
                        printRunTables(baseline, "function", o->top);
                        printFiles(files);
                    }
                    reportInterrupted(baseline);
                    return kInterruptedExitCode;
                }
                if (o->json) {
                    nlohmann::ordered_json out = comparisonJson(baseline, planned, 0);
                    out["files"] = files;
                    out["cancelled"] = planned.cancelled;
                    out["warnings"] = nlohmann::ordered_json(warnings);
                    std::cout << out.dump(2) << '\n';
                } else {
                    printComparison(baseline, planned);
                    printFiles(files);
                }
                if (planned.cancelled) {
                    reportInterrupted(planned);
                    return kInterruptedExitCode;
                }
                return 0;
            }};
}

Command addReportCommand(CLI::App& app)
{
    struct Options {
        std::vector<std::string> files;
        std::string groupBy;
        std::string run;
        size_t top = 20;
        bool json = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("report", "Print the tables of saved .kfprof runs (no model or GPU needed); two "
                                             "runs (one file or two) print baseline vs plan");
    cmd->add_option("FILES", o->files, "one or two .kfprof files")->required()->expected(1, 2);
    cmd->add_option("--group-by", o->groupBy, "one table: kernel, geometry, function or module")
        ->check(CLI::IsMember({"kernel", "geometry", "function", "module"}));
    cmd->add_option("--run", o->run, "show one run's tables: its label (baseline, plan) or its number from 1");
    cmd->add_option("--top", o->top, "rows per table (0 = all; JSON lists all unless given)")->capture_default_str();
    cmd->add_flag("--json", o->json, "JSON output");
    auto* topOption = cmd->get_option("--top");
    return {cmd, [o, topOption] {
                std::vector<SavedRun> runs;
                for (const auto& file : o->files)
                    for (auto& saved : loadProfiles(file))
                        runs.push_back(std::move(saved));
                const size_t jsonTop = topOption->count() ? o->top : 0;
                if (!o->run.empty()) {
                    const SavedRun* chosen = nullptr;
                    for (const auto& r : runs)
                        if (r.label == o->run && !chosen)
                            chosen = &r;
                    if (!chosen && !o->run.empty() && o->run.find_first_not_of("0123456789") == std::string::npos) {
                        const size_t n = std::stoul(o->run);
                        if (n >= 1 && n <= runs.size())
                            chosen = &runs[n - 1];
                    }
                    if (!chosen)
                        throw Error("--run " + o->run,
                                    "no such run (the files hold " + std::to_string(runs.size()) + " run(s))");
                    runs = {*chosen};
                }
                if (runs.size() == 2 && o->groupBy.empty()) {
                    // Baseline vs plan: by label, else the run without a plan is the baseline, else file order.
                    size_t base = 0;
                    if (runs[1].label == "baseline" ||
                        (runs[0].label != "baseline" && runs[0].run.usedPlan && !runs[1].run.usedPlan))
                        base = 1;
                    const ProfileRun& baseline = runs[base].run;
                    const ProfileRun& planned = runs[1 - base].run;
                    if (o->json)
                        std::cout << comparisonJson(baseline, planned, jsonTop).dump(2) << '\n';
                    else
                        printComparison(baseline, planned);
                    return 0;
                }
                if (o->json) {
                    nlohmann::ordered_json out = nlohmann::ordered_json::array();
                    for (const auto& r : runs)
                        out.push_back(runJson(r.run, o->groupBy, jsonTop, r.label));
                    std::cout << (out.size() == 1 ? out[0] : out).dump(2) << '\n';
                    return 0;
                }
                for (size_t i = 0; i < runs.size(); ++i) {
                    if (runs.size() > 1)
                        std::cout << (i ? "\n" : "") << "== run " << i + 1 << " of " << runs.size()
                                  << (runs[i].label.empty() ? "" : ": " + runs[i].label) << " ==\n";
                    printRunHeader(runs[i].run);
                    printRunTables(runs[i].run, o->groupBy, o->top);
                }
                return 0;
            }};
}

} // namespace kforge::cli
