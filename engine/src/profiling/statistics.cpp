// SPDX-License-Identifier: Apache-2.0
#include <kforge/module_path.h>
#include <kforge/profiling.h>
#include <kforge/stalls.h>

#include "common/median.h"
#include "profiling/function_call_records.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>

namespace kforge {
namespace {

std::string geometry(const KernelRecord& r)
{
    const auto dims = [](const std::array<int, 3>& d) {
        return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    };
    return r.name + " <<<" + dims(r.grid) + ", " + dims(r.block) + ">>>";
}

std::string keyOf(const KernelRecord& r, GroupBy by)
{
    switch (by) {
    case GroupBy::Kernel:
        return r.name;
    case GroupBy::KernelGeometry:
        return r.kind == "kernel" ? geometry(r) : r.name;
    case GroupBy::Function:
        return r.function.empty() ? "(no function)" : r.function;
    case GroupBy::Module:
        return r.modulePath;
    case GroupBy::OpInputShapes:
        return r.inputShapes.empty() ? r.name : r.name + " " + r.inputShapes;
    }
    return r.name;
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p)
{
    if (sorted.empty())
        return 0.0;
    const auto rank = static_cast<size_t>(std::ceil(p * double(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

} // namespace

std::vector<StatRow> statistics(const std::vector<KernelRecord>& records, GroupBy groupBy)
{
    struct Group {
        std::vector<double> durationsUs; // per record; by function, per call (function_call_records.h)
        std::string function, modulePath;
        std::unordered_map<std::uint64_t, size_t> sampleOfCall;
    };
    std::map<std::string, Group> groups;
    double total = 0;
    for (const KernelRecord& r : records) {
        Group& g = groups[keyOf(r, groupBy)];
        const double us = double(r.durationNs) / 1000.0;
        total += us;
        if (const auto call = profiling::functionCallOf(r); call && groupBy == GroupBy::Function) {
            const auto [it, first] = g.sampleOfCall.emplace(*call, g.durationsUs.size());
            if (!first) {
                g.durationsUs[it->second] += us;
                continue;
            }
        }
        g.durationsUs.push_back(us);
        if (g.durationsUs.size() == 1) {
            g.function = r.function;
            g.modulePath = r.modulePath;
        }
        if (g.function != r.function)
            g.function = "(several)";
        if (g.modulePath != r.modulePath)
            g.modulePath = "(several)";
    }
    std::vector<StatRow> rows;
    for (auto& [key, g] : groups) {
        std::sort(g.durationsUs.begin(), g.durationsUs.end());
        StatRow row;
        row.key = key;
        row.function = g.function;
        row.modulePath = g.modulePath;
        row.calls = static_cast<long long>(g.durationsUs.size());
        for (double d : g.durationsUs)
            row.totalUs += d;
        row.meanUs = row.totalUs / double(row.calls);
        row.minUs = g.durationsUs.front();
        row.maxUs = g.durationsUs.back();
        row.medianUs = percentile(g.durationsUs, 0.5);
        row.p95Us = percentile(g.durationsUs, 0.95);
        row.share = total > 0 ? row.totalUs / total : 0.0;
        rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(), [](const StatRow& a, const StatRow& b) {
        return a.totalUs != b.totalUs ? a.totalUs > b.totalUs : a.key < b.key;
    });
    return rows;
}

namespace {

// Each key's recorded time per measured iteration (µs); iterations where the key recorded nothing count 0.
using IterationTimes = std::map<std::string, std::vector<double>>;

// durationUs: per record of run.records (the stall-free durations, stalls.h).
IterationTimes timesPerIteration(const ProfileRun& run, const std::vector<double>& durationUs, GroupBy by)
{
    const size_t iterations = size_t(std::max(1, run.iterations));
    IterationTimes times;
    for (size_t i = 0; i < run.records.size(); ++i) {
        const KernelRecord& r = run.records[i];
        std::vector<double>& perIteration = times[keyOf(r, by)];
        perIteration.resize(iterations, 0.0);
        perIteration[std::clamp<size_t>(size_t(std::max(0, r.iteration)), 0, iterations - 1)] += durationUs[i];
    }
    return times;
}

// A module's time with everything below it, per iteration: each record counts for its module and every ancestor.
IterationTimes subtreeTimesPerIteration(const ProfileRun& run, const std::vector<double>& durationUs)
{
    IterationTimes times;
    for (const auto& [path, perIteration] : timesPerIteration(run, durationUs, GroupBy::Module)) {
        std::string_view ancestor = path;
        while (true) {
            std::vector<double>& sum = times[std::string(ancestor)];
            sum.resize(perIteration.size(), 0.0);
            for (size_t i = 0; i < perIteration.size(); ++i)
                sum[i] += perIteration[i];
            if (ancestor.empty())
                break;
            ancestor = module_path::parentOf(ancestor);
        }
    }
    return times;
}

ComparisonRow comparisonRow(const std::string& key, const std::vector<double>& before, const std::vector<double>& after,
                            double maxDetectableChange)
{
    ComparisonRow row;
    row.key = key;
    row.baselineUs = medianOf(before);
    row.planUs = medianOf(after);
    row.speed = compareSpeed(before, after, maxDetectableChange);
    row.speedup = row.planUs > 0 && row.baselineUs > 0 ? row.speed.speedup : 0.0;
    return row;
}

std::vector<ComparisonRow> joinRows(const IterationTimes& before, const IterationTimes& after,
                                    double maxDetectableChange)
{
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> joined;
    for (const auto& [key, times] : before)
        joined[key].first = times;
    for (const auto& [key, times] : after)
        joined[key].second = times;
    std::vector<ComparisonRow> rows;
    for (const auto& [key, sides] : joined)
        rows.push_back(comparisonRow(key, sides.first, sides.second, maxDetectableChange));
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a.baselineUs != b.baselineUs ? a.baselineUs > b.baselineUs : a.key < b.key;
    });
    return rows;
}

std::vector<double> iterationTotals(const IterationTimes& byFunction, int iterations)
{
    std::vector<double> totals(size_t(std::max(1, iterations)), 0.0);
    for (const auto& [key, times] : byFunction)
        for (size_t i = 0; i < times.size(); ++i)
            totals[i] += times[i];
    return totals;
}

} // namespace

Comparison compare(const ProfileRun& baseline, const ProfileRun& plan, double maxDetectableChange)
{
    Comparison c;
    const StallFreeRun before = removeStalls(baseline), after = removeStalls(plan);
    c.baselineStalls = before.stalls;
    c.planStalls = after.stalls;
    const auto times = [](const ProfileRun& run, const StallFreeRun& free, GroupBy by) {
        return timesPerIteration(run, free.durationUs, by);
    };
    const IterationTimes baselineFunctions = times(baseline, before, GroupBy::Function);
    const IterationTimes planFunctions = times(plan, after, GroupBy::Function);
    c.byFunction = joinRows(baselineFunctions, planFunctions, maxDetectableChange);
    c.byModule =
        joinRows(times(baseline, before, GroupBy::Module), times(plan, after, GroupBy::Module), maxDetectableChange);
    c.bySubtree = joinRows(subtreeTimesPerIteration(baseline, before.durationUs),
                           subtreeTimesPerIteration(plan, after.durationUs), maxDetectableChange);
    const ComparisonRow total = comparisonRow("", iterationTotals(baselineFunctions, baseline.iterations),
                                              iterationTotals(planFunctions, plan.iterations), maxDetectableChange);
    c.baselineTotalUs = total.baselineUs;
    c.planTotalUs = total.planUs;
    c.speedup = total.speedup;
    c.speed = total.speed;
    if (c.baselineStalls.remains() || c.planStalls.remains()) { // a median no longer steps around them
        const std::string why = "stalls remained in " + std::string(c.baselineStalls.remains() ? "baseline" : "plan") +
                                " iterations after exclusion";
        markTooNoisy(c.speed, why);
        for (auto* rows : {&c.byFunction, &c.byModule, &c.bySubtree})
            for (ComparisonRow& row : *rows)
                if (row.baselineUs > 0 && row.planUs > 0)
                    markTooNoisy(row.speed, why);
    }
    c.outputsComparable = baseline.outputValues.size() == plan.outputValues.size();
    for (size_t i = 0; c.outputsComparable && i < baseline.outputValues.size(); ++i) {
        const auto& a = baseline.outputValues[i];
        const auto& b = plan.outputValues[i];
        if (a.size() != b.size()) {
            c.outputsComparable = false;
            break;
        }
        for (size_t j = 0; j < a.size(); ++j) {
            const double err = std::abs(double(a[j]) - double(b[j]));
            c.maxAbsError = std::max(c.maxAbsError, err);
            if (a[j] != 0.0f)
                c.maxRelError = std::max(c.maxRelError, err / std::abs(double(a[j])));
        }
    }
    return c;
}

} // namespace kforge
