// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the Profile side shows, as one immutable value: the baseline and plan runs, their comparison, and everything
// the views derive from them (each run's flame graphs and module times, its kernel-table rows per grouping and module
// scope, the plan's frame verdicts against the baseline). A worker (a profile, a .kfprof reader) builds it off the UI
// thread; controllers hand it out whole and pages and models take it by setResults(). Nothing in it changes once
// made: a regrouping makes a new value sharing every part it does not change (withTable).
#include <kforge/memory_profile.h>
#include <kforge/profiling.h>

#include <compare>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::ui {

// A run's flame graphs, module times and, where it recorded memory, where the memory went.
struct RunViews {
    std::vector<kforge::FlameFrame> flame;           // top-down (kforge::flameGraph)
    std::vector<kforge::FlameFrame> bottomUp;        // kforge::bottomUp of it
    std::unordered_map<std::string, double> frameUs; // each top-down frame's time per forward, by path
    std::vector<kforge::ModuleTime> moduleTimes;
    kforge::MemorySummary memory;                // kforge::summarizeMemory; memory.recorded false without memory
    std::vector<kforge::FlameFrame> memoryFlame; // kforge::memoryFlameGraph: `us` is bytes; empty without memory
};

// A kernel table: its grouping, and the module whose subtree's records it counts ("": the whole run).
struct TableKey {
    kforge::GroupBy groupBy = kforge::GroupBy::Kernel;
    std::string scope;
    friend auto operator<=>(const TableKey&, const TableKey&) = default;
};

using StatRows = std::vector<kforge::StatRow>;

// One run and what is derived from it alone.
struct RunResults {
    std::shared_ptr<const kforge::ProfileRun> run;
    std::shared_ptr<const RunViews> views;                      // null without a run
    std::map<TableKey, std::shared_ptr<const StatRows>> tables; // those computed so far

    explicit operator bool() const { return bool(run); }
    // The rows of `key`; null when they were not computed (ask for them with withTable()).
    std::shared_ptr<const StatRows> table(const TableKey& key) const;
};

struct ProfileResults {
    RunResults baseline;
    RunResults plan;
    // Of the two runs, when both exist (kforge::compare, or the study's own).
    std::shared_ptr<const kforge::Comparison> comparison;
    // The differential flame graph's verdicts of the plan's frames against the baseline's (kforge::flameGraphSpeeds).
    std::shared_ptr<const std::map<std::string, kforge::SpeedComparison>> flameSpeeds;
    bool madeOffUiThread = false; // where it was made: a worker, as every value the app shows should be

    bool empty() const { return !baseline && !plan; }
    bool both() const { return baseline && plan; }
    // Whether every kernel table of `key` exists, for each run there is.
    bool hasTable(const TableKey& key) const;
};

using ResultsPtr = std::shared_ptr<const ProfileResults>;

// The tables every profile computes up front: each grouping the kernel table offers over the whole run (by input
// shape where `recordShapes`), and `shown` (the grouping and scope on screen).
std::vector<TableKey> tablesToCompute(bool recordShapes, const TableKey& shown);

// Results of `baseline` and `plan` (either may be null) with `tables`. Parts of `reuse` made of the same runs are
// taken as they are rather than computed again; `comparison` is used when given (the study's own of these runs).
// Runs a while on a large run: call it off the UI thread.
ResultsPtr makeProfileResults(std::shared_ptr<const kforge::ProfileRun> baseline,
                              std::shared_ptr<const kforge::ProfileRun> plan, const std::vector<TableKey>& tables,
                              const ProfileResults* reuse = nullptr,
                              std::shared_ptr<const kforge::Comparison> comparison = nullptr);

// `results` with the tables of `key` added for each run (the same value when it has them).
ResultsPtr withTable(const ResultsPtr& results, const TableKey& key);

// The rows of `key` of `run` (kforge::statistics of the records made in the scope's subtree).
StatRows tableOf(const kforge::ProfileRun& run, const TableKey& key);

} // namespace kforge::ui
