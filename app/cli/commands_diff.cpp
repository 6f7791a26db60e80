// SPDX-License-Identifier: Apache-2.0
// kforge diff A.kfprof B.kfprof: two runs made apart (before and after a commit, two machines, two executors) side
// by side: A is the reference, B the candidate. The same tables and verdicts as compare, what differs between the
// runs' setups, the ops and kernels paired by place (kforge/run_pairing.h), and --fail-if-slower for CI.
#include "commands.h"
#include "output.h"
#include "pairing_tables.h"
#include "profile_tables.h"
#include "shareable_report.h"

#include <kforge/error.h>
#include <kforge/profile_export.h>
#include <kforge/run_pairing.h>
#include <kforge/study.h>

#include <cmath>

namespace kforge::cli {
namespace {

// The run of `file` that `choice` names (its label, or its number from 1); "" takes the file's only run, else its
// first, and says so.
SavedRun chosenRun(const std::string& file, const std::string& choice, const char* option, Report& report)
{
    std::vector<SavedRun> runs = loadProfiles(file);
    if (runs.empty())
        throw Error(file, "holds no profile run");
    if (choice.empty()) {
        if (runs.size() > 1)
            report.warn(file + " holds " + std::to_string(runs.size()) + " runs; comparing its first" +
                        (runs[0].label.empty() ? std::string() : " ('" + runs[0].label + "')") + " (" + option +
                        " LABEL or NUMBER picks another)");
        return std::move(runs[0]);
    }
    if (const SavedRun* chosen = runNamed(runs, choice))
        return std::move(runs[size_t(chosen - runs.data())]);
    throw Error(std::string(option) + " " + choice,
                "no such run in " + file + " (it holds " + std::to_string(runs.size()) + " run(s))");
}

// Rows B is slower in by more than `percent` (their verdict says slower and the change exceeds it).
std::vector<std::string> slowerRows(const Comparison& c, double percent)
{
    std::vector<std::string> rows;
    const auto check = [&rows, percent](const std::string& name, const SpeedComparison& speed) {
        if (speed.verdict == SpeedVerdict::Slower && speed.speedup > 0 && (1.0 / speed.speedup - 1.0) * 100.0 > percent)
            rows.push_back(name + " +" + std::to_string(int(std::lround((1.0 / speed.speedup - 1.0) * 100.0))) + "%");
    };
    check("total", c.speed);
    for (const ComparisonRow& row : c.byFunction)
        check("function " + row.key, row.speed);
    for (const ComparisonRow& row : c.byModule)
        check("module " + (row.key.empty() ? std::string("(root)") : row.key), row.speed);
    return rows;
}

} // namespace

Command addDiffCommand(CLI::App& app)
{
    struct Options {
        std::string a, b, runA, runB;
        double failIfSlower = -1;
        size_t top = 20;
        double maxDetectable = kDefaultMaxDetectableChange;
        ShareOptions share;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("diff", "Compare two saved runs made apart (A the reference, B the candidate): "
                                           "the same tables and verdicts as compare, and what differs between them");
    cmd->add_option("A", o->a, "the reference run's .kfprof file")->required();
    cmd->add_option("B", o->b, "the candidate run's .kfprof file")->required();
    cmd->add_option("--run-a", o->runA, "which run of A: its label (baseline, plan) or its number from 1");
    cmd->add_option("--run-b", o->runB, "which run of B: its label or its number from 1");
    cmd->add_option("--fail-if-slower", o->failIfSlower,
                    "exit 1 when B is slower than A beyond noise by more than PCT percent (the total, a function or "
                    "a module), naming the rows")
        ->type_name("PCT")
        ->check(CLI::Range(0.0, 1e6));
    cmd->add_option("--top", o->top, "rows per table (0 = all)")->capture_default_str();
    addMaxDetectableOption(cmd, o->maxDetectable);
    addShareOptions(cmd, o->share);
    addJsonFlag(cmd);
    return {cmd, [o](Report& report) {
                const SavedRun a = chosenRun(o->a, o->runA, "--run-a", report);
                const SavedRun b = chosenRun(o->b, o->runB, "--run-b", report);
                const Comparison c = compare(a.run, b.run, o->maxDetectable);
                const std::vector<std::string> differences = setupDifferences(a.run, b.run);
                report.json = comparisonJson(c, a.run, b.run, o->top);
                report.json["setup_differences"] = differences;
                report.text << "A: " << o->a << (a.label.empty() ? "" : " (" + a.label + ")") << "\nB: " << o->b
                            << (b.label.empty() ? "" : " (" + b.label + ")") << '\n';
                for (const std::string& line : differences)
                    report.text << "differs: " << line << '\n';
                printComparison(report.text, c, a.run, b.run);
                const RunPairing pairing = pairRuns(a.run, b.run, o->maxDetectable);
                report.json["pairing"] = pairingJson(pairing, o->top);
                printPairing(report.text, pairing, o->top);
                if (o->share.given())
                    report.text << writeShareable(o->share,
                                                  pairReport({&a, o->a, "A"}, {&b, o->b, "B"}, c, o->top, &pairing));
                if (o->failIfSlower < 0)
                    return;
                std::vector<std::string> slower = slowerRows(c, o->failIfSlower);
                for (std::string& row : slowerPairs(pairing, o->failIfSlower))
                    slower.push_back(std::move(row));
                report.json["slower"] = slower;
                if (slower.empty())
                    return;
                std::string named;
                for (const std::string& row : slower)
                    named += (named.empty() ? "" : ", ") + row;
                report.diagnostic("B is slower than A beyond noise, by more than " + fixed(o->failIfSlower, 1) +
                                  "%, in " + named);
                report.exitCode = 1;
            }};
}

} // namespace kforge::cli
