// SPDX-License-Identifier: Apache-2.0
#include <kforge/speed_verdict.h>

#include "optimizer/candidate_timing.h"
#include "optimizer/settings_tuner.h"
#include "runtime/clock.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kforge::optimizer {
namespace {

double fastest(const std::vector<double>& us)
{
    return us.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(us.begin(), us.end());
}

} // namespace

double timeRound(const std::vector<const torch::jit::Stack*>& samples, const std::string& device,
                 const SampleCall& call, int repetitions)
{
    repetitions = std::max(1, repetitions);
    std::vector<torch::jit::Stack> inputs; // a call consumes its stack: one copy per call, made before timing
    inputs.reserve(samples.size() * size_t(repetitions));
    for (int r = 0; r < repetitions; ++r)
        for (const auto* s : samples)
            inputs.push_back(*s);
    synchronizeDevice(device);
    const std::int64_t start = runtime::nowNs();
    for (auto& stack : inputs)
        call(stack);
    synchronizeDevice(device);
    return double(runtime::nowNs() - start) / 1000.0 / repetitions;
}

double PairedRounds::bestCandidateUs() const { return fastest(candidateUs); }
double PairedRounds::bestOriginalUs() const { return fastest(originalUs); }

SpeedComparison PairedRounds::compare() const { return compareSpeed(originalUs, candidateUs); }

std::vector<PairedRounds> benchmarkCandidatesTogether(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                                      const std::string& device,
                                                      const std::vector<SampleCall>& candidates,
                                                      const SampleCall& original, std::int64_t deadlineNs)
{
    // Side 0 is the original, side i + 1 candidate i.
    std::vector<const SampleCall*> sides{&original};
    for (const SampleCall& c : candidates)
        sides.push_back(&c);
    std::vector<PairedRounds> out(candidates.size());
    std::vector<double> us(sides.size());
    int repetitions = 1;
    for (int round = -2; round < rounds; ++round) {
        const size_t first = size_t(round + 2) % sides.size(); // who goes first rotates
        for (size_t k = 0; k < sides.size(); ++k) {
            const size_t side = (first + k) % sides.size();
            us[side] = timeRound(samples, device, *sides[side], repetitions);
        }
        if (round == -2)
            repetitions =
                std::clamp(int(std::ceil(kMinRoundUs / std::max(1e-3, *std::max_element(us.begin(), us.end())))), 1,
                           kMaxRepetitions);
        if (round < 0)
            continue;
        for (size_t i = 0; i < candidates.size(); ++i) {
            out[i].candidateUs.push_back(us[i + 1]);
            out[i].originalUs.push_back(us[0]);
        }
        if (deadlineNs > 0 && runtime::nowNs() > deadlineNs)
            break;
    }
    return out;
}

PairedRounds benchmarkAgainstOriginal(const std::vector<const torch::jit::Stack*>& samples, int rounds,
                                      const std::string& device, const SampleCall& candidate,
                                      const SampleCall& original, std::int64_t deadlineNs)
{
    return benchmarkCandidatesTogether(samples, rounds, device, {candidate}, original, deadlineNs).front();
}

} // namespace kforge::optimizer
