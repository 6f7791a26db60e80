// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host-side recording for a profile run, a forward observer (runtime/observer.h) on the thread that runs the
// forwards: module scopes (module enter/exit), intercepted function calls and, on the CPU, every top-level ATen op
// execution (a RecordFunction callback). Each op is attributed to the innermost module and the function call it ran
// in. Tasks the forwards fork, and continuations that resume on other threads, are recorded by a companion per
// thread, gathered into this recorder at the end of each iteration.
#include "runtime/observer.h"

#include <kforge/functions.h>
#include <kforge/profiling.h>

#include <ATen/record_function.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::profiling {

struct FunctionCallInfo {
    std::string modulePath, function, op, provider;
};

class HostRecorder final : public runtime::ForwardObserver {
public:
    // Installs itself on this thread. timeCpuOps: record every top-level ATen op execution as a "cpu_op" KernelRecord;
    // recordShapes: with its input shapes (KernelRecord::inputShapes).
    explicit HostRecorder(bool timeCpuOps, bool recordShapes = false);
    ~HostRecorder() override;
    HostRecorder(const HostRecorder&) = delete;
    HostRecorder& operator=(const HostRecorder&) = delete;

    void beginIteration(int iteration);
    // Closes scopes a failed forward left open, here and on the threads its tasks ran on, and gathers what those
    // threads recorded into the members below.
    void endIteration();

    std::int64_t originNs() const { return m_originNs; }
    // What the forwards recorded, as records with strings of their own: built here, after the forwards, so that
    // recording an op costs no allocation and no string copy (bench/bench_profiling_cost.py). Call between
    // iterations (after endIteration()); the take* forms also empty what they return.
    std::vector<KernelRecord> records() const;
    std::vector<RangeRecord> ranges() const;
    std::vector<KernelRecord> takeRecords();
    std::vector<RangeRecord> takeRanges();
    // For the CUDA tracer (filled only while `hooks` are set): what each pushed external correlation id stands for.
    std::unordered_map<std::uint64_t, FunctionCallInfo> functionCalls;
    std::unordered_map<std::uint64_t, std::string> moduleScopes;
    std::vector<std::pair<std::int64_t, int>> iterationStarts; // (host steady ns, iteration)
    // The module and function call open on this recorder's own thread (interned; function null when none): what an
    // allocation there is attributed to (memory_recorder.h). Call on that thread only.
    std::pair<const char*, const char*> openScope() const;

    // Set by the CUDA tracer before the forwards: push/pop the external correlation ids CUPTI attaches to launches,
    // and NVTX. Companions take them as they are when they start.
    struct ScopeHooks {
        void (*pushModule)(std::uint64_t id, const char* path) = nullptr;
        void (*popModule)() = nullptr;
        void (*pushCall)(std::uint64_t id) = nullptr;
        void (*popCall)() = nullptr;
    } hooks;

    // runtime::ForwardObserver
    std::shared_ptr<runtime::ForwardObserver> companionFor(std::uint64_t thread) override;
    void moduleEnter(const char* path) override;
    void moduleExit(const char* path) override;
    void callBegin(std::uint64_t id, Function function, const char* provider, const char* op) override;
    void callDeclined(std::uint64_t id) override;
    void callEnd(std::uint64_t id) override;
    void opBegin() override;
    void opEnd(const char* name) override;
    void followModules(const std::vector<const char*>& modules) override;

private:
    // An op execution or a range as recorded: interned names (runtime::intern, never freed) and times.
    struct OpSample {
        const char* name;
        const char* modulePath;
        const char* function; // null when the op ran outside any function call
        const char* provider;
        std::uint64_t correlation;
        std::int64_t startNs, durationNs;
        std::uint64_t thread;
        int iteration;
        const char* inputShapes; // interned; null when shapes are not recorded
    };
    struct RangeSample {
        bool isFunction; // else a module scope
        const char* name;
        const char* provider;
        std::int64_t startNs, durationNs;
        std::uint64_t thread;
        int iteration;
    };
    struct Frame {
        const char* name;
        std::int64_t startNs;
        std::uint64_t id;
        const char* provider;
        bool inherited = false; // a module the thread's task was forked in: its range is recorded where it began
    };
    HostRecorder(const HostRecorder& primary, std::uint64_t thread); // a companion
    std::unique_lock<std::mutex> lockIfCompanion();
    // The work of the observer calls, with the companion's lock held.
    const char* currentModule() const;
    void exitModule();
    void endCall(std::uint64_t id);
    void closeOpenFrames();
    const char* internOpName(const char* name);

    bool m_companion = false;
    bool m_timeCpuOps;
    bool m_recordShapes = false;
    std::int64_t m_originNs;
    std::shared_ptr<std::atomic<int>> m_iteration; // the primary's, shared: a companion may outlive it
    std::uint64_t m_thread;
    std::vector<Frame> m_modules;
    std::vector<Frame> m_functions;
    int m_opDepth = 0;
    std::int64_t m_opStartNs = 0;
    const char* m_opShapes = nullptr; // of the top-level op running, when shapes are recorded
    // The function call a top-level op serves: the interposer runs inside the op's RecordFunction, so the
    // call begins and ends within the op; remember it for the op's record.
    std::optional<Frame> m_opFunction;
    std::vector<OpSample> m_ops;
    std::vector<RangeSample> m_ranges;
    // An op's name as RecordFunction gives it, by address, to its interned copy: the same op gives the same address
    // at every call, so interning costs a pointer lookup and a comparison.
    std::unordered_map<const char*, const char*> m_opNames;
    std::optional<at::CallbackHandle> m_callback;
    std::optional<runtime::ObserverScope> m_installed; // the primary, on its thread
    std::mutex m_mutex;                                // a companion's records: its thread writes, the primary gathers
    std::mutex m_companionsMutex;
    std::map<std::uint64_t, std::shared_ptr<HostRecorder>> m_companions; // by thread
};

} // namespace kforge::profiling
