// SPDX-License-Identifier: Apache-2.0
// The forward's peak memory without and with a plan (kforge/memory_profile.h).
#include <kforge/memory_profile.h>
#include <kforge/model_session.h>

#include <cmath>
#include <cstdio>

namespace kforge {
namespace {

MemorySummary peakOf(ModelSession& session, const Plan* plan, const std::string& device)
{
    ProfileOptions options;
    options.device = device;
    options.warmupIterations = 1; // allocations made once (caches, lazy buffers) stay out of the measured forwards
    options.iterations = 2;
    options.recordMemory = true;
    if (plan) {
        options.plan = *plan;
        options.usePlan = true;
    }
    return summarizeMemory(profile(session, options));
}

} // namespace

double PeakMemoryChange::percent() const
{
    if (baselineBytes == 0)
        return planBytes == 0 ? 0.0 : INFINITY;
    return (double(planBytes) - double(baselineBytes)) / double(baselineBytes) * 100.0;
}

PeakMemoryChange measurePeakChange(ModelSession& session, const Plan& plan, const std::string& device)
{
    const MemorySummary baseline = peakOf(session, nullptr, device);
    const MemorySummary withPlan = peakOf(session, &plan, device);
    return {baseline.peakBytes, withPlan.peakBytes, baseline.peakModule, withPlan.peakModule};
}

std::string bytesText(double bytes)
{
    const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    double value = std::fabs(bytes);
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    char text[48];
    std::snprintf(text, sizeof text, unit == 0 ? "%s%.0f %s" : "%s%.2f %s", bytes < 0 ? "-" : "", value, units[unit]);
    return text;
}

std::string describePeakChange(const PeakMemoryChange& change)
{
    const double percent = change.percent();
    char text[48];
    if (std::isinf(percent))
        std::snprintf(text, sizeof text, "(from nothing)");
    else
        std::snprintf(text, sizeof text, "(%+.1f%%)", percent);
    return bytesText(double(change.baselineBytes)) + " -> " + bytesText(double(change.planBytes)) + " " + text;
}

} // namespace kforge
