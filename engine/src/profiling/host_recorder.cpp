// SPDX-License-Identifier: Apache-2.0
#include "profiling/host_recorder.h"

#include "runtime/clock.h"
#include "runtime/thread_state.h"

#include <atomic>

namespace kforge::profiling {
namespace {

thread_local HostRecorder* tlsRecorder = nullptr;

// Scope and call ids are unique in the process: a graph captured under one recorder is replayed and
// attributed under another, and CUPTI's records carry the ids of both.
std::atomic<std::uint64_t> nextScopeId{1};

std::unique_ptr<at::ObserverContext> onOpStart(const at::RecordFunction&)
{
    if (HostRecorder* r = tlsRecorder)
        r->opBegin();
    return nullptr;
}

void onOpEnd(const at::RecordFunction& fn, at::ObserverContext*)
{
    if (HostRecorder* r = tlsRecorder)
        r->opEnd(fn.name());
}

} // namespace

std::atomic<int> HostRecorder::s_live{0};

HostRecorder::HostRecorder(bool timeCpuOps)
    : m_timeCpuOps(timeCpuOps), m_originNs(runtime::nowNs()), m_thread(runtime::ThreadState::current().id())
{
    tlsRecorder = this;
    s_live.fetch_add(1, std::memory_order_relaxed);
    if (m_timeCpuOps)
        m_callback = at::addThreadLocalCallback(
            at::RecordFunctionCallback(&onOpStart, &onOpEnd).scopes({at::RecordScope::FUNCTION}));
}

HostRecorder::~HostRecorder()
{
    if (m_callback)
        at::removeCallback(*m_callback);
    tlsRecorder = nullptr;
    s_live.fetch_sub(1, std::memory_order_relaxed);
}

HostRecorder* HostRecorder::onThisThread() { return tlsRecorder; }

void HostRecorder::beginIteration(int iteration)
{
    m_iteration = iteration;
    m_opDepth = 0;
    iterationStarts.emplace_back(runtime::nowNs(), iteration);
}

void HostRecorder::endIteration()
{
    while (!m_modules.empty())
        moduleExit(m_modules.back().name);
    while (!m_functions.empty())
        functionCallEnd(m_functions.back().id);
}

const char* HostRecorder::currentModule() const { return m_modules.empty() ? "" : m_modules.back().name; }

void HostRecorder::moduleEnter(const char* path)
{
    const std::uint64_t id = nextScopeId.fetch_add(1, std::memory_order_relaxed);
    m_modules.push_back({path, runtime::nowNs(), id, Function::Gelu, nullptr, nullptr});
    moduleScopes.emplace(id, path);
    if (hooks.pushModule)
        hooks.pushModule(id, path);
}

void HostRecorder::moduleExit(const char* path)
{
    if (m_modules.empty())
        return;
    const Frame f = m_modules.back();
    m_modules.pop_back();
    if (hooks.popModule)
        hooks.popModule();
    ranges.push_back(
        {"module", f.name, "", f.startNs - m_originNs, runtime::nowNs() - f.startNs, m_thread, m_iteration});
}

std::uint64_t HostRecorder::functionCallBegin(Function function, const char* provider, const char* op)
{
    const std::uint64_t id = nextScopeId.fetch_add(1, std::memory_order_relaxed);
    m_functions.push_back({functionName(function).data(), runtime::nowNs(), id, function, provider, op});
    if (m_opDepth > 0 && !m_opFunction)
        m_opFunction = m_functions.back();
    if (hooks.pushCall)
        hooks.pushCall(id);
    functionCalls.emplace(id, FunctionCallInfo{currentModule(), std::string(functionName(function)), op, provider});
    return id;
}

void HostRecorder::functionCallDeclined(std::uint64_t id)
{
    static const char* const original = "original";
    if (!m_functions.empty() && m_functions.back().id == id)
        m_functions.back().provider = original;
    if (m_opFunction && m_opFunction->id == id)
        m_opFunction->provider = original;
    if (const auto it = functionCalls.find(id); it != functionCalls.end())
        it->second.provider = original;
}

void HostRecorder::functionCallEnd(std::uint64_t id)
{
    while (!m_functions.empty()) {
        const Frame f = m_functions.back();
        m_functions.pop_back();
        if (hooks.popCall)
            hooks.popCall();
        ranges.push_back({"function", f.name, f.provider, f.startNs - m_originNs, runtime::nowNs() - f.startNs,
                          m_thread, m_iteration});
        if (f.id == id)
            return;
    }
}

void HostRecorder::opBegin()
{
    if (m_opDepth++ > 0)
        return;
    m_opStartNs = runtime::nowNs();
    m_opFunction.reset();
    if (!m_functions.empty())
        m_opFunction = m_functions.back();
}

void HostRecorder::opEnd(const char* name)
{
    if (m_opDepth == 0 || --m_opDepth > 0)
        return; // only top-level op executions: nested ops' time is inside their parent's
    if (std::string_view(name).rfind("kforge::", 0) == 0)
        return; // our module enter/exit ops are bookkeeping, not work
    KernelRecord r;
    r.kind = "cpu_op";
    r.name = name;
    r.op = name;
    r.modulePath = currentModule();
    if (m_opFunction) {
        r.function = m_opFunction->name;
        r.provider = m_opFunction->provider;
        r.correlation = m_opFunction->id;
    }
    r.startNs = m_opStartNs - m_originNs;
    r.durationNs = runtime::nowNs() - m_opStartNs;
    r.thread = m_thread;
    r.iteration = m_iteration;
    records.push_back(std::move(r));
}

} // namespace kforge::profiling
