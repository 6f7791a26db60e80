// SPDX-License-Identifier: Apache-2.0
#include "profiling/host_recorder.h"

#include "profiling/op_input_shapes.h"

#include "runtime/clock.h"
#include "runtime/string_pool.h"
#include "runtime/thread_state.h"

#include <cstring>
#include <iterator>

namespace kforge::profiling {
namespace {

// The op whose start the observers are being told of, for a recorder that records input shapes: read only by the
// recorder whose op is top-level (most ops are nested, and their shapes are never built).
thread_local const at::RecordFunction* tlsStartingOp = nullptr;

std::unique_ptr<at::ObserverContext> onOpStart(const at::RecordFunction&)
{
    runtime::notifyOpBegin();
    return nullptr;
}

// The same, with the op at hand for the recorder (registered only when shapes are recorded: every op pays for it).
std::unique_ptr<at::ObserverContext> onOpStartWithInputs(const at::RecordFunction& fn)
{
    tlsStartingOp = &fn;
    runtime::notifyOpBegin();
    tlsStartingOp = nullptr;
    return nullptr;
}

void onOpEnd(const at::RecordFunction& fn, at::ObserverContext*) { runtime::notifyOpEnd(fn.name()); }

template <typename T> void append(std::vector<T>& to, std::vector<T>& from)
{
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
    from.clear();
}

} // namespace

HostRecorder::HostRecorder(bool timeCpuOps, bool recordShapes)
    : m_timeCpuOps(timeCpuOps), m_recordShapes(timeCpuOps && recordShapes), m_originNs(runtime::nowNs()),
      m_iteration(std::make_shared<std::atomic<int>>(0)), m_thread(runtime::ThreadState::current().id())
{
    m_installed.emplace(*this);
    // A thread-local callback: LibTorch carries it into the tasks the forwards fork, where it reaches the companions.
    if (m_timeCpuOps)
        m_callback = at::addThreadLocalCallback(
            at::RecordFunctionCallback(m_recordShapes ? &onOpStartWithInputs : &onOpStart, &onOpEnd)
                .needsInputs(m_recordShapes)
                .scopes({at::RecordScope::FUNCTION}));
}

HostRecorder::HostRecorder(const HostRecorder& primary, std::uint64_t thread)
    : hooks(primary.hooks), m_companion(true), m_timeCpuOps(primary.m_timeCpuOps),
      m_recordShapes(primary.m_recordShapes), m_originNs(primary.m_originNs), m_iteration(primary.m_iteration),
      m_thread(thread)
{
}

HostRecorder::~HostRecorder()
{
    if (m_callback)
        at::removeCallback(*m_callback);
}

std::shared_ptr<runtime::ForwardObserver> HostRecorder::companionFor(std::uint64_t thread)
{
    std::lock_guard lock(m_companionsMutex);
    auto& companion = m_companions[thread];
    if (!companion)
        companion = std::shared_ptr<HostRecorder>(new HostRecorder(*this, thread));
    return companion;
}

std::unique_lock<std::mutex> HostRecorder::lockIfCompanion()
{
    return m_companion ? std::unique_lock(m_mutex) : std::unique_lock<std::mutex>();
}

void HostRecorder::beginIteration(int iteration)
{
    m_iteration->store(iteration, std::memory_order_relaxed);
    m_opDepth = 0;
    iterationStarts.emplace_back(runtime::nowNs(), iteration);
}

void HostRecorder::closeOpenFrames()
{
    while (!m_modules.empty())
        exitModule();
    while (!m_functions.empty())
        endCall(m_functions.back().id);
    m_opDepth = 0;
}

void HostRecorder::endIteration()
{
    closeOpenFrames();
    std::lock_guard lock(m_companionsMutex);
    for (auto& [thread, companion] : m_companions) {
        std::lock_guard records(companion->m_mutex);
        companion->closeOpenFrames();
        append(m_ops, companion->m_ops);
        append(m_ranges, companion->m_ranges);
        functionCalls.merge(companion->functionCalls);
        moduleScopes.merge(companion->moduleScopes);
    }
}

const char* HostRecorder::currentModule() const { return m_modules.empty() ? "" : m_modules.back().name; }

std::pair<const char*, const char*> HostRecorder::openScope() const
{
    return {currentModule(), m_functions.empty() ? nullptr : m_functions.back().name};
}

void HostRecorder::moduleEnter(const char* path)
{
    const auto lock = lockIfCompanion();
    const std::uint64_t id = runtime::nextObservationId();
    m_modules.push_back({path, runtime::nowNs(), id, nullptr});
    if (hooks.pushModule) {
        moduleScopes.emplace(id, path);
        hooks.pushModule(id, path);
    }
}

void HostRecorder::moduleExit(const char* /*path*/)
{
    const auto lock = lockIfCompanion();
    exitModule();
}

void HostRecorder::exitModule()
{
    if (m_modules.empty())
        return; // a continuation leaving a module its forward entered on another thread
    const Frame f = m_modules.back();
    m_modules.pop_back();
    if (f.inherited)
        return;
    if (hooks.popModule)
        hooks.popModule();
    m_ranges.push_back({false, f.name, nullptr, f.startNs - m_originNs, runtime::nowNs() - f.startNs, m_thread,
                        m_iteration->load(std::memory_order_relaxed)});
}

void HostRecorder::followModules(const std::vector<const char*>& modules)
{
    const auto lock = lockIfCompanion();
    closeOpenFrames(); // what an earlier task on this thread left open
    for (const char* path : modules)
        m_modules.push_back({path, runtime::nowNs(), 0, nullptr, true});
}

void HostRecorder::callBegin(std::uint64_t id, Function function, const char* provider, const char* op)
{
    const auto lock = lockIfCompanion();
    m_functions.push_back({functionName(function).data(), runtime::nowNs(), id, provider});
    if (m_opDepth > 0 && !m_opFunction)
        m_opFunction = m_functions.back();
    if (hooks.pushCall) {
        hooks.pushCall(id);
        functionCalls.emplace(
            id, FunctionCallInfo{currentModule(), std::string(functionName(function)), op ? op : "", provider});
    }
}

void HostRecorder::callDeclined(std::uint64_t id)
{
    static const char* const original = "original";
    const auto lock = lockIfCompanion();
    if (!m_functions.empty() && m_functions.back().id == id)
        m_functions.back().provider = original;
    if (m_opFunction && m_opFunction->id == id)
        m_opFunction->provider = original;
    if (const auto it = functionCalls.find(id); it != functionCalls.end())
        it->second.provider = original;
}

void HostRecorder::callEnd(std::uint64_t id)
{
    const auto lock = lockIfCompanion();
    endCall(id);
}

void HostRecorder::endCall(std::uint64_t id)
{
    const int iteration = m_iteration->load(std::memory_order_relaxed);
    while (!m_functions.empty()) {
        const Frame f = m_functions.back();
        m_functions.pop_back();
        if (hooks.popCall)
            hooks.popCall();
        m_ranges.push_back(
            {true, f.name, f.provider, f.startNs - m_originNs, runtime::nowNs() - f.startNs, m_thread, iteration});
        if (f.id == id)
            return;
    }
}

void HostRecorder::opBegin()
{
    if (!m_timeCpuOps)
        return;
    const auto lock = lockIfCompanion();
    if (m_opDepth++ > 0)
        return;
    m_opShapes = m_recordShapes && tlsStartingOp ? runtime::intern(opInputShapes(*tlsStartingOp)) : nullptr;
    m_opStartNs = runtime::nowNs();
    m_opFunction.reset();
    if (!m_functions.empty())
        m_opFunction = m_functions.back();
}

void HostRecorder::opEnd(const char* name)
{
    if (!m_timeCpuOps)
        return;
    const auto lock = lockIfCompanion();
    if (m_opDepth == 0 || --m_opDepth > 0)
        return; // only top-level op executions: nested ops' time is inside their parent's
    if (std::string_view(name).rfind("kforge::", 0) == 0)
        return; // our module enter/exit ops are bookkeeping, not work
    const std::int64_t endNs = runtime::nowNs();
    m_ops.push_back({internOpName(name), currentModule(), m_opFunction ? m_opFunction->name : nullptr,
                     m_opFunction ? m_opFunction->provider : nullptr, m_opFunction ? m_opFunction->id : 0,
                     m_opStartNs - m_originNs, endNs - m_opStartNs, m_thread,
                     m_iteration->load(std::memory_order_relaxed), m_opShapes});
}

const char* HostRecorder::internOpName(const char* name)
{
    // An op named by a string of its own (not its schema) may come at another address each time: keep the map small.
    if (m_opNames.size() > 4096)
        m_opNames.clear();
    auto [it, inserted] = m_opNames.try_emplace(name, nullptr);
    if (inserted || std::strcmp(it->second, name) != 0) // the address may now hold another name
        it->second = runtime::intern(name);
    return it->second;
}

std::vector<KernelRecord> HostRecorder::records() const
{
    std::vector<KernelRecord> out;
    out.reserve(m_ops.size());
    for (const OpSample& op : m_ops) {
        KernelRecord& r = out.emplace_back();
        r.kind = "cpu_op";
        r.name = op.name;
        r.op = op.name;
        r.modulePath = op.modulePath;
        if (op.function) {
            r.function = op.function;
            r.provider = op.provider;
            r.correlation = op.correlation;
        }
        r.startNs = op.startNs;
        r.durationNs = op.durationNs;
        r.thread = op.thread;
        r.iteration = op.iteration;
        if (op.inputShapes)
            r.inputShapes = op.inputShapes;
    }
    return out;
}

std::vector<RangeRecord> HostRecorder::ranges() const
{
    std::vector<RangeRecord> out;
    out.reserve(m_ranges.size());
    for (const RangeSample& range : m_ranges)
        out.push_back({range.isFunction ? "function" : "module", range.name, range.provider ? range.provider : "",
                       range.startNs, range.durationNs, range.thread, range.iteration});
    return out;
}

std::vector<KernelRecord> HostRecorder::takeRecords()
{
    std::vector<KernelRecord> out = records();
    m_ops.clear();
    return out;
}

std::vector<RangeRecord> HostRecorder::takeRanges()
{
    std::vector<RangeRecord> out = ranges();
    m_ranges.clear();
    return out;
}

} // namespace kforge::profiling
