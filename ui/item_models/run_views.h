// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the views show of a profile run, computed once per run and shared: its flame graph (top-down and bottom-up),
// each frame's time, its module times, its kernel-table rows per grouping, and a plan run's frame verdicts against its
// baseline. The profile controller
// computes them on the worker thread that made the runs, before they reach the UI thread; views read them here
// (the flame graph and the module tree used to compute them on the UI thread, the flame graph twice). Runs from a
// file, or in progress, get theirs computed on first use. Thread-safe; an entry goes with its run.
#include <kforge/profiling.h>

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::ui {

struct RunViews {
    std::vector<kforge::FlameFrame> flame;           // top-down (kforge::flameGraph)
    std::vector<kforge::FlameFrame> bottomUp;        // kforge::bottomUp of it
    std::unordered_map<std::string, double> frameUs; // each top-down frame's time per forward, by path
    std::vector<kforge::ModuleTime> moduleTimes;
    bool computedOffUiThread = false; // where it was computed: the worker, for runs a study made
};

// The views of `run` (null for none), computed on first use.
std::shared_ptr<const RunViews> viewsOf(const std::shared_ptr<const kforge::ProfileRun>& run);
// The kernel table's rows grouped by `groupBy` (kforge::statistics) of the records made in module `scope` and its
// subtree ("": the whole run), once per run, grouping and scope.
std::shared_ptr<const std::vector<kforge::StatRow>> statisticsOf(const std::shared_ptr<const kforge::ProfileRun>& run,
                                                                 kforge::GroupBy groupBy,
                                                                 const std::string& scope = {});
// The differential flame graph's verdicts of `plan` against `baseline` (kforge::flameGraphSpeeds), once per pair.
std::shared_ptr<const std::map<std::string, kforge::SpeedComparison>>
flameSpeedsOf(const std::shared_ptr<const kforge::ProfileRun>& baseline,
              const std::shared_ptr<const kforge::ProfileRun>& plan);

} // namespace kforge::ui
