// SPDX-License-Identifier: Apache-2.0
#include <kforge/stalls.h>

#include <kforge/profiling.h>

#include "common/median.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>
#include <tuple>

namespace kforge {
namespace {

// The same call in every iteration: module, function, op, shapes and its ordinal among such calls in the iteration.
using CallKey = std::tuple<std::string, std::string, std::string, std::string, int>;

// CPU op calls only: device kernels keep their times (a descheduled host thread does not lengthen them).
std::vector<CallKey> callKeys(const std::vector<KernelRecord>& records)
{
    std::vector<size_t> order;
    for (size_t i = 0; i < records.size(); ++i)
        if (records[i].kind == "cpu_op")
            order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::tie(records[a].iteration, records[a].startNs) < std::tie(records[b].iteration, records[b].startNs);
    });
    std::vector<CallKey> keys(records.size());
    std::map<std::tuple<int, std::string, std::string, std::string, std::string>, int> ordinals;
    for (size_t i : order) {
        const KernelRecord& r = records[i];
        int& ordinal = ordinals[{r.iteration, r.modulePath, r.function, r.name, r.inputShapes}];
        keys[i] = {r.modulePath, r.function, r.name, r.inputShapes, ordinal++};
    }
    return keys;
}

// Each measured iteration's wall span: from its first record or range to the end of its last.
std::vector<double> iterationSpansUs(const ProfileRun& run, size_t iterations)
{
    std::vector<std::int64_t> first(iterations, INT64_MAX), last(iterations, INT64_MIN);
    const auto extend = [&](int iteration, std::int64_t start, std::int64_t duration) {
        const size_t i = size_t(std::clamp(iteration, 0, int(iterations) - 1));
        first[i] = std::min(first[i], start);
        last[i] = std::max(last[i], start + duration);
    };
    for (const KernelRecord& r : run.records)
        extend(r.iteration, r.startNs, r.durationNs);
    for (const RangeRecord& r : run.ranges)
        extend(r.iteration, r.startNs, r.durationNs);
    std::vector<double> spans(iterations, 0.0);
    for (size_t i = 0; i < iterations; ++i)
        spans[i] = last[i] > first[i] ? double(last[i] - first[i]) / 1000.0 : 0.0;
    return spans;
}

std::string milliseconds(double us)
{
    char text[32];
    std::snprintf(text, sizeof text, us >= 10'000 ? "%.0f" : us >= 1'000 ? "%.1f" : "%.2f", us / 1000.0);
    return text;
}

// "2 intra-op threads and other work (load 1.4) share 2 cores".
std::string whatCompeted(const MachineState& m)
{
    char load[48] = "";
    if (m.loadAverage >= 0)
        std::snprintf(load, sizeof load, " (load %.1f)", m.loadAverage);
    const bool threads = m.intraOpThreads > 1;
    std::string text = threads ? std::to_string(m.intraOpThreads) + " intra-op threads and other work" : "other work";
    text += load;
    if (m.cores > 0)
        text += std::string(threads ? " share " : " shares ") + std::to_string(m.cores) + " core" +
                (m.cores == 1 ? "" : "s");
    else
        text += " competed for the CPU";
    return text;
}

} // namespace

MachineState currentMachineState(int intraOpThreads)
{
    MachineState m;
    m.cores = int(std::thread::hardware_concurrency());
    double load[1];
    if (getloadavg(load, 1) == 1)
        m.loadAverage = load[0];
    m.intraOpThreads = intraOpThreads;
    return m;
}

void StallReport::addStall(double excess)
{
    smallestUs = excessUs > 0 ? std::min(smallestUs, excess) : excess;
    largestUs = std::max(largestUs, excess);
    excessUs += excess;
}

double StallFreeRun::medianIterationUs() const { return medianOf(iterationUs); }

StallFreeRun removeStalls(const ProfileRun& run)
{
    StallFreeRun out;
    const size_t iterations = size_t(std::max(1, run.iterations));
    out.durationUs.reserve(run.records.size());
    for (const KernelRecord& r : run.records)
        out.durationUs.push_back(double(r.durationNs) / 1000.0);
    out.iterationUs = iterationSpansUs(run, iterations);
    StallReport& report = out.stalls;
    report.iterations = run.iterations;
    report.machine = {run.cores, run.loadAverage, run.intraOpThreads};
    report.examined = run.iterations >= kMinIterationsForStalls;
    if (!report.examined)
        return out;

    const std::vector<CallKey> keys = callKeys(run.records);
    std::map<CallKey, std::vector<double>> samples;
    for (size_t i = 0; i < run.records.size(); ++i)
        if (run.records[i].kind == "cpu_op")
            samples[keys[i]].push_back(out.durationUs[i]);
    std::map<CallKey, double> usual;
    for (auto& [key, durations] : samples)
        if (durations.size() >= size_t(kMinIterationsForStalls))
            usual.emplace(key, medianOf(std::move(durations)));

    std::vector<bool> stalledIteration(iterations, false);
    for (size_t i = 0; i < run.records.size(); ++i) {
        if (run.records[i].kind != "cpu_op")
            continue;
        const auto found = usual.find(keys[i]);
        if (found == usual.end())
            continue;
        const double usualUs = found->second, excessUs = out.durationUs[i] - usualUs;
        if (excessUs < kMinStallUs || out.durationUs[i] < kStallRatio * usualUs)
            continue;
        const size_t iteration = size_t(std::clamp(run.records[i].iteration, 0, int(iterations) - 1));
        out.durationUs[i] = usualUs;
        out.iterationUs[iteration] = std::max(0.0, out.iterationUs[iteration] - excessUs);
        stalledIteration[iteration] = true;
        ++report.stalledCalls;
        report.addStall(excessUs);
    }
    report.stalledIterations = int(std::count(stalledIteration.begin(), stalledIteration.end(), true));
    return out;
}

std::string describe(const StallReport& r)
{
    if (!r.any())
        return {};
    std::string text = "stalls: " + std::to_string(r.stalledIterations) + " of " + std::to_string(r.iterations) +
                       (r.stalledCalls > 0 ? " iterations" : " rounds") + " waited ";
    text += r.largestUs > r.smallestUs * 1.05 ? milliseconds(r.smallestUs) + " to " + milliseconds(r.largestUs)
                                              : milliseconds(r.largestUs);
    text += " ms (";
    if (r.stalledCalls > 0)
        text += std::to_string(r.stalledCalls) + " op call" + (r.stalledCalls == 1 ? "" : "s") + ", ";
    text += milliseconds(r.excessUs) + " ms in all): " + whatCompeted(r.machine) + "; ";
    text += r.remains() ? "too many to measure around: no verdict stands" : "the estimate excludes them";
    text += "; --threads 1 or a quieter machine measures the model";
    return text;
}

} // namespace kforge
