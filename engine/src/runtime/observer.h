// SPDX-License-Identifier: Apache-2.0
#pragma once
// Who watches a forward, as the runtime sees them. Observers installed on a thread (ObserverScope) receive its
// module enters and exits, its intercepted function calls and their arguments; the runtime names none of them (the
// profiler's HostRecorder and the optimizer's SampleCapture are two), as ATen's RecordFunction lets the profiler
// observe ops without the dispatcher naming it. A forward's forked tasks, and its continuation after a wait that
// resumed on another thread, are observed there by each observer's companion for that thread (task_context.h).
//
// Cost when nobody observes: one relaxed load (anyObserving). The event stream and the stepper are the runtime's
// own (R13, R14) and stay outside this interface.
#include <kforge/functions.h>

#include <ATen/core/stack.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace c10 {
class OperatorHandle;
}

namespace kforge::runtime {

class ForwardObserver {
public:
    virtual ~ForwardObserver() = default;

    // The observer for a task or continuation of an observed forward that runs on another thread (`thread`:
    // ThreadState::id). Called on that thread, possibly on several threads at once, while the observer is
    // installed; the same companion for the same thread. Null: that thread is not observed.
    virtual std::shared_ptr<ForwardObserver> companionFor(std::uint64_t /*thread*/) { return nullptr; }

    virtual void moduleEnter(const char* /*path*/) {}
    virtual void moduleExit(const char* /*path*/) {}
    // What a module call takes and returns, told just after its moduleEnter and just before its moduleExit to
    // observers that want them (kforge verify compares them): TorchScript passes the forward's arguments and return
    // values, a .pt2 program the values a module call reads that were made before it and the values it makes that are
    // read after it. They are the forward's own values: clone what is kept.
    virtual bool wantsModuleOutputs() const { return false; }
    virtual void moduleInputs(const char* /*path*/, c10::ArrayRef<c10::IValue> /*inputs*/) {}
    virtual void moduleOutputs(const char* /*path*/, c10::ArrayRef<c10::IValue> /*outputs*/) {}
    // An intercepted call of `function`, served by `provider` ("original" when none is in effect), for ATen op
    // `op`. `id` is unique in the process (nextObservationId). A declined call ran the original after all.
    virtual void callBegin(std::uint64_t /*id*/, Function /*function*/, const char* /*provider*/, const char* /*op*/) {}
    virtual void callDeclined(std::uint64_t /*id*/) {}
    virtual void callEnd(std::uint64_t /*id*/) {}
    // The arguments of an intercepted call in its function's normal form: the last `argumentCount` values of the
    // stack. Only observers that want them get them (converting costs).
    virtual bool wantsSamples() const { return false; }
    virtual void sample(Function /*function*/, const torch::jit::Stack& /*stack*/, size_t /*argumentCount*/) {}
    // A call in a Variant form (another op's schema, passed to providers as is: every interpolate mode but one): its
    // arguments as that op takes them. Re-validation checks a provider on these too, since it serves them.
    virtual void sampleVariant(Function /*function*/, const c10::OperatorHandle& /*op*/,
                               const torch::jit::Stack& /*stack*/, size_t /*argumentCount*/)
    {
    }
    // This thread now runs a task forked inside `modules` (outermost first), or a forward's continuation after a wait
    // there: what it runs outside any module call of its own is in the innermost of them. Called on companions, each
    // time the thread starts following another task snapshot (task_context.h).
    virtual void followModules(const std::vector<const char*>& /*modules*/) {}
    // Top-level ATen op executions, for observers that time them: delivered by a RecordFunction callback of the
    // observer's own (notifyOpBegin/notifyOpEnd), which LibTorch carries into the forward's tasks.
    virtual void opBegin() {}
    virtual void opEnd(const char* /*name*/) {}
};

// The observers of one thread's forwards, innermost scope last.
struct ObserverList {
    std::vector<std::shared_ptr<ForwardObserver>> observers;
    bool wantsSamples = false;
    bool wantsModuleOutputs = false;
    bool empty() const { return observers.empty(); }
    void refresh(); // wantsSamples and wantsModuleOutputs from the observers
};

// Installs `observer` on this thread for the scope's lifetime (it must outlive the scope). Scopes nest.
class ObserverScope {
public:
    explicit ObserverScope(ForwardObserver& observer);
    ~ObserverScope();
    ObserverScope(const ObserverScope&) = delete;
    ObserverScope& operator=(const ObserverScope&) = delete;

private:
    ForwardObserver& m_observer;
};

namespace observing {
extern std::atomic<int> gScopes;
}

// Whether an observer is installed on any thread: one relaxed load on paths every instrumented module runs.
inline bool anyObserving() { return observing::gScopes.load(std::memory_order_relaxed) > 0; }
// The observers of this thread: its own, or its companions while it runs a task of an observed forward.
const ObserverList& observersOnThisThread();
// The same, to replace while the thread follows a task snapshot (task_context.cpp). Owner thread only.
ObserverList& threadObservers();
// Ids of observed calls and module scopes, unique in the process: a graph captured under one profile is replayed
// and attributed under another, and CUPTI's records carry the ids of both.
std::uint64_t nextObservationId();

// For an observer's RecordFunction callback: the op starts or ends on this thread.
void notifyOpBegin();
void notifyOpEnd(const char* name);

// RAII: one intercepted (or decomposed) function call, told to this thread's observers. Inline where nobody
// observes: every interposed call makes one (bench_interposer --instructions).
class ObservedCall {
public:
    // `observers`: this thread's (observersOnThisThread), or null when nobody observes the call.
    ObservedCall(const ObserverList* observers, Function function, const char* provider, const char* op)
        : m_list(observers && !observers->empty() ? observers : nullptr)
    {
        if (m_list)
            begin(function, provider, op);
    }
    ~ObservedCall()
    {
        if (m_list)
            end();
    }
    void declined()
    {
        if (m_list)
            tellDeclined();
    }
    ObservedCall(const ObservedCall&) = delete;
    ObservedCall& operator=(const ObservedCall&) = delete;

private:
    void begin(Function function, const char* provider, const char* op);
    void end();
    void tellDeclined();

    const ObserverList* m_list;
    std::uint64_t m_id = 0;
};

} // namespace kforge::runtime
