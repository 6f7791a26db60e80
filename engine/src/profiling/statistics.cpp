// SPDX-License-Identifier: Apache-2.0
#include <kforge/profiling.h>

#include <algorithm>
#include <cmath>
#include <map>

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
        std::vector<double> durationsUs;
        std::string function, modulePath;
    };
    std::map<std::string, Group> groups;
    double total = 0;
    for (const KernelRecord& r : records) {
        Group& g = groups[keyOf(r, groupBy)];
        const double us = double(r.durationNs) / 1000.0;
        g.durationsUs.push_back(us);
        total += us;
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

Comparison compare(const ProfileRun& baseline, const ProfileRun& plan)
{
    Comparison c;
    const auto join = [](const std::vector<StatRow>& before, const std::vector<StatRow>& after) {
        std::map<std::string, ComparisonRow> rows;
        for (const auto& r : before)
            rows[r.key].baselineUs = r.totalUs;
        for (const auto& r : after)
            rows[r.key].planUs = r.totalUs;
        std::vector<ComparisonRow> out;
        for (auto& [key, row] : rows) {
            row.key = key;
            row.speedup = row.planUs > 0 ? row.baselineUs / row.planUs : 0.0;
            out.push_back(row);
        }
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.baselineUs > b.baselineUs; });
        return out;
    };
    // Per iteration, so runs of different lengths compare.
    const auto perIteration = [](const ProfileRun& run, GroupBy by) {
        auto rows = statistics(run.records, by);
        for (auto& r : rows)
            r.totalUs /= std::max(1, run.iterations);
        return rows;
    };
    c.byFunction = join(perIteration(baseline, GroupBy::Function), perIteration(plan, GroupBy::Function));
    c.byModule = join(perIteration(baseline, GroupBy::Module), perIteration(plan, GroupBy::Module));
    for (const auto& r : c.byFunction) {
        c.baselineTotalUs += r.baselineUs;
        c.planTotalUs += r.planUs;
    }
    c.speedup = c.planTotalUs > 0 ? c.baselineTotalUs / c.planTotalUs : 0.0;
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
