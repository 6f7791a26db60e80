// SPDX-License-Identifier: Apache-2.0
#include "profile_tables.h"

#include "output.h"

#include <kforge/module_info.h>
#include <kforge/module_path.h>
#include <kforge/plan.h>
#include <kforge/speed_verdict.h>

#include <cstdio>
#include <ostream>
#include <vector>

namespace kforge::cli {
namespace {

std::string general(double v)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

struct Grouping {
    std::string name; // "kernel", "geometry", "function", "module", "shape"
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
    if (name == "shape")
        return {name, GroupBy::OpInputShapes};
    return {"kernel", GroupBy::Kernel};
}

// The tables to show: the one asked for, or kernels, functions and modules.
std::vector<Grouping> groupings(const std::string& groupBy)
{
    if (!groupBy.empty())
        return {groupingOf(groupBy)};
    return {groupingOf("kernel"), groupingOf("function"), groupingOf("module")};
}

std::string speedupText(const ComparisonRow& r)
{
    if (r.planUs <= 0)
        return r.baselineUs > 0 ? "(gone)" : "-";
    if (r.baselineUs <= 0)
        return "(new)";
    return fixed(r.speedup, 2) + "x";
}

std::string intervalText(const SpeedComparison& s)
{
    if (!s.enoughRounds())
        return "-";
    return fixed(s.low, 2) + "-" + fixed(s.high, 2) + "x";
}

nlohmann::ordered_json speedJson(const SpeedComparison& s)
{
    return {{"verdict", speedVerdictName(s.verdict)},
            {"interval", {s.low, s.high}},
            {"min_detectable_change", s.minDetectableChange},
            {"rounds", s.rounds},
            {"noise", s.noise}};
}

nlohmann::ordered_json comparisonRowsJson(const std::vector<ComparisonRow>& rows)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const ComparisonRow& r : rows) {
        nlohmann::ordered_json row{
            {"name", r.key}, {"before_us", r.baselineUs}, {"after_us", r.planUs}, {"speedup", r.speedup}};
        row.update(speedJson(r.speed));
        out.push_back(std::move(row));
    }
    return out;
}

nlohmann::ordered_json totalJson(const Comparison& c)
{
    nlohmann::ordered_json total{{"before_us", c.baselineTotalUs}, {"after_us", c.planTotalUs}, {"speedup", c.speedup}};
    total.update(speedJson(c.speed));
    return total;
}

} // namespace

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

std::string statisticsTitle(const ProfileRun& run, GroupBy by)
{
    const std::string what = run.device == "cpu" ? "ATen ops" : "kernels";
    switch (by) {
    case GroupBy::Kernel:
        return what;
    case GroupBy::KernelGeometry:
        return what + " by grid and block";
    case GroupBy::Function:
        return "functions";
    case GroupBy::Module:
        return "modules (own records, children excluded)";
    case GroupBy::OpInputShapes:
        return what + " by input shapes";
    }
    return what;
}

Table statisticsTable(const std::vector<StatRow>& rows, GroupBy by, size_t top)
{
    const bool byKernel = by == GroupBy::Kernel || by == GroupBy::KernelGeometry || by == GroupBy::OpInputShapes;
    Table table;
    table.columns = {{by == GroupBy::Function ? "FUNCTION"
                      : by == GroupBy::Module ? "MODULE"
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
        table.columns.push_back({"FUNCTION", false});
        table.columns.push_back({"MODULE", false});
    }
    for (size_t i = 0; i < rows.size() && (top == 0 || i < top); ++i) {
        const StatRow& r = rows[i];
        std::vector<std::string> row{by == GroupBy::Module ? module_path::displayName(r.key) : r.key,
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
        table.rows.push_back(std::move(row));
    }
    return table;
}

std::string verdictText(const ComparisonRow& r)
{
    if (r.planUs <= 0 || r.baselineUs <= 0)
        return "-";
    if (r.speed.verdict != SpeedVerdict::TooNoisy && !r.speed.enoughRounds())
        return "too few rounds";
    return speedVerdictName(r.speed.verdict);
}

Table comparisonTable(const std::vector<ComparisonRow>& rows, const std::string& title, bool modules)
{
    Table table;
    table.columns = {{title, false},    {"BEFORE µs (MEDIAN)", true}, {"AFTER µs (MEDIAN)", true},
                     {"SPEEDUP", true}, {"95% INTERVAL", true},       {"VERDICT", false}};
    for (const ComparisonRow& r : rows)
        table.rows.push_back({modules ? module_path::displayName(r.key) : r.key, fixed(r.baselineUs, 1),
                              fixed(r.planUs, 1), speedupText(r), intervalText(r.speed), verdictText(r)});
    return table;
}

std::vector<std::string> setupDifferences(const ProfileRun& a, const ProfileRun& b)
{
    std::vector<std::string> lines;
    const auto differs = [&lines](const char* what, const std::string& x, const std::string& y) {
        if (x != y)
            lines.push_back(std::string(what) + ": " + (x.empty() ? "(not recorded)" : x) + " -> " +
                            (y.empty() ? "(not recorded)" : y));
    };
    differs("model", a.model, b.model);
    differs("device", a.deviceName, b.deviceName);
    differs("graph executor", a.graphExecutor, b.graphExecutor);
    differs("torch", a.torchVersion, b.torchVersion);
    differs("kforge", a.kforgeVersion, b.kforgeVersion);
    differs("intra-op threads", std::to_string(a.intraOpThreads), std::to_string(b.intraOpThreads));
    differs("cores", std::to_string(a.cores), std::to_string(b.cores));
    differs("plan entries", std::to_string(a.plan.entries.size()) + (a.usedPlan ? "" : " (no plan)"),
            std::to_string(b.plan.entries.size()) + (b.usedPlan ? "" : " (no plan)"));
    if (!sameModuleTree(a.modules, b.modules))
        lines.push_back("module tree: " + std::to_string(a.modules.size()) + " -> " + std::to_string(b.modules.size()) +
                        " modules, not the same tree: per-module rows compare the modules both have");
    return lines;
}

std::string deviceLine(const ProfileRun& run)
{
    if (run.device == "cpu")
        return "cpu: timing ATen op executions";
    return run.device + ": " + (run.deviceName.empty() ? std::string("CUDA device") : run.deviceName) +
           ", tracing CUDA kernels" + (run.cuptiVersion.empty() ? "" : " with CUPTI " + run.cuptiVersion);
}

// runDescription, then the label, the device line, record counts and the statistics asked for.
nlohmann::ordered_json runJson(const ProfileRun& run, const std::string& groupBy, size_t top, const std::string& label)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (!label.empty())
        out["label"] = label;
    out.update(runDescription(run));
    out["device_line"] = deviceLine(run);
    const StallFreeRun stallFree = removeStalls(run);
    out["forward_ms"] = stallFree.medianIterationUs() / 1000.0; // the median iteration, stalls excluded
    out["stalls"] = stallFree.stalls;
    out["records"] = run.records.size();
    out["ranges"] = run.ranges.size();
    for (const Grouping& g : groupings(groupBy)) {
        auto rows = statistics(run.records, g.by);
        if (top != 0 && rows.size() > top)
            rows.resize(top);
        out[g.by == GroupBy::Function ? "functions" : g.by == GroupBy::Module ? "modules" : "kernels"] = rows;
        if (g.by == GroupBy::KernelGeometry)
            out["kernel_grouping"] = "geometry";
        if (g.by == GroupBy::OpInputShapes)
            out["kernel_grouping"] = "input_shapes";
    }
    return out;
}

void printRunHeader(std::ostream& out, const ProfileRun& run)
{
    std::string inputs;
    for (const auto& d : run.inputs)
        inputs += (inputs.empty() ? "" : ", ") + d;
    out << "model " << run.model << (inputs.empty() ? "" : "  inputs " + inputs) << '\n';
    out << deviceLine(run) << '\n';
    if (!run.graphExecutor.empty())
        out << "graph executor: " << describeGraphExecutor(run.graphExecutor) << '\n';
    if (run.intraOpThreads > 0 && run.device != "cuda")
        out << "intra-op threads: " << run.intraOpThreads << " (--threads)\n";
    out << "plan: " << planSummary(run) << '\n';
    out << "warm-up " << run.warmupIterations << ", measured " << run.iterations
        << (run.iterations == 1 ? " iteration" : " iterations") << ": " << withThousands(long(run.records.size()))
        << " records";
    const StallFreeRun stallFree = removeStalls(run);
    if (run.iterations > 0 && run.wallNs > 0)
        out << ", " << fixed(double(run.wallNs) / 1e6, 3) << " ms wall ("
            << fixed(double(run.wallNs) / 1e6 / run.iterations, 3) << " ms per iteration)";
    out << '\n';
    // The forward's cost: the median iteration less its stalls, which the mean of the wall time is not.
    if (run.iterations > 0 && stallFree.medianIterationUs() > 0)
        out << "forward: " << fixed(stallFree.medianIterationUs() / 1000.0, 3) << " ms per iteration (median"
            << (stallFree.stalls.any() ? ", stalls excluded" : "") << ")\n";
    if (stallFree.stalls.any())
        out << describe(stallFree.stalls) << '\n';
    if (run.droppedRecords)
        out << "dropped records: " << withThousands(long(run.droppedRecords))
            << " (the tables miss them; raise the buffer limit or profile fewer iterations)\n";
    if (run.cancelled)
        out << "cancelled: partial result of " << run.iterations << " measured iteration(s)\n";
    for (const EntryDeclines& d : run.declines)
        out << describe(d) << '\n';
}

void printRunTables(std::ostream& out, const ProfileRun& run, const std::string& groupBy, size_t top)
{
    if (run.records.empty()) {
        out << "\nno records" << (run.cancelled ? " (cancelled before the measured iterations)" : "") << '\n';
        return;
    }
    for (const Grouping& g : groupings(groupBy)) {
        const auto rows = statistics(run.records, g.by);
        out << '\n' << statisticsTitle(run, g.by) << " by total time";
        if (top && rows.size() > top)
            out << " (top " << top << " of " << rows.size() << "; --top 0 for all)";
        const Table table = statisticsTable(rows, g.by, top);
        out << '\n' << formatTable(table.columns, table.rows);
    }
}

nlohmann::ordered_json comparisonJson(const Comparison& c, const ProfileRun& baseline, const ProfileRun& plan,
                                      size_t top)
{
    return {
        {"baseline", runJson(baseline, "function", top, "baseline")},
        {"plan", runJson(plan, "function", top, "plan")},
        {"functions", comparisonRowsJson(c.byFunction)},
        {"modules", comparisonRowsJson(c.byModule)},
        {"total", totalJson(c)},
        {"stalls", {{"baseline", c.baselineStalls}, {"plan", c.planStalls}}},
        {"output",
         {{"comparable", c.outputsComparable}, {"max_abs_error", c.maxAbsError}, {"max_rel_error", c.maxRelError}}}};
}

void printComparison(std::ostream& out, const Comparison& c, const ProfileRun& baseline, const ProfileRun& plan)
{
    std::string inputs;
    for (const auto& d : baseline.inputs)
        inputs += (inputs.empty() ? "" : ", ") + d;
    out << "model " << baseline.model << (inputs.empty() ? "" : "  inputs " + inputs) << '\n'
        << deviceLine(baseline) << '\n'
        << "plan: " << planSummary(plan) << '\n'
        << "baseline: warm-up " << baseline.warmupIterations << ", " << baseline.iterations
        << " iteration(s); plan: warm-up " << plan.warmupIterations << ", " << plan.iterations
        << " iteration(s); times are medians per iteration"
        << (baseline.iterations > 1 && plan.iterations > 1 ? ", speedups the median of the per-iteration ratios" : "")
        << "\n";
    if (baseline.cancelled || plan.cancelled)
        out << "cancelled: partial result\n";
    for (const Table& table :
         {comparisonTable(c.byFunction, "FUNCTION", false), comparisonTable(c.byModule, "MODULE", true)})
        out << '\n' << formatTable(table.columns, table.rows);
    out << "\ntotal per iteration (median): " << fixed(c.baselineTotalUs, 1) << " µs -> " << fixed(c.planTotalUs, 1)
        << " µs; the plan against the baseline: " << describe(c.speed) << '\n';
    if (c.baselineStalls.any())
        out << "baseline " << describe(c.baselineStalls) << '\n';
    if (c.planStalls.any())
        out << "plan " << describe(c.planStalls) << '\n';
    if (c.outputsComparable)
        out << "output: max abs error " << general(c.maxAbsError) << ", max rel error " << general(c.maxRelError)
            << '\n';
    else
        out << "output: not comparable (the runs' outputs differ in number or size)\n";
}

} // namespace kforge::cli
