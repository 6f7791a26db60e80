// SPDX-License-Identifier: Apache-2.0
#pragma once
// kforge report / diff --html and --md: a report to share (a page, a pull-request comment). Its sections are gathered
// once from what the engine computed, as the text output's tables are, and the two writers only lay them out, so the
// HTML and the Markdown always show the same numbers.
#include "profile_tables.h"

#include <kforge/profile_export.h>
#include <kforge/profiling.h>
#include <kforge/run_pairing.h>

#include <CLI/CLI.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kforge::cli {

struct ReportTable {
    std::string caption;
    Table table;
    // The module tree's rows: how deep each row's first cell sits (empty: a flat table).
    std::vector<int> depths;
};

// The flame graph (flameGraph) the HTML draws; the Markdown leaves it out.
struct ReportFlameGraph {
    std::string caption;
    std::vector<FlameFrame> frames;
    std::map<std::string, SpeedVerdict> verdicts; // a pair's: per frame path, against the other run (colours)
};

struct ReportSection {
    std::string heading;
    std::vector<std::pair<std::string, std::string>> facts; // "device" -> "cpu: timing ATen op executions"
    std::vector<std::string> lines;                         // sentences: the total, stalls, notes
    std::vector<ReportTable> tables;
    std::optional<ReportFlameGraph> flameGraph;
};

struct ShareableReport {
    std::string title;   // "kforge report: tiny-gpt"
    std::string summary; // one line on top: "plan vs baseline: total -12.3% (faster)"
    std::vector<ReportSection> sections;
};

// One run: its setup, plan, module tree, top functions and ops or kernels (`top` rows, 0: all) and flame graph.
ShareableReport runReport(const SavedRun& run, const std::string& file, size_t top);

// A run and the one it is compared with (a file's baseline and plan, or diff's A and B), named as the summary
// calls them ("baseline" / "plan", "A" / "B").
struct ReportSide {
    const SavedRun* saved = nullptr;
    std::string file;
    std::string name;
};
// The pair: both setups and what differs, the plan with its function verdicts, compare()'s tables (those
// printComparison prints), diff's ops and kernels paired by place when given, the module tree with both times, and
// the candidate's flame graph coloured by verdict.
ShareableReport pairReport(const ReportSide& before, const ReportSide& after, const Comparison& comparison, size_t top,
                           const RunPairing* pairing = nullptr);

// --html FILE and --md FILE.
struct ShareOptions {
    std::string html;
    std::string markdown;
    bool given() const { return !html.empty() || !markdown.empty(); }
};
void addShareOptions(CLI::App* command, ShareOptions& options);
// Writes each file asked for atomically (a failed write leaves no file; kforge::Error names the path). Returns the
// lines that say where they went ("HTML report: out.html (120.5 KiB)"), for the end of the text output.
std::string writeShareable(const ShareOptions& options, const ShareableReport& shareable);

} // namespace kforge::cli
