// SPDX-License-Identifier: Apache-2.0
#include "shareable_report.h"

#include "html_report.h"
#include "markdown_report.h"
#include "pairing_tables.h"
#include "output.h"

#include <kforge/atomic_file.h>
#include <kforge/memory_profile.h>
#include <kforge/module_path.h>
#include <kforge/stalls.h>

#include <cstdio>
#include <filesystem>

namespace kforge::cli {
namespace {

std::string orNotRecorded(const std::string& value) { return value.empty() ? "(not recorded)" : value; }

std::string countOrNotRecorded(double value, int decimals)
{
    return value > 0 ? fixed(value, decimals) : "(not recorded)";
}

// As printComparison writes an error: "0", "1.5e-07".
std::string threeDigits(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", value);
    return text;
}

std::string joined(const std::vector<std::string>& parts)
{
    std::string out;
    for (const std::string& part : parts)
        out += (out.empty() ? "" : ", ") + part;
    return out;
}

// The median forward less its stalls: what printRunHeader calls the forward's cost.
double forwardMs(const ProfileRun& run) { return removeStalls(run).medianIterationUs() / 1000.0; }

// The same keys, in the same order, for every run: a pair's setup table zips two of these.
std::vector<std::pair<std::string, std::string>> setupFacts(const SavedRun& saved, const std::string& file)
{
    const ProfileRun& run = saved.run;
    return {
        {"file", file + (saved.label.empty() ? "" : " (run '" + saved.label + "')")},
        {"saved", orNotRecorded(saved.created)},
        {"model", run.model},
        {"inputs", orNotRecorded(joined(run.inputs))},
        {"device", deviceLine(run)},
        {"graph executor", run.graphExecutor.empty() ? "(not recorded)" : describeGraphExecutor(run.graphExecutor)},
        {"plan", planSummary(run)},
        {"torch", orNotRecorded(run.torchVersion)},
        {"kforge", orNotRecorded(run.kforgeVersion)},
        {"intra-op threads", countOrNotRecorded(run.intraOpThreads, 0)},
        {"cores", countOrNotRecorded(run.cores, 0)},
        {"load average", run.loadAverage >= 0 ? fixed(run.loadAverage, 2) : "(not recorded)"},
        {"iterations", "warm-up " + std::to_string(run.warmupIterations) + ", measured " +
                           std::to_string(run.iterations) + (run.cancelled ? " (cancelled: partial result)" : "")},
        {"records", withThousands(long(run.records.size())) +
                        (run.droppedRecords ? ", " + withThousands(long(run.droppedRecords)) + " dropped" : "")},
        {"forward", fixed(forwardMs(run), 3) + " ms per iteration (median, stalls excluded)"},
    };
}

ReportTable moduleTreeTable(const ProfileRun& run)
{
    ReportTable out{"Time per forward of each module and everything below it; self: its own records.", {}, {}};
    out.table.columns = {{"MODULE", false}, {"TYPE", false},   {"TOTAL ms", true},
                         {"SELF ms", true}, {"SHARE %", true}, {"CALLS", true}};
    const std::vector<ModuleTime> times = moduleTimes(run);
    for (size_t i = 0; i < times.size() && i < run.modules.size(); ++i) {
        const ModuleTime& t = times[i];
        const std::string leaf(module_path::leafOf(t.path));
        out.table.rows.push_back({t.path.empty() ? module_path::displayName("") : leaf, run.modules[i].typeName,
                                  fixed(t.totalUs / 1000.0, 3), fixed(t.selfUs / 1000.0, 3), fixed(100.0 * t.share, 1),
                                  t.calls > 0 ? fixed(t.calls, 0) : "-"});
        out.depths.push_back(module_path::depthOf(t.path));
    }
    return out;
}

// The module tree with both sides' subtree times (the desktop's Δ column): modules in the candidate's tree order.
ReportTable pairModuleTreeTable(const ProfileRun& after, const Comparison& c)
{
    ReportTable out{"Each module and everything below it, per forward (median).", {}, {}};
    out.table.columns = {
        {"MODULE", false}, {"BEFORE ms", true}, {"AFTER ms", true}, {"CHANGE %", true}, {"VERDICT", false}};
    std::map<std::string, const ComparisonRow*> byPath;
    for (const ComparisonRow& row : c.bySubtree)
        byPath[row.key] = &row;
    for (const ModuleInfo& m : after.modules) {
        const auto found = byPath.find(m.path);
        if (found == byPath.end())
            continue;
        const ComparisonRow& r = *found->second;
        const std::string change = r.baselineUs > 0 ? fixed(100.0 * (r.planUs / r.baselineUs - 1.0), 1) : "-";
        out.table.rows.push_back(
            {m.path.empty() ? module_path::displayName("") : std::string(module_path::leafOf(m.path)),
             fixed(r.baselineUs / 1000.0, 3), fixed(r.planUs / 1000.0, 3), change, verdictText(r)});
        out.depths.push_back(module_path::depthOf(m.path));
    }
    return out;
}

std::string measuredSpeedup(const PlanEntry& e)
{
    if (!e.measured || !e.measured->measured())
        return "-";
    return fixed(e.measured->speedup, 2) + "x";
}

// The plan's entries; in a pair each with the verdict of its function over the whole model.
ReportTable planTable(const Plan& plan, const Comparison* c)
{
    ReportTable out{c ? "VERDICT: the entry's function over the whole model, against the other run." : "", {}, {}};
    out.table.columns = {{"#", true},         {"SCOPE", false},   {"FUNCTION", false},
                         {"PROVIDER", false}, {"ENABLED", false}, {"MEASURED SPEEDUP", true}};
    if (c)
        out.table.columns.push_back({"VERDICT", false});
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        const PlanEntry& e = plan.entries[i];
        std::vector<std::string> row{std::to_string(i), module_path::displayName(e.scope), e.function,
                                     e.providerType(),  e.enabled ? "yes" : "no",          measuredSpeedup(e)};
        if (c) {
            std::string verdict = "-";
            for (const ComparisonRow& r : c->byFunction)
                if (r.key == e.function)
                    verdict = verdictText(r);
            row.push_back(verdict);
        }
        out.table.rows.push_back(std::move(row));
    }
    return out;
}

ReportSection planSection(const ProfileRun& run, const Comparison* c)
{
    ReportSection section{"Plan", {}, {}, {planTable(run.plan, c)}, std::nullopt};
    for (const EntryDeclines& d : run.declines)
        section.lines.push_back(describe(d));
    return section;
}

ReportTable statisticsSection(const ProfileRun& run, GroupBy by, size_t top)
{
    const std::vector<StatRow> rows = statistics(run.records, by);
    std::string caption = statisticsTitle(run, by) + " by total time";
    if (top && rows.size() > top)
        caption += " (top " + std::to_string(top) + " of " + std::to_string(rows.size()) + ")";
    return {caption, statisticsTable(rows, by, top), {}};
}

ReportSection topSection(const std::string& heading, const ProfileRun& run, size_t top)
{
    return {heading,
            {},
            {},
            {statisticsSection(run, GroupBy::Function, top), statisticsSection(run, GroupBy::Kernel, top)},
            std::nullopt};
}

ReportFlameGraph flameGraphOf(const ProfileRun& run, const std::string& caption)
{
    return {caption, flameGraph(run), {}};
}

std::string signedPercent(double fraction) { return (fraction >= 0 ? "+" : "") + fixed(100.0 * fraction, 1) + "%"; }

// "plan vs baseline: total -12.3% (faster)".
std::string pairSummary(const ReportSide& before, const ReportSide& after, const Comparison& c)
{
    const std::string change = c.baselineTotalUs > 0 ? signedPercent(c.planTotalUs / c.baselineTotalUs - 1.0) : "-";
    return after.name + " vs " + before.name + ": total " + change + " (" + speedVerdictName(c.speed.verdict) + "), " +
           fixed(c.baselineTotalUs / 1000.0, 3) + " ms -> " + fixed(c.planTotalUs / 1000.0, 3) + " ms per forward";
}

ReportSection setupPairSection(const ReportSide& before, const ReportSide& after)
{
    const auto a = setupFacts(*before.saved, before.file);
    const auto b = setupFacts(*after.saved, after.file);
    ReportTable setup{"", {}, {}};
    setup.table.columns = {{"", false}, {before.name, false}, {after.name, false}};
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
        setup.table.rows.push_back({a[i].first, a[i].second, b[i].second});
    ReportSection section{"Setup", {}, {}, {setup}, std::nullopt};
    for (const std::string& line : setupDifferences(before.saved->run, after.saved->run))
        section.lines.push_back("differs: " + line);
    return section;
}

// What printComparison prints, as sections: the total, both tables, stalls and the output error.
ReportSection comparisonSection(const ReportSide& before, const ReportSide& after, const Comparison& c)
{
    ReportSection section{"Comparison", {}, {}, {}, std::nullopt};
    section.lines.push_back("Total per iteration (median): " + fixed(c.baselineTotalUs, 1) + " µs -> " +
                            fixed(c.planTotalUs, 1) + " µs; " + after.name + " against " + before.name + ": " +
                            describe(c.speed));
    if (c.baselineStalls.any())
        section.lines.push_back(before.name + " " + describe(c.baselineStalls));
    if (c.planStalls.any())
        section.lines.push_back(after.name + " " + describe(c.planStalls));
    section.lines.push_back(c.outputsComparable
                                ? "Output: max abs error " + threeDigits(c.maxAbsError) + ", max rel error " +
                                      threeDigits(c.maxRelError)
                                : "Output: not comparable (the runs' outputs differ in number or size)");
    section.tables.push_back({"Functions: medians per iteration; speedup " + before.name + " / " + after.name + ".",
                              comparisonTable(c.byFunction, "FUNCTION", false),
                              {}});
    section.tables.push_back(
        {"Modules, own records (children excluded).", comparisonTable(c.byModule, "MODULE", true), {}});
    return section;
}

// kforge diff's pairing, as printPairing prints it.
ReportSection pairingSection(const RunPairing& pairing, size_t top)
{
    ReportSection section{"Ops and kernels paired by place", {}, pairingSummary(pairing), {}, std::nullopt};
    section.tables.push_back({pairingTableTitle(pairing, top), pairingTable(pairing, top), {}});
    for (const std::string& line : unpairedLines(pairing, top))
        section.lines.push_back(line);
    return section;
}

std::string sizeText(const std::string& path)
{
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    return ec ? std::string() : " (" + bytesText(double(bytes)) + ")";
}

} // namespace

ShareableReport runReport(const SavedRun& saved, const std::string& file, size_t top)
{
    const ProfileRun& run = saved.run;
    ShareableReport out;
    out.title = "kforge report: " + run.model;
    out.summary = run.model + " on " + run.device + ": " + fixed(forwardMs(run), 3) + " ms per forward (median of " +
                  std::to_string(run.iterations) + " iterations)";
    out.sections.push_back({"Setup", setupFacts(saved, file), {}, {}, std::nullopt});
    if (run.usedPlan)
        out.sections.push_back(planSection(run, nullptr));
    out.sections.push_back({"Module tree", {}, {}, {moduleTreeTable(run)}, std::nullopt});
    out.sections.push_back(topSection("Top functions and " + statisticsTitle(run, GroupBy::Kernel), run, top));
    out.sections.push_back({"Flame graph",
                            {},
                            {},
                            {},
                            flameGraphOf(run, "Time per forward: modules, then their functions, then ops or kernels; "
                                              "hover a frame for its time.")});
    return out;
}

ShareableReport pairReport(const ReportSide& before, const ReportSide& after, const Comparison& c, size_t top,
                           const RunPairing* pairing)
{
    const ProfileRun& a = before.saved->run;
    const ProfileRun& b = after.saved->run;
    ShareableReport out;
    out.title = "kforge report: " + after.name + " vs " + before.name + ", " + b.model;
    out.summary = pairSummary(before, after, c);
    out.sections.push_back(setupPairSection(before, after));
    if (b.usedPlan)
        out.sections.push_back(planSection(b, &c));
    out.sections.push_back(comparisonSection(before, after, c));
    if (pairing)
        out.sections.push_back(pairingSection(*pairing, top));
    out.sections.push_back({"Module tree", {}, {}, {pairModuleTreeTable(b, c)}, std::nullopt});
    out.sections.push_back(
        topSection("Top functions and " + statisticsTitle(b, GroupBy::Kernel) + " of " + after.name, b, top));
    ReportFlameGraph flame =
        flameGraphOf(b, "Time per forward of " + after.name + ", coloured by the verdict of each frame against " +
                            before.name + ": green faster, red slower, grey no detectable change or too noisy.");
    for (const auto& [path, speed] : flameGraphSpeeds(a, b))
        flame.verdicts[path] = speed.verdict;
    out.sections.push_back({"Flame graph", {}, {}, {}, std::move(flame)});
    return out;
}

void addShareOptions(CLI::App* command, ShareOptions& options)
{
    command
        ->add_option("--html", options.html,
                     "also write the report as one self-contained HTML page (tables and an SVG flame graph; no "
                     "network)")
        ->type_name("FILE");
    command
        ->add_option("--md", options.markdown,
                     "also write the report's tables as GitHub-flavoured Markdown, for a pull-request comment")
        ->type_name("FILE");
}

std::string writeShareable(const ShareOptions& options, const ShareableReport& shareable)
{
    std::string written;
    const auto write = [&](const std::string& path, const char* what,
                           void (*writer)(const ShareableReport&, std::ostream&)) {
        if (path.empty())
            return;
        writeFileStreaming(path, [&](std::ostream& out) { writer(shareable, out); });
        written += std::string(what) + " report: " + path + sizeText(path) + '\n';
    };
    write(options.html, "HTML", writeHtmlReport);
    write(options.markdown, "Markdown", writeMarkdownReport);
    return written;
}

} // namespace kforge::cli
