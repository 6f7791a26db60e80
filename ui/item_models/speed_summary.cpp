// SPDX-License-Identifier: Apache-2.0
#include "item_models/speed_summary.h"

#include "item_models/duration_format.h"
#include "item_models/format.h"

#include <QCoreApplication>

#include <tuple>
#include <vector>

namespace kforge::ui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("kforge::ui", text); }

std::vector<const kforge::PlanEntry*> enabledEntries(const kforge::Plan& plan)
{
    std::vector<const kforge::PlanEntry*> entries;
    for (const kforge::PlanEntry& e : plan.entries)
        if (e.enabled)
            entries.push_back(&e);
    return entries;
}

QString comparisonTotals(const kforge::Comparison& c)
{
    return tr("Total: %1 → %2 per iteration (medians)")
        .arg(formatDuration(c.baselineTotalUs), formatDuration(c.planTotalUs));
}

QString ofAnEarlierPlan(const QString& line) { return tr("Of an earlier plan — %1").arg(line); }

} // namespace

bool sameEnabledEntries(const kforge::Plan& a, const kforge::Plan& b)
{
    const auto left = enabledEntries(a);
    const auto right = enabledEntries(b);
    if (left.size() != right.size())
        return false;
    for (size_t i = 0; i < left.size(); ++i)
        if (std::tie(left[i]->scope, left[i]->function, left[i]->provider) !=
            std::tie(right[i]->scope, right[i]->function, right[i]->provider))
            return false;
    return true;
}

WholeForwardLines wholeForwardLines(const kforge::Comparison* comparison, const kforge::Plan& comparedPlan,
                                    const kforge::BenchmarkResult* benchmark, const kforge::Plan& benchmarkedPlan,
                                    NewerResult newer, const QString& outputError)
{
    WholeForwardLines lines;
    if (benchmark)
        lines.benchmark = formatBenchmark(*benchmark);
    if (!comparison)
        return lines;
    const QString error = tr("output error: %1").arg(outputError);
    const bool measuredTheSamePlan =
        benchmark && !benchmark->baselineMs.empty() && sameEnabledEntries(comparedPlan, benchmarkedPlan);
    if (measuredTheSamePlan) {
        // One verdict on one plan: the benchmark's, made without the profiler's cost.
        lines.comparison = tr("%1, profiled; the whole forward's verdict is the benchmark's below · %2")
                               .arg(comparisonTotals(*comparison), error);
        return lines;
    }
    lines.comparison =
        tr("%1: %2 · %3").arg(comparisonTotals(*comparison), formatSpeedComparison(comparison->speed), error);
    if (benchmark) {
        if (newer == NewerResult::Benchmark)
            lines.comparison = ofAnEarlierPlan(lines.comparison);
        else
            lines.benchmark = ofAnEarlierPlan(lines.benchmark);
    }
    return lines;
}

} // namespace kforge::ui
