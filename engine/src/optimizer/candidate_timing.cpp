// SPDX-License-Identifier: Apache-2.0
#include <kforge/speed_verdict.h>

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

SpeedComparison PairedRounds::compare() const { return compareSpeed(originalUs, candidateUs); }

PairedRounds benchmarkAgainstOriginal(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                      const std::string& device, const SampleCall& candidate,
                                      const SampleCall& original, std::int64_t deadlineNs)
{
    PairedRounds out;
    for (int round = -2; round < rounds; ++round) {
        double c = 0, o = 0;
        if (round % 2 == 0) { // which side runs first alternates: the second may find warmer caches
            c = timeRound(samples, device, candidate);
            o = timeRound(samples, device, original);
        } else {
            o = timeRound(samples, device, original);
            c = timeRound(samples, device, candidate);
        }
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
