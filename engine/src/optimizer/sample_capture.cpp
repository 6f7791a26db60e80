// SPDX-License-Identifier: Apache-2.0
#include "optimizer/sample_capture.h"
#include "model/model_inputs.h"

#include <ATen/ATen.h>

#include <ATen/core/grad_mode.h>

#include <limits>
#include <numeric>
#include <optional>

namespace kforge::optimizer {
namespace {

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

SampleCapture::SampleCapture() : m_store(std::make_shared<Store>()) { m_installed.emplace(*this); }

SampleCapture::SampleCapture(std::shared_ptr<Store> store) : m_store(std::move(store)) {}

SampleCapture::~SampleCapture() = default;

void SampleCapture::stop() { m_installed.reset(); }

std::shared_ptr<runtime::ForwardObserver> SampleCapture::companionFor(std::uint64_t thread)
{
    std::lock_guard lock(m_companionsMutex);
    auto& companion = m_companions[thread];
    if (!companion)
        companion = std::shared_ptr<SampleCapture>(new SampleCapture(m_store));
    return companion;
}

void SampleCapture::moduleExit(const char* /*path*/)
{
    if (!m_modules.empty()) // (a continuation leaves modules its forward entered on another thread)
        m_modules.pop_back();
}

std::string SampleCapture::currentScope() const
{
    return m_modules.empty() ? std::string() : std::string(m_modules.back());
}

void SampleCapture::add(ObservedSamples& samples, std::map<std::string, size_t>& index, const torch::jit::Stack& stack,
                        size_t argumentCount) const
{
    const torch::jit::Stack args(stack.end() - argumentCount, stack.end());
    const std::string scope = currentScope();
    const auto [it, added] = index.emplace(signature(args), samples.unique.size());
    const auto copied = [&] {
        torch::jit::Stack copy;
        for (const auto& v : args)
            copy.push_back(v.isTensor() ? c10::IValue(v.toTensor().detach().clone()) : v);
        return copy;
    };
    if (!added) {
        const long call = ++samples.counts[it->second];
        ++samples.scopeCounts[it->second][scope];
        if ((call & (call - 1)) == 0) { // a power of two: spread across the forward, few copies
            auto& later = samples.later[it->second];
            later.push_back({copied(), scope, call});
            if (later.size() > kLaterValueSamples)
                later.erase(later.begin());
        }
        return;
    }
    samples.unique.push_back(copied());
    samples.counts.push_back(1);
    samples.scopeCounts.push_back({{scope, 1}});
    samples.firstScopes.push_back(scope);
    samples.later.emplace_back();
}

void SampleCapture::sample(Function function, const torch::jit::Stack& stack, size_t argumentCount)
{
    const int f = static_cast<int>(function);
    std::lock_guard lock(m_store->mutex);
    add(m_store->samples[f], m_store->index[f], stack, argumentCount);
}

void SampleCapture::sampleVariant(Function function, const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                  size_t argumentCount)
{
    const int f = static_cast<int>(function);
    const std::string name = c10::toString(op.operator_name());
    std::lock_guard lock(m_store->mutex);
    auto it = m_store->variants[f].find(name);
    if (it == m_store->variants[f].end())
        it = m_store->variants[f].emplace(name, VariantSamples{op, {}}).first;
    add(it->second.samples, m_store->variantIndex[f][name], stack, argumentCount);
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

namespace {

// `call` with its first floating tensor argument replaced by `edge(it)`; nullopt when it has none.
std::optional<torch::jit::Stack> withFirstFloating(const torch::jit::Stack& call,
                                                   const std::function<at::Tensor(const at::Tensor&)>& edge)
{
    for (size_t i = 0; i < call.size(); ++i) {
        if (!call[i].isTensor() || !call[i].toTensor().is_floating_point() || call[i].toTensor().numel() == 0)
            continue;
        torch::jit::Stack out;
        for (const auto& v : call)
            out.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
        out[i] = edge(call[i].toTensor());
        return out;
    }
    return std::nullopt;
}

std::vector<torch::jit::Stack> edgeValues(const torch::jit::Stack& call)
{
    const std::function<at::Tensor(const at::Tensor&)> edges[] = {
        [](const at::Tensor& t) { return t.neg(); },
        [](const at::Tensor& t) { return at::zeros_like(t); },
        [](const at::Tensor& t) { return t * 8.0; },
        [](const at::Tensor& t) { // in the input's own layout (SDPA's queries come transposed: no flat view)
            at::Tensor out = t.clone();
            std::vector<int64_t> first(size_t(t.dim()), 0), last;
            for (int64_t d = 0; d < t.dim(); ++d)
                last.push_back(t.size(d) - 1);
            const auto at = [&](const std::vector<int64_t>& index) {
                at::Tensor element = out;
                for (const int64_t i : index)
                    element = element.select(0, i);
                return element;
            };
            at(first).fill_(std::numeric_limits<double>::quiet_NaN());
            at(last).fill_(std::numeric_limits<double>::infinity());
            return out;
        },
    };
    std::vector<torch::jit::Stack> out;
    for (const auto& edge : edges) {
        try {
            if (auto made = withFirstFloating(call, edge))
                out.push_back(std::move(*made));
        } catch (const c10::Error&) { // an input this edge cannot be made of: the others still are
        }
    }
    return out;
}

} // namespace

CheckSamples checkSamples(const ObservedSamples& observed, const std::function<bool(size_t)>& wanted,
                          const std::function<bool(const std::string&)>& inScope)
{
    CheckSamples out;
    std::vector<torch::jit::Stack> edges;
    at::NoGradGuard noGrad;
    for (size_t i = 0; i < observed.unique.size(); ++i) {
        if (!wanted(i))
            continue;
        out.calls.push_back(observed.unique[i]);
        if (i < observed.later.size())
            for (const ValueSample& later : observed.later[i])
                if (inScope(later.scope))
                    out.calls.push_back(later.args);
        for (auto& e : edgeValues(observed.unique[i]))
            edges.push_back(std::move(e));
    }
    out.recorded = int(out.calls.size());
    out.edges = int(edges.size());
    for (auto& e : edges)
        out.calls.push_back(std::move(e));
    return out;
}

std::string signatureOf(const torch::jit::Stack& sample)
{
    for (const c10::IValue& v : sample)
        if (v.isTensor())
            return describeIValue(v); // "float32[1,16,256]", as --input spells it
    return "?";
}

} // namespace kforge::optimizer
