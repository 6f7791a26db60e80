// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the benchmark programs: a reporter that keeps every repetition's time per benchmark, so a
// summary printed after RunSpecifiedBenchmarks can compute ratios against a baseline measured in the same
// run, and default flags (repetitions, random interleaving) that the command line can override.
// Nothing here passes or fails on time: the figures are printed for people to judge.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace kforge_bench {

struct Stats {
    int reps = 0;
    double mean = 0, median = 0, stddev = 0, min = 0; // ns per iteration
};

class CollectingReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override
    {
        std::vector<Run> shown;
        for (const Run& r : runs) {
            if (!r.error_occurred && r.run_type == Run::RT_Iteration && r.iterations > 0) {
                m_samples[r.run_name.str()].push_back(r.real_accumulated_time * 1e9 / double(r.iterations));
                m_samples["cpu:" + r.run_name.str()].push_back(r.cpu_accumulated_time * 1e9 / double(r.iterations));
            }
            // Show the aggregates only when there are repetitions; the summary shows the rest.
            if (r.repetitions <= 1 || r.run_type == Run::RT_Aggregate)
                shown.push_back(r);
        }
        if (!shown.empty())
            ConsoleReporter::ReportRuns(shown);
    }

    // Real time per iteration (cpu = true: this thread's CPU time, less sensitive to other processes on a
    // loaded machine). nullptr when the benchmark did not run (filtered out or failed).
    const Stats* stats(const std::string& benchmark, bool cpu = false)
    {
        const std::string name = (cpu ? "cpu:" : "") + benchmark;
        const auto it = m_samples.find(name);
        if (it == m_samples.end() || it->second.empty())
            return nullptr;
        auto& cached = m_stats[name];
        std::vector<double> v = it->second;
        std::sort(v.begin(), v.end());
        cached.reps = int(v.size());
        double sum = 0;
        for (double x : v)
            sum += x;
        cached.mean = sum / v.size();
        cached.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
        double sq = 0;
        for (double x : v)
            sq += (x - cached.mean) * (x - cached.mean);
        cached.stddev = v.size() > 1 ? std::sqrt(sq / (v.size() - 1)) : 0.0;
        cached.min = v.front();
        return &cached;
    }

private:
    std::map<std::string, std::vector<double>> m_samples;
    std::map<std::string, Stats> m_stats;
};

// argv with `defaults` ("--benchmark_x=v") added where the command line does not set that flag.
inline std::vector<char*> withDefaultFlags(int argc, char** argv, const std::vector<std::string>& defaults)
{
    static std::vector<std::string> storage;
    storage.clear();
    storage.reserve(defaults.size());
    std::vector<char*> out(argv, argv + argc);
    for (const std::string& d : defaults) {
        const std::string key = d.substr(0, d.find('=') + 1);
        bool given = false;
        for (int i = 1; i < argc; ++i)
            given = given || std::string(argv[i]).rfind(key, 0) == 0;
        if (!given) {
            storage.push_back(d);
            out.push_back(storage.back().data());
        }
    }
    out.push_back(nullptr);
    return out;
}

// Runs the registered benchmarks, with `defaults` where the command line sets no such flag, into a
// CollectingReporter and then hands that to `summary`. Returns main's exit code (1: arguments it does not know).
template <class Summary>
int runBenchmarks(int argc, char** argv, const std::vector<std::string>& defaults, Summary summary)
{
    auto args = withDefaultFlags(argc, argv, defaults);
    int n = int(args.size()) - 1;
    benchmark::Initialize(&n, args.data());
    if (benchmark::ReportUnrecognizedArguments(n, args.data()))
        return 1;
    CollectingReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    summary(reporter);
    benchmark::Shutdown();
    return 0;
}

// The activation shapes the CPU and CUDA provider benchmarks share (bench_providers, bench_cuda_providers).
struct ActivationCase {
    const char* function; // "gelu"
    const char* variant;  // "" or "tanh"
    std::vector<std::int64_t> shape;
};
inline const std::vector<ActivationCase>& activationCases()
{
    static const std::vector<ActivationCase> cases{
        {"layer_norm", "", {8, 512, 768}}, // BERT-base / GPT-2 small hidden states, over 768
        {"rms_norm", "", {8, 512, 768}},    {"gelu", "", {8, 512, 768}},
        {"gelu", "tanh", {8, 512, 768}},    {"gelu", "", {32, 128, 4096}}, // an MLP up-projection
        {"silu", "", {8, 512, 768}},        {"silu", "", {32, 128, 4096}},
        {"softmax", "", {8, 12, 512, 512}}, // attention scores, 12 heads, 512 tokens, over the last dim
    };
    return cases;
}

// "[8,512,768]"
inline std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i)
            s += ','; // (not `"," + to_string(...)`: GCC 12 warns -Wstringop-overflow on that form)
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

} // namespace kforge_bench
