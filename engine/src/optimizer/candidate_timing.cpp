// SPDX-License-Identifier: Apache-2.0
#include <kforge/benchmark.h>

#include "optimizer/candidate_timing.h"
#include "optimizer/settings_tuner.h"
#include "runtime/clock.h"

#include <algorithm>
#include <limits>

namespace kforge::optimizer {
namespace {

double fastest(const std::vector<double>& us)
{
    return us.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(us.begin(), us.end());
}

} // namespace

double timeRound(const std::vector<const torch::jit::Stack*>& samples, const std::string& device,
                 const SampleCall& call)
{
    std::vector<torch::jit::Stack> inputs;
    inputs.reserve(samples.size());
    for (const auto* s : samples)
        inputs.push_back(*s);
    synchronizeDevice(device);
    const std::int64_t start = runtime::nowNs();
    for (auto& stack : inputs)
        call(stack);
    synchronizeDevice(device);
    return double(runtime::nowNs() - start) / 1000.0;
}

double PairedRounds::bestCandidateUs() const { return fastest(candidateUs); }
double PairedRounds::bestOriginalUs() const { return fastest(originalUs); }

double PairedRounds::speedup() const
{
    const double c = bestCandidateUs();
    return c > 0 && c < std::numeric_limits<double>::infinity() ? bestOriginalUs() / c : 0.0;
}

std::pair<double, double> PairedRounds::speedupInterval() const
{
    if (candidateUs.size() < 2)
        return {0.0, 0.0};
    return kforge::speedupInterval(originalUs, candidateUs);
}

PairedRounds benchmarkAgainstOriginal(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                      const std::string& device, const SampleCall& candidate,
                                      const SampleCall& original, std::int64_t deadlineNs)
{
    PairedRounds out;
    for (int round = -2; round < rounds; ++round) {
        const double c = timeRound(samples, device, candidate);
        const double o = timeRound(samples, device, original);
        if (round >= 0) {
            out.candidateUs.push_back(c);
            out.originalUs.push_back(o);
            if (deadlineNs > 0 && runtime::nowNs() > deadlineNs)
                break;
        }
    }
    return out;
}

} // namespace kforge::optimizer
