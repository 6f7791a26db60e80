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

// A companion per thread, sharing `shared`: the observer of a forked task's (or a continuation's) module calls.
template <typename Observer, typename Shared>
std::shared_ptr<runtime::ForwardObserver>
companionOf(std::mutex& mutex, std::map<std::uint64_t, std::shared_ptr<Observer>>& companions, std::uint64_t thread,
            const std::shared_ptr<Shared>& shared, std::shared_ptr<Observer> (*make)(std::shared_ptr<Shared>))
{
    std::lock_guard lock(mutex);
    auto& companion = companions[thread];
    if (!companion)
        companion = make(shared);
    return companion;
}

std::shared_ptr<runtime::ForwardObserver> BaselineModuleRecorder::companionFor(std::uint64_t thread)
{
    return companionOf<BaselineModuleRecorder, Calls>(
        m_companionsMutex, m_companions, thread, m_calls, [](std::shared_ptr<Calls> calls) {
            return std::shared_ptr<BaselineModuleRecorder>(new BaselineModuleRecorder(std::move(calls)));
        });
}

void BaselineModuleRecorder::moduleEnter(const char* path)
{
    std::lock_guard lock(m_calls->mutex);
    m_open.push_back({{path, m_calls->callsOf[path]++}, {}});
}

void BaselineModuleRecorder::moduleInputs(const char* /*path*/, c10::ArrayRef<c10::IValue> inputs)
{
    std::lock_guard lock(m_calls->mutex);
    if (m_calls->full || m_open.empty())
        return;
    std::int64_t bytes = 0; // counted when the call is kept
    m_open.back().inputs = cloned(tensorsOf(inputs), bytes);
}

void BaselineModuleRecorder::moduleOutputs(const char* /*path*/, c10::ArrayRef<c10::IValue> outputs)
{
    std::lock_guard lock(m_calls->mutex);
    Calls& c = *m_calls;
    const int number = int(c.endOrder.size());
    if (c.full || m_open.empty() || number < c.first)
        return;
    Open& open = m_open.back();
    RecordedCall kept;
    for (const auto& [path, tensor] : open.inputs)
        c.bytes += std::int64_t(tensor.nbytes());
    kept.inputs = std::move(open.inputs);
    kept.outputs = cloned(tensorsOf(outputs), c.bytes);
    c.recorded.emplace(open.call, std::move(kept));
    if (c.bytes >= c.budget) {
        c.full = true;
        c.windowEnd = number + 1;
    }
}

void BaselineModuleRecorder::moduleExit(const char* /*path*/)
{
    std::lock_guard lock(m_calls->mutex);
    if (m_open.empty())
        return; // a continuation leaving a module its forward entered on another thread
    m_calls->endOrder.push_back(std::move(m_open.back().call));
    m_open.pop_back();
}

const RecordedCall* BaselineModuleRecorder::find(const ModuleCall& call) const
{
    const auto it = m_calls->recorded.find(call);
    return it == m_calls->recorded.end() ? nullptr : &it->second;
}

std::shared_ptr<runtime::ForwardObserver> PlanModuleComparer::companionFor(std::uint64_t thread)
{
    return companionOf<PlanModuleComparer, State>(
        m_companionsMutex, m_companions, thread, m_state, [](std::shared_ptr<State> state) {
            return std::shared_ptr<PlanModuleComparer>(new PlanModuleComparer(std::move(state)));
        });
}

void PlanModuleComparer::moduleEnter(const char* path)
{
    std::lock_guard lock(m_state->mutex);
    m_open.push_back({{path, m_state->callsOf[path]++}, true, {}});
}

void PlanModuleComparer::moduleInputs(const char* /*path*/, c10::ArrayRef<c10::IValue> inputs)
{
    std::lock_guard lock(m_state->mutex);
    if (done() || m_open.empty())
        return;
    Open& open = m_open.back();
    const NamedTensors given = tensorsOf(inputs);
    const RecordedCall* baseline = m_state->baseline.find(open.call);
    open.inputsAgree = !baseline || !firstDisagreement(baseline->inputs, given, m_state->thresholds);
    if (!m_state->tasksReorder)
        return;
    // Tasks started in another order than the baseline's: the baseline call of this module with these inputs.
    if (!baseline || !open.inputsAgree || m_state->matched.count(open.call)) {
        for (int k = 0;; ++k) {
            const ModuleCall candidate{open.call.first, k};
            const RecordedCall* other = m_state->baseline.find(candidate);
            if (!other)
                break;
            if (m_state->matched.count(candidate) || firstDisagreement(other->inputs, given, m_state->thresholds))
                continue;
            open.call = candidate;
            open.inputsAgree = true;
            break;
        }
    }
    m_state->matched.insert(open.call);
}

void PlanModuleComparer::moduleOutputs(const char* /*path*/, c10::ArrayRef<c10::IValue> outputs)
{
    std::lock_guard lock(m_state->mutex);
    State& st = *m_state;
    if (done() || m_open.empty())
        return;
    const Open& open = m_open.back();
    const auto& order = st.baseline.endOrder();
    const bool inBaseline = st.tasksReorder ? std::find(order.begin(), order.end(), open.call) != order.end()
                                            : size_t(st.ended) < order.size() && order[size_t(st.ended)] == open.call;
    if (!inBaseline) {
        st.mismatch = "module call " + std::to_string(st.ended + 1) + " to end is " + describeCall(open.call) +
                      " with the plan, " +
                      (size_t(st.ended) < order.size() ? describeCall(order[size_t(st.ended)]) : "none") +
                      " in the baseline: the plan changed the forward's control flow";
        return;
    }
    const RecordedCall* baseline = st.baseline.find(open.call);
    if (!baseline)
        return;
    const NamedTensors planOutputs = tensorsOf(outputs);
    tally(open.call, open.inputsAgree, baseline->outputs, planOutputs);
    if (st.divergence || !open.inputsAgree)
        return;
    auto disagreement = firstDisagreement(baseline->outputs, planOutputs, st.thresholds);
    if (!disagreement)
        return;
    ModuleDivergence d;
    d.module = open.call.first;
    d.call = open.call.second;
    d.moduleCalls = st.ended + 1;
    d.output = std::move(*disagreement);
    for (const auto& [key, n] : open.calls)
        d.calls.push_back({key.first, key.second, n});
    st.divergence = std::move(d);
}

void PlanModuleComparer::tally(const ModuleCall& call, bool inputsAgree, const NamedTensors& baseline,
                               const NamedTensors& plan)
{
    const auto [it, added] = m_state->moduleIndex.emplace(call.first, m_state->modules.size());
    if (added)
        m_state->modules.push_back({call.first});
    ModuleAgreement& m = m_state->modules[it->second];
    ++m.calls;
    m.inputsAgree = m.inputsAgree && inputsAgree;
    if (baseline.size() != plan.size()) {
        m.outputsAgree = false;
        return;
    }
    for (size_t i = 0; i < baseline.size(); ++i) {
        const TensorAgreement a =
            agreementOf(baseline[i].first, baseline[i].second, plan[i].second, m_state->thresholds);
        m.outputsAgree = m.outputsAgree && a.passed;
        m.maxAbsError = std::max(m.maxAbsError, a.maxAbsError);
        m.minCosine = std::min(m.minCosine, a.cosine);
        m.newNonFinite += a.newNonFinite;
    }
}

void PlanModuleComparer::moduleExit(const char* /*path*/)
{
    std::lock_guard lock(m_state->mutex);
    if (m_open.empty())
        return;
    if (m_open.size() > 1) // the calls inside a module call are its parent's too
        for (const auto& [key, n] : m_open.back().calls)
            m_open[m_open.size() - 2].calls[key] += n;
    m_open.pop_back();
    ++m_state->ended;
}

void PlanModuleComparer::callBegin(std::uint64_t id, Function function, const char* provider, const char* /*op*/)
{
    std::lock_guard lock(m_state->mutex);
    if (m_open.empty())
        return;
    std::pair<std::string, std::string> key{std::string(functionName(function)), provider ? provider : "original"};
    ++m_open.back().calls[key];
    m_state->liveCalls.emplace(id, std::move(key));
}

void PlanModuleComparer::callDeclined(std::uint64_t id)
{
    std::lock_guard lock(m_state->mutex);
    const auto it = m_state->liveCalls.find(id);
    if (it == m_state->liveCalls.end() || m_open.empty())
        return;
    auto& calls = m_open.back().calls;
    if (const auto served = calls.find(it->second); served != calls.end() && --served->second == 0)
        calls.erase(served);
    it->second.second = "original";
    ++calls[it->second];
}

void PlanModuleComparer::callEnd(std::uint64_t id)
{
    std::lock_guard lock(m_state->mutex);
    m_state->liveCalls.erase(id);
}

} // namespace kforge::measure
