// SPDX-License-Identifier: Apache-2.0
#pragma once
// Records the arguments of intercepted calls during a forward (the optimizer's "observed samples"): one
// sample per distinct input signature, with how often each signature occurred.
#include <kforge/functions.h>

#include <ATen/core/stack.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace kforge::optimizer {

struct ObservedSamples {
    std::vector<torch::jit::Stack> unique; // one per signature, deep copies
    std::vector<long> counts;              // calls per signature, parallel to `unique`
};

class SampleCapture {
public:
    SampleCapture();  // starts capturing on this thread
    ~SampleCapture(); // stops
    static SampleCapture* onThisThread();

    void observe(Function function, const torch::jit::Stack& stack, size_t argumentCount);
    const ObservedSamples& samples(Function function) const { return m_samples[static_cast<int>(function)]; }

private:
    std::array<ObservedSamples, kFunctionCount> m_samples;
    std::array<std::map<std::string, size_t>, kFunctionCount> m_index;
};

// Each unique sample repeated count / gcd(all counts) times: the observed mix with few repetitions.
std::vector<const torch::jit::Stack*> benchmarkSamples(const ObservedSamples& samples);

} // namespace kforge::optimizer
