// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host-side recording for a profile run, on the thread that runs the forwards: module scopes (from the
// module enter/exit ops), intercepted function calls (from the interposer) and, on the CPU, every top-level
// ATen op execution (a RecordFunction observer). Each op is attributed to the innermost module and the
// function call it ran in. Hooks reach it through one thread-local pointer: threads that do not profile
// pay one TLS load.
#include <kforge/functions.h>
#include <kforge/profiling.h>

#include <ATen/record_function.h>

#include <optional>

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::profiling {

struct FunctionCallInfo {
    std::string modulePath, function, op, provider;
};

class HostRecorder {
public:
    // timeCpuOps: record every top-level ATen op execution as a "cpu_op" KernelRecord.
    explicit HostRecorder(bool timeCpuOps);
    ~HostRecorder();
    HostRecorder(const HostRecorder&) = delete;
    HostRecorder& operator=(const HostRecorder&) = delete;

    static HostRecorder* onThisThread();
    // Whether a recorder exists on any thread: one relaxed load, checked before the thread-local lookup on paths
    // every instrumented module runs (runtime/hook_ops.cpp).
    static bool anyLive() { return s_live.load(std::memory_order_relaxed) > 0; }

    void beginIteration(int iteration);
    void endIteration(); // closes scopes a failed forward left open

    void moduleEnter(const char* path);
    void moduleExit(const char* path);
    std::uint64_t functionCallBegin(Function function, const char* provider, const char* op);
    void functionCallEnd(std::uint64_t id);
    // The provider declined the call: the original served it, and the records say so.
    void functionCallDeclined(std::uint64_t id);
    void opBegin();
    void opEnd(const char* name);

    std::int64_t originNs() const { return m_originNs; }
    std::vector<KernelRecord> records;
    std::vector<RangeRecord> ranges;
    // For the CUDA tracer: what each pushed external correlation id stands for.
    std::unordered_map<std::uint64_t, FunctionCallInfo> functionCalls;
    std::unordered_map<std::uint64_t, std::string> moduleScopes;
    std::vector<std::pair<std::int64_t, int>> iterationStarts; // (host steady ns, iteration)

    // Set by the CUDA tracer: push/pop the external correlation ids CUPTI attaches to launches, and NVTX.
    struct ScopeHooks {
        void (*pushModule)(std::uint64_t id, const char* path) = nullptr;
        void (*popModule)() = nullptr;
        void (*pushCall)(std::uint64_t id) = nullptr;
        void (*popCall)() = nullptr;
    } hooks;

private:
    static std::atomic<int> s_live;
    struct Frame {
        const char* name;
        std::int64_t startNs;
        std::uint64_t id;
        Function function;
        const char* provider;
        const char* op;
    };
    const char* currentModule() const;

    bool m_timeCpuOps;
    std::int64_t m_originNs;
    int m_iteration = 0;
    std::uint64_t m_thread;
    std::vector<Frame> m_modules;
    std::vector<Frame> m_functions;
    int m_opDepth = 0;
    std::int64_t m_opStartNs = 0;
    // The function call a top-level op serves: the interposer runs inside the op's RecordFunction, so the
    // call begins and ends within the op; remember it for the op's record.
    std::optional<Frame> m_opFunction;
    std::optional<at::CallbackHandle> m_callback;
};

// RAII: one intercepted function call (the interposer uses it while a recorder is on this thread).
class FunctionCallScope {
public:
    FunctionCallScope(HostRecorder* recorder, Function function, const char* provider, const char* op)
        : m_recorder(recorder), m_id(recorder ? recorder->functionCallBegin(function, provider, op) : 0)
    {
    }
    ~FunctionCallScope()
    {
        if (m_recorder)
            m_recorder->functionCallEnd(m_id);
    }
    void declined()
    {
        if (m_recorder)
            m_recorder->functionCallDeclined(m_id);
    }
    FunctionCallScope(const FunctionCallScope&) = delete;
    FunctionCallScope& operator=(const FunctionCallScope&) = delete;

private:
    HostRecorder* m_recorder;
    std::uint64_t m_id;
};

} // namespace kforge::profiling
