// SPDX-License-Identifier: Apache-2.0
// R15: CUDA graph capture of a forward. Host code (our hooks and providers) runs once while capturing;
// replays run none of it, so a capture remembers the providers it baked in.
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/provider_sdk.h>

#include "model/torch_errors.h"
#include "model/output_digest.h"
#include "profiling/cuda_profiling.h"
#include "profiling/host_recorder.h"
#include "model/exported_runner.h"
#include "model/session_impl.h"
#include "runtime/call_guard.h"
#include "runtime/clock.h"
#include "runtime/interposer.h"
#include "runtime/string_pool.h"
#include "runtime/thread_state.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>

#ifdef KFORGE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <algorithm>
#include <optional>
#include <set>

namespace kforge {

struct ModelSession::Impl::Graph {
#ifdef KFORGE_WITH_CUDA
    at::cuda::CUDAGraph graph;
#endif
    c10::IValue output; // static: each replay rewrites it
    // What the capture's scope and call ids stand for (its graph nodes carry them; see cuda_profiling.h).
    std::unordered_map<std::uint64_t, profiling::FunctionCallInfo> functionCalls;
    std::unordered_map<std::uint64_t, std::string> moduleScopes;
};

namespace {

c10::IValue toDevice(const c10::IValue& v, const at::Device& device)
{
    if (v.isTensor())
        return v.toTensor().to(device);
    if (v.isTuple()) {
        std::vector<c10::IValue> out;
        for (const auto& e : v.toTupleRef().elements())
            out.push_back(toDevice(e, device));
        return c10::ivalue::Tuple::create(std::move(out));
    }
    return v;
}

} // namespace

bool captureIsStale(const CaptureRecord& record, const Plan& plan)
{
    std::set<CapturedProvider> now;
    for (const PlanEntry& e : plan.entries)
        if (e.enabled)
            now.insert({e.scope, e.function, ProviderRegistry::instance().create(e.provider)->displayName()});
    const std::set<CapturedProvider> then(record.providers.begin(), record.providers.end());
    return now != then;
}

void ModelSession::setDevice(const std::string& device)
{
    at::Device target(at::kCPU);
    try {
        target = at::Device(device);
    } catch (const c10::Error& e) {
        throw Error("device '" + device + "'", describeTorchError(e));
    }
    if (target.is_cuda() && (!torch::cuda::is_available() || target.index() >= int(torch::cuda::device_count())))
        throw Error("device '" + device + "'", "no such CUDA device is visible on this machine");
    if (m_impl->program)
        m_impl->program->to(target);
    else
        m_impl->module.to(target);
    for (auto& input : m_impl->inputs)
        input = toDevice(input, target);
    for (auto& [name, input] : m_impl->kwargs)
        input = toDevice(input, target);
    m_impl->device = target.str();
}

std::string ModelSession::device() const { return m_impl->device; }
std::vector<CaptureRecord> ModelSession::captures() const { return m_impl->captures; }

CaptureRecord ModelSession::capture(int warmupIterations)
{
    // Tasks run on inter-op threads, whose CUDA work goes to their own streams while this thread's stream captures:
    // the graph would lack their kernels and replay their results of the capture run (R15).
    if (m_impl->forksTasks)
        throw Error("graph capture", "the model forks tasks (torch.jit.fork), which run on other threads outside the "
                                     "capture: their kernels and providers would be missing from the graph; run it "
                                     "eagerly, or capture a model that does not fork");
#ifdef KFORGE_WITH_CUDA
    if (!torch::cuda::is_available())
        throw Error("graph capture", "needs a CUDA device, and none is visible on this machine");
    if (m_impl->device.rfind("cuda", 0) != 0)
        setDevice("cuda");
    at::NoGradGuard noGrad;
    for (int i = 0; i < warmupIterations; ++i)
        forwardDiscardingOutputs(); // cuBLAS/cuDNN workspaces and lazy loading happen outside the capture

    CaptureRecord record;
    record.id = "capture-" + std::to_string(m_impl->captures.size() + 1);
    record.timeNs = runtime::nowNs();
    auto graph = std::make_shared<Impl::Graph>();
    std::vector<CapturedProvider> installed;
    // With CUPTI, the capture's module scopes and function calls push external ids and every graph node
    // created meanwhile is mapped to them: replayed kernels then name the module that was captured.
    std::optional<profiling::HostRecorder> recorder;
    bool trackingNodes = false;
    if (profiling::CudaProfiling::available(nullptr)) {
        recorder.emplace(/*timeCpuOps=*/false);
        profiling::CudaProfiling::pushScopesFrom(*recorder);
        try {
            profiling::CudaProfiling::trackGraphNodes(true);
            trackingNodes = true;
        } catch (const Error&) {
            // another CUPTI subscriber: the capture still works, its replays stay unattributed
        }
    }
    {
        // Capture on a side stream: the default stream cannot be captured.
        c10::cuda::CUDAStreamGuard streamGuard(c10::cuda::getStreamFromPool());
        auto& thread = runtime::ThreadState::current();
        // The warm-up forwards (guardedForward) ran with the session's executor: capture the same plan.
        torch::jit::GraphOptimizerEnabledGuard optimize(m_impl->options.executor == GraphExecutor::Optimized);
        runtime::CallGuard guard(m_impl->options.keepLeftovers, runtime::intern(record.id), m_impl->forksTasks);
        thread.captureLog = &installed;
        runtime::clearLastEngineError();
        std::string error;
        try {
            // Thread-local mode: a UI thread touching CUDA meanwhile does not invalidate the capture.
            graph->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
            try {
                graph->output = runForward(*m_impl);
            } catch (...) {
                try {
                    graph->graph.capture_end(); // ends the invalidated capture so the stream is usable
                } catch (...) {
                }
                throw;
            }
            graph->graph.capture_end();
        } catch (const c10::Error& e) {
            error = runtime::lastEngineError().empty() ? describeTorchError(e) : runtime::lastEngineError();
        } catch (const std::exception& e) {
            error = runtime::lastEngineError().empty() ? describeErrorMessage(e.what()) : runtime::lastEngineError();
        } catch (...) {
            error = "the forward threw something that is not a std::exception";
        }
        thread.captureLog = nullptr;
        record.leftovers = guard.finish(error.empty() ? nullptr : &error);
        record.ok = error.empty();
        record.error = error;
    }
    if (trackingNodes)
        profiling::CudaProfiling::trackGraphNodes(false);
    if (recorder) {
        recorder->endIteration();
        recorder->hooks = {};
        graph->functionCalls = recorder->functionCalls;
        graph->moduleScopes = recorder->moduleScopes;
        recorder.reset();
    }
    std::sort(installed.begin(), installed.end());
    installed.erase(std::unique(installed.begin(), installed.end()), installed.end());
    record.providers = std::move(installed);
    m_impl->captures.push_back(record);
    m_impl->graphs.push_back(record.ok ? graph : nullptr);
    return record;
#else
    throw Error("graph capture", "this build has no CUDA support");
#endif
}

namespace {

size_t captureIndex(const ModelSession::Impl& impl, const std::string& captureId)
{
    for (size_t i = 0; i < impl.captures.size(); ++i) {
        if (impl.captures[i].id != captureId)
            continue;
        if (!impl.graphs[i])
            throw Error("replay of " + captureId, "the capture failed: " + impl.captures[i].error);
        return i;
    }
    throw Error("replay of " + captureId, "no such capture in this session");
}

} // namespace

c10::IValue replayCapture(ModelSession::Impl& impl, const std::string& captureId)
{
    const size_t i = captureIndex(impl, captureId);
#ifdef KFORGE_WITH_CUDA
    impl.graphs[i]->graph.replay();
#endif
    ++impl.captures[i].replays;
    return impl.graphs[i]->output;
}

void addCaptureTables(const ModelSession::Impl& impl, const std::string& captureId, profiling::CudaProfiling& tracer)
{
    const auto& graph = *impl.graphs[captureIndex(impl, captureId)];
    tracer.addHostTables(graph.functionCalls, graph.moduleScopes);
}

std::vector<TensorDigest> ModelSession::replay(const std::string& captureId)
{
    return digestOutput(replayCapture(*m_impl, captureId));
}

} // namespace kforge
