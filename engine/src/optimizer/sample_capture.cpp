// SPDX-License-Identifier: Apache-2.0
#include "optimizer/sample_capture.h"

#include <ATen/ATen.h>

#include <numeric>

namespace kforge::optimizer {
namespace {

thread_local SampleCapture* tlsCapture = nullptr;

std::string signature(const torch::jit::Stack& args)
{
    std::string s;
    for (const auto& v : args) {
        if (v.isTensor()) {
            const at::Tensor& t = v.toTensor();
            s += std::string(c10::toString(t.scalar_type())) + t.device().str() + "[";
            for (auto d : t.sizes())
                s += std::to_string(d) + ",";
            s += t.is_contiguous() ? "]c;" : "]s;";
        } else {
            std::stringstream out;
            out << v;
            s += out.str() + ";";
        }
    }
    return s;
}

} // namespace

std::atomic<int> SampleCapture::s_live{0};

SampleCapture::SampleCapture()
{
    tlsCapture = this;
    s_live.fetch_add(1, std::memory_order_relaxed);
}

SampleCapture::~SampleCapture()
{
    tlsCapture = nullptr;
    s_live.fetch_sub(1, std::memory_order_relaxed);
}
SampleCapture* SampleCapture::onThisThread() { return tlsCapture; }

void SampleCapture::observe(Function function, const torch::jit::Stack& stack, size_t argumentCount)
{
    const int f = static_cast<int>(function);
    const torch::jit::Stack args(stack.end() - argumentCount, stack.end());
    const std::string key = signature(args);
    const std::string scope = m_modules.empty() ? std::string() : std::string(m_modules.back());
    const auto [it, added] = m_index[f].emplace(key, m_samples[f].unique.size());
    if (!added) {
        ++m_samples[f].counts[it->second];
        ++m_samples[f].scopeCounts[it->second][scope];
        return;
    }
    torch::jit::Stack copy;
    for (const auto& v : args)
        copy.push_back(v.isTensor() ? c10::IValue(v.toTensor().detach().clone()) : v);
    m_samples[f].unique.push_back(std::move(copy));
    m_samples[f].counts.push_back(1);
    m_samples[f].scopeCounts.push_back({{scope, 1}});
}

std::vector<const torch::jit::Stack*> benchmarkSamples(const ObservedSamples& samples)
{
    long divisor = 0;
    for (long c : samples.counts)
        divisor = std::gcd(divisor, c);
    std::vector<const torch::jit::Stack*> out;
    for (size_t i = 0; i < samples.unique.size(); ++i)
        for (long r = 0; r < samples.counts[i] / std::max(1L, divisor); ++r)
            out.push_back(&samples.unique[i]);
    return out;
}

} // namespace kforge::optimizer
