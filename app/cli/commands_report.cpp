// SPDX-License-Identifier: Apache-2.0
// kforge report: the tables of saved .kfprof runs, opened without the model or a GPU; two runs print baseline vs
// plan. --html and --md write the same run or pair as a page or a pull-request comment (shareable_report.h); --trace
// exports the runs as a Chrome trace.
#include "commands.h"
#include "memory_tables.h"
#include "profile_tables.h"
#include "shareable_report.h"

#include <kforge/error.h>
#include <kforge/profile_export.h>
#include <kforge/study.h>

namespace kforge::cli {

Command addReportCommand(CLI::App& app)
{
    struct Options {
        std::vector<std::string> files;
        std::string groupBy;
        std::string run;
        std::string trace;
        size_t top = 20;
        double maxDetectable = kDefaultMaxDetectableChange;
        ShareOptions share;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("report", "Print the tables of saved .kfprof runs (no model or GPU needed); two "
                                             "runs (one file or two) print baseline vs plan");
    cmd->add_option("FILES", o->files, "one or two .kfprof files")->required()->expected(1, 2);
    cmd->add_option("--group-by", o->groupBy,
                    "one table: kernel, geometry, function, module or shape (op + input shapes, where the run "
                    "recorded them: kforge profile --record-shapes)")
        ->check(CLI::IsMember({"kernel", "geometry", "function", "module", "shape"}));
    cmd->add_option("--run", o->run, "show one run's tables: its label (baseline, plan) or its number from 1");
    cmd->add_option("--trace", o->trace,
                    "write the runs shown (all, or --run's) as a Chrome trace JSON: Perfetto, chrome://tracing and "
                    "Holistic Trace Analysis read it")
        ->type_name("FILE.json");
    cmd->add_option("--top", o->top, "rows per table (0 = all; JSON lists all unless given)")->capture_default_str();
    addMaxDetectableOption(cmd, o->maxDetectable);
    addShareOptions(cmd, o->share);
    addJsonFlag(cmd);
    auto* topOption = cmd->get_option("--top");
    return {cmd, [o, topOption](Report& report) {
                std::vector<SavedRun> runs;
                std::vector<std::string> fileOf; // per run
                for (const auto& file : o->files)
                    for (auto& saved : loadProfiles(file)) {
                        runs.push_back(std::move(saved));
                        fileOf.push_back(file);
                    }
                const size_t jsonTop = topOption->count() ? o->top : 0;
                if (!o->run.empty()) {
                    const SavedRun* chosen = runNamed(runs, o->run);
                    if (!chosen)
                        throw Error("--run " + o->run,
                                    "no such run (the files hold " + std::to_string(runs.size()) + " run(s))");
                    fileOf = {fileOf[size_t(chosen - runs.data())]};
                    runs = {*chosen};
                }
                if (!o->trace.empty()) { // the exporter `profile --trace` writes, fed from the file
                    std::vector<LabeledRun> labeled;
                    for (const auto& r : runs)
                        labeled.push_back({r.label, &r.run});
                    exportProfile(labeled, "chrome-trace", o->trace);
                    report.diagnostic("trace written to " + o->trace);
                }
                if (o->share.given() && runs.size() > 2)
                    throw Error("--html/--md", "a report shows one run or a pair, and the files hold " +
                                                   std::to_string(runs.size()) + " runs (--run picks one)");
                std::string written; // where the shareable reports went: said after the tables
                if (runs.size() == 2 && (o->groupBy.empty() || o->share.given())) {
                    const PairedRuns pair = pairSavedRuns(runs); // the desktop app pairs a file's runs alike
                    if (!pair.treeMismatch.empty())
                        report.warn(pair.treeMismatch);
                    const Comparison c = compare(pair.baseline->run, pair.plan->run, o->maxDetectable);
                    const auto side = [&](const SavedRun* run, const char* name) {
                        return ReportSide{run, fileOf[size_t(run - runs.data())], name};
                    };
                    if (o->share.given())
                        written = writeShareable(
                            o->share, pairReport(side(pair.baseline, "baseline"), side(pair.plan, "plan"), c, o->top));
                    if (o->groupBy.empty()) {
                        report.json = comparisonJson(c, pair.baseline->run, pair.plan->run, jsonTop);
                        printComparison(report.text, c, pair.baseline->run, pair.plan->run);
                        report.text << written;
                        return;
                    }
                }
                if (runs.size() == 1 && o->share.given())
                    written = writeShareable(o->share, runReport(runs[0], fileOf[0], o->top));
                nlohmann::ordered_json out = nlohmann::ordered_json::array();
                for (const auto& r : runs) {
                    out.push_back(runJson(r.run, o->groupBy, jsonTop, r.label));
                    if (!r.run.memory.empty())
                        out.back()["memory"] = memoryJson(summarizeMemory(r.run));
                }
                report.json = out.size() == 1 ? out[0] : out;
                for (size_t i = 0; i < runs.size(); ++i) {
                    if (runs.size() > 1)
                        report.text << (i ? "\n" : "") << "== run " << i + 1 << " of " << runs.size()
                                    << (runs[i].label.empty() ? "" : ": " + runs[i].label) << " ==\n";
                    printRunHeader(report.text, runs[i].run);
                    printRunTables(report.text, runs[i].run, o->groupBy, o->top);
                    if (!runs[i].run.memory.empty()) // saved by profile --memory
                        printMemory(report.text, summarizeMemory(runs[i].run), o->top);
                }
                report.text << written;
            }};
}

} // namespace kforge::cli
