// SPDX-License-Identifier: Apache-2.0
#pragma once
// Records the arguments of intercepted calls during a forward (the optimizer's "observed samples"): one
// sample per distinct input signature, with how often each signature occurred.
#include <kforge/functions.h>

#include <ATen/core/stack.h>

#include <array>
#include <atomic>
#include <map>
#include <string>
#include <vector>

namespace kforge::optimizer {

struct ObservedSamples {
    std::vector<torch::jit::Stack> unique; // one per signature, deep copies
    std::vector<long> counts;              // calls per signature, parallel to `unique`
    // Per signature, its calls per module (the innermost instrumented module running when it was called; "" the
    // root): where per-scope plans place their entries.
    std::vector<std::map<std::string, long>> scopeCounts;
};

class SampleCapture {
public:
    SampleCapture();  // starts capturing on this thread
    ~SampleCapture(); // stops
    static SampleCapture* onThisThread();

    void observe(Function function, const torch::jit::Stack& stack, size_t argumentCount);
    // Module hooks while capturing: the module calls are attributed to (runtime/hook_ops.cpp).
    void enterModule(const char* path) { m_modules.push_back(path); }
    void exitModule()
    {
        if (!m_modules.empty())
            m_modules.pop_back();
    }
    // Whether any thread captures: one relaxed load on paths every instrumented module runs.
    static bool anyLive() { return s_live.load(std::memory_order_relaxed) > 0; }
    const ObservedSamples& samples(Function function) const { return m_samples[static_cast<int>(function)]; }

private:
    std::array<ObservedSamples, kFunctionCount> m_samples;
    std::array<std::map<std::string, size_t>, kFunctionCount> m_index;
    std::vector<const char*> m_modules; // entered and not yet exited, outermost first
    static std::atomic<int> s_live;
};

// Each unique sample repeated count / gcd(all counts) times: the observed mix with few repetitions.
std::vector<const torch::jit::Stack*> benchmarkSamples(const ObservedSamples& samples);

} // namespace kforge::optimizer
