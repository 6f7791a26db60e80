// SPDX-License-Identifier: Apache-2.0
#pragma once
// Locates where a plan's forward starts to diverge from the baseline's: a forward observer that keeps the tensors the
// baseline's module calls take and return (a window of calls at a time, within a byte budget), and one that compares
// the plan forward's against them as each call starts and ends. The first module call, in the order calls end, whose
// inputs agree and whose outputs diverge is where the divergence is made.
#include "runtime/observer.h"

#include <kforge/verify.h>

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kforge::measure {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;
using ModuleCall = std::pair<std::string, int>; // a module's path and which of its calls in the forward, from 0

// One module call of the baseline: what it took and returned (cloned).
struct RecordedCall {
    NamedTensors inputs, outputs;
};

// Module calls are numbered in the order they end. The recorder keeps the calls numbered from `first` on until it
// has kept `budgetBytes` (one call at least): the window [first, windowEnd()). Calls made in the tasks a forward forks
// are recorded on their threads by companions sharing the calls (a forking model's module calls were all missed).
class BaselineModuleRecorder final : public runtime::ForwardObserver {
public:
    BaselineModuleRecorder(int first, std::int64_t budgetBytes) : m_calls(std::make_shared<Calls>(first, budgetBytes))
    {
    }

    std::shared_ptr<runtime::ForwardObserver> companionFor(std::uint64_t thread) override;
    bool wantsModuleOutputs() const override { return true; }
    void moduleEnter(const char* path) override;
    void moduleInputs(const char* path, c10::ArrayRef<c10::IValue> inputs) override;
    void moduleOutputs(const char* path, c10::ArrayRef<c10::IValue> outputs) override;
    void moduleExit(const char* path) override;

    // After the forward: the calls kept, every call in the order they ended, and where the window ends.
    const RecordedCall* find(const ModuleCall& call) const;
    const std::vector<ModuleCall>& endOrder() const { return m_calls->endOrder; }
    int windowEnd() const { return m_calls->full ? m_calls->windowEnd : int(m_calls->endOrder.size()); }

private:
    struct Open {
        ModuleCall call;
        NamedTensors inputs;
    };
    // What the recorder and its companions share, under `mutex`.
    struct Calls {
        Calls(int f, std::int64_t b) : first(f), budget(b) {}
        std::mutex mutex;
        int first;
        std::int64_t budget;
        std::int64_t bytes = 0;
        bool full = false;
        int windowEnd = 0;
        std::unordered_map<std::string, int> callsOf;
        std::vector<ModuleCall> endOrder;
        std::map<ModuleCall, RecordedCall> recorded;
    };
    explicit BaselineModuleRecorder(std::shared_ptr<Calls> calls) : m_calls(std::move(calls)) {}

    std::shared_ptr<Calls> m_calls;
    std::vector<Open> m_open; // this thread's module calls, outermost first
    std::mutex m_companionsMutex;
    std::map<std::uint64_t, std::shared_ptr<BaselineModuleRecorder>> m_companions;
};

// Compares the plan forward's module calls with the baseline's window, as each starts and ends, and tallies the
// function calls made inside each; in forked tasks by companions, as the recorder.
class PlanModuleComparer final : public runtime::ForwardObserver {
public:
    // `tasksReorder`: the forward forks tasks (torch.jit.fork), whose module calls start and end in an order that
    // differs from forward to forward: a call is then matched to the baseline's call of the same module whose inputs
    // agree, and the plan's calls need only be the baseline's, in any order.
    PlanModuleComparer(const BaselineModuleRecorder& baseline, const VerifyThresholds& thresholds,
                       bool tasksReorder = false)
        : m_state(std::make_shared<State>(baseline, thresholds, tasksReorder))
    {
    }

    std::shared_ptr<runtime::ForwardObserver> companionFor(std::uint64_t thread) override;
    bool wantsModuleOutputs() const override { return true; }
    void moduleEnter(const char* path) override;
    void moduleInputs(const char* path, c10::ArrayRef<c10::IValue> inputs) override;
    void moduleOutputs(const char* path, c10::ArrayRef<c10::IValue> outputs) override;
    void moduleExit(const char* path) override;
    void callBegin(std::uint64_t id, Function function, const char* provider, const char* op) override;
    void callDeclined(std::uint64_t id) override;
    void callEnd(std::uint64_t id) override;

    // The first module call of the window whose inputs agree and whose outputs diverge, if any (its plan entries
    // left for the caller).
    const std::optional<ModuleDivergence>& divergence() const { return m_state->divergence; }
    // Set when the plan forward's module calls are not the baseline's: control flow the plan changed.
    const std::string& mismatch() const { return m_state->mismatch; }
    // Every module call of the window compared, summed per module (comparison goes on past the divergence).
    const std::vector<ModuleAgreement>& modules() const { return m_state->modules; }

private:
    using Tally = std::map<std::pair<std::string, std::string>, int>; // (function, provider) -> calls
    struct Open {
        ModuleCall call;
        bool inputsAgree = true;
        Tally calls;
    };
    // What the comparer and its companions share, under `mutex`.
    struct State {
        State(const BaselineModuleRecorder& b, const VerifyThresholds& t, bool r)
            : baseline(b), thresholds(t), tasksReorder(r)
        {
        }
        std::mutex mutex;
        const BaselineModuleRecorder& baseline;
        const VerifyThresholds& thresholds;
        const bool tasksReorder;
        std::set<ModuleCall> matched; // baseline calls a plan call was matched to (tasksReorder)
        int ended = 0;
        std::unordered_map<std::string, int> callsOf;
        std::unordered_map<std::uint64_t, std::pair<std::string, std::string>> liveCalls; // for declines
        std::optional<ModuleDivergence> divergence;
        std::string mismatch;
        std::vector<ModuleAgreement> modules;
        std::unordered_map<std::string, size_t> moduleIndex; // path -> modules
    };
    explicit PlanModuleComparer(std::shared_ptr<State> state) : m_state(std::move(state)) {}
    bool done() const { return !m_state->mismatch.empty(); }
    void tally(const ModuleCall& call, bool inputsAgree, const NamedTensors& baseline, const NamedTensors& plan);

    std::shared_ptr<State> m_state;
    std::vector<Open> m_open; // this thread's module calls, outermost first
    std::mutex m_companionsMutex;
    std::map<std::uint64_t, std::shared_ptr<PlanModuleComparer>> m_companions;
};

// The tensors of module-call values (tensors, and those inside tuples, lists and dicts), named by position: "0",
// "1.0", "1.key".
NamedTensors tensorsOf(c10::ArrayRef<c10::IValue> values);

} // namespace kforge::measure
