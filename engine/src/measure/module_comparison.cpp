// SPDX-License-Identifier: Apache-2.0
#include "measure/module_comparison.h"

#include "measure/tensor_agreement.h"
#include "model/output_digest.h"

#include <kforge/module_path.h>

#include <ATen/core/ivalue.h>

#include <algorithm>

namespace kforge::measure {

NamedTensors tensorsOf(c10::ArrayRef<c10::IValue> values)
{
    NamedTensors tensors = flattenOutput(c10::ivalue::Tuple::create(values.vec()));
    // An undefined tensor is TorchScript's None where a Tensor is typed (MultiheadAttention's weights).
    std::erase_if(tensors, [](const auto& named) { return !named.second.defined(); });
    return tensors;
}

namespace {

NamedTensors cloned(NamedTensors tensors, std::int64_t& bytes)
{
    for (auto& [path, tensor] : tensors) {
        tensor = tensor.detach().clone();
        bytes += std::int64_t(tensor.nbytes());
    }
    return tensors;
}

// The first tensor of the plan's that does not agree with the baseline's, or one that says how they differ in
// number; nullopt when all agree.
std::optional<TensorAgreement> firstDisagreement(const NamedTensors& baseline, const NamedTensors& plan,
                                                 const VerifyThresholds& thresholds)
{
    if (baseline.size() != plan.size()) {
        TensorAgreement a;
        a.passed = false;
        a.problem =
            std::to_string(plan.size()) + " tensor(s) where the baseline has " + std::to_string(baseline.size());
        return a;
    }
    for (size_t i = 0; i < baseline.size(); ++i) {
        TensorAgreement a = agreementOf(baseline[i].first, baseline[i].second, plan[i].second, thresholds);
        if (!a.passed)
            return a;
    }
    return std::nullopt;
}

std::string describeCall(const ModuleCall& call)
{
    return "'" + std::string(module_path::displayName(call.first)) + "' (call " + std::to_string(call.second + 1) + ")";
}

} // namespace

void BaselineModuleRecorder::moduleEnter(const char* path) { m_open.push_back({{path, m_callsOf[path]++}, {}}); }

void BaselineModuleRecorder::moduleInputs(const char* /*path*/, c10::ArrayRef<c10::IValue> inputs)
{
    if (m_full || m_open.empty())
        return;
    std::int64_t bytes = 0; // counted when the call is kept
    m_open.back().inputs = cloned(tensorsOf(inputs), bytes);
}

void BaselineModuleRecorder::moduleOutputs(const char* /*path*/, c10::ArrayRef<c10::IValue> outputs)
{
    const int number = int(m_endOrder.size());
    if (m_full || m_open.empty() || number < m_first)
        return;
    Open& open = m_open.back();
    RecordedCall kept;
    for (const auto& [path, tensor] : open.inputs)
        m_bytes += std::int64_t(tensor.nbytes());
    kept.inputs = std::move(open.inputs);
    kept.outputs = cloned(tensorsOf(outputs), m_bytes);
    m_recorded.emplace(open.call, std::move(kept));
    if (m_bytes >= m_budget) {
        m_full = true;
        m_windowEnd = number + 1;
    }
}

void BaselineModuleRecorder::moduleExit(const char* /*path*/)
{
    if (m_open.empty())
        return;
    m_endOrder.push_back(std::move(m_open.back().call));
    m_open.pop_back();
}

const RecordedCall* BaselineModuleRecorder::find(const ModuleCall& call) const
{
    const auto it = m_recorded.find(call);
    return it == m_recorded.end() ? nullptr : &it->second;
}

void PlanModuleComparer::moduleEnter(const char* path) { m_open.push_back({{path, m_callsOf[path]++}, true, {}}); }

void PlanModuleComparer::moduleInputs(const char* /*path*/, c10::ArrayRef<c10::IValue> inputs)
{
    if (done() || m_open.empty())
        return;
    if (const RecordedCall* baseline = m_baseline.find(m_open.back().call))
        m_open.back().inputsAgree = !firstDisagreement(baseline->inputs, tensorsOf(inputs), m_thresholds);
}

void PlanModuleComparer::moduleOutputs(const char* /*path*/, c10::ArrayRef<c10::IValue> outputs)
{
    if (done() || m_open.empty())
        return;
    const Open& open = m_open.back();
    const auto& order = m_baseline.endOrder();
    if (size_t(m_ended) >= order.size() || order[size_t(m_ended)] != open.call) {
        m_mismatch = "module call " + std::to_string(m_ended + 1) + " to end is " + describeCall(open.call) +
                     " with the plan, " +
                     (size_t(m_ended) < order.size() ? describeCall(order[size_t(m_ended)]) : "none") +
                     " in the baseline: the plan changed the forward's control flow";
        return;
    }
    const RecordedCall* baseline = m_baseline.find(open.call);
    if (!baseline)
        return;
    const NamedTensors planOutputs = tensorsOf(outputs);
    tally(open.call, open.inputsAgree, baseline->outputs, planOutputs);
    if (m_divergence || !open.inputsAgree)
        return;
    auto disagreement = firstDisagreement(baseline->outputs, planOutputs, m_thresholds);
    if (!disagreement)
        return;
    ModuleDivergence d;
    d.module = open.call.first;
    d.call = open.call.second;
    d.moduleCalls = m_ended + 1;
    d.output = std::move(*disagreement);
    for (const auto& [key, n] : open.calls)
        d.calls.push_back({key.first, key.second, n});
    m_divergence = std::move(d);
}

void PlanModuleComparer::tally(const ModuleCall& call, bool inputsAgree, const NamedTensors& baseline,
                               const NamedTensors& plan)
{
    const auto [it, added] = m_moduleIndex.emplace(call.first, m_modules.size());
    if (added)
        m_modules.push_back({call.first});
    ModuleAgreement& m = m_modules[it->second];
    ++m.calls;
    m.inputsAgree = m.inputsAgree && inputsAgree;
    if (baseline.size() != plan.size()) {
        m.outputsAgree = false;
        return;
    }
    for (size_t i = 0; i < baseline.size(); ++i) {
        const TensorAgreement a = agreementOf(baseline[i].first, baseline[i].second, plan[i].second, m_thresholds);
        m.outputsAgree = m.outputsAgree && a.passed;
        m.maxAbsError = std::max(m.maxAbsError, a.maxAbsError);
        m.minCosine = std::min(m.minCosine, a.cosine);
        m.newNonFinite += a.newNonFinite;
    }
}

void PlanModuleComparer::moduleExit(const char* /*path*/)
{
    if (m_open.empty())
        return;
    if (m_open.size() > 1) // the calls inside a module call are its parent's too
        for (const auto& [key, n] : m_open.back().calls)
            m_open[m_open.size() - 2].calls[key] += n;
    m_open.pop_back();
    ++m_ended;
}

void PlanModuleComparer::callBegin(std::uint64_t id, Function function, const char* provider, const char* /*op*/)
{
    if (m_open.empty())
        return;
    std::pair<std::string, std::string> key{std::string(functionName(function)), provider ? provider : "original"};
    ++m_open.back().calls[key];
    m_liveCalls.emplace(id, std::move(key));
}

void PlanModuleComparer::callDeclined(std::uint64_t id)
{
    const auto it = m_liveCalls.find(id);
    if (it == m_liveCalls.end() || m_open.empty())
        return;
    auto& calls = m_open.back().calls;
    if (const auto served = calls.find(it->second); served != calls.end() && --served->second == 0)
        calls.erase(served);
    it->second.second = "original";
    ++calls[it->second];
}

void PlanModuleComparer::callEnd(std::uint64_t id) { m_liveCalls.erase(id); }

} // namespace kforge::measure
