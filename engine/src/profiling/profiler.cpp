// SPDX-License-Identifier: Apache-2.0
// A profile run: warm-up forwards, then measured forwards recorded on the host (module scopes, function
// calls, CPU op executions) and, on a CUDA device, traced with CUPTI; everything attributed to module path,
// function, op and provider.
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/profiling.h>
#include <kforge/runtime.h>
#include <kforge/stalls.h>
#include <kforge/version.h>

#include "model/output_digest.h"
#include "model/session_impl.h"
#include "profiling/cuda_profiling.h"
#include "profiling/host_recorder.h"
#include "profiling/memory_recorder.h"
#include "runtime/clock.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>

namespace kforge {
namespace {

// The declines of the measured forwards: the runtime's counts less those of the warm-up.
std::vector<EntryDeclines> measuredDeclines(const std::vector<EntryDeclines>& before, std::vector<EntryDeclines> after)
{
    std::vector<EntryDeclines> out;
    for (EntryDeclines& d : after) {
        for (const EntryDeclines& b : before)
            if (b.entry == d.entry)
                d.calls -= b.calls;
        if (d.calls > 0)
            out.push_back(std::move(d));
    }
    return out;
}

constexpr int64_t kMaxOutputValues = int64_t{1} << 22;

void collectValues(const c10::IValue& v, std::vector<std::vector<float>>& out)
{
    if (v.isTensor()) {
        const at::Tensor t = v.toTensor().detach().reshape({-1});
        const at::Tensor head = t.narrow(0, 0, std::min<int64_t>(t.numel(), kMaxOutputValues));
        const at::Tensor f = head.to(at::kCPU).to(at::kFloat).contiguous();
        out.emplace_back(f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
    } else if (v.isTuple()) {
        for (const auto& e : v.toTupleRef().elements())
            collectValues(e, out);
    } else if (v.isList()) {
        for (const auto& e : v.toListRef())
            collectValues(e, out);
    } else if (v.isGenericDict()) {
        for (const auto& item : v.toGenericDict())
            collectValues(item.value(), out);
    }
}

} // namespace

ProfileRun profile(ModelSession& session, const ProfileOptions& options)
{
    const std::string where = "profile of '" + session.displayName() + "'";
    if (options.device != "cpu" && options.device != "cuda")
        throw Error(where, "unknown device '" + options.device + "' (cpu or cuda)");
    if (options.iterations < 1 || options.warmupIterations < 0)
        throw Error(where, "needs at least one measured iteration and a non-negative warm-up");
    const bool cuda = options.device == "cuda";
    const bool replay = !options.replayCapture.empty();
    if (replay && !cuda)
        throw Error(where, "profiling the replays of a graph capture needs the cuda device");
    std::unique_ptr<profiling::CudaProfiling> tracer;
    if (cuda) {
        std::string why;
        if (!profiling::CudaProfiling::available(&why))
            throw Error(where, "cannot trace CUDA kernels here: " + why + " (use --device cpu)");
        if (session.device().rfind("cuda", 0) != 0)
            session.setDevice("cuda");
    } else if (session.device() != "cpu") {
        session.setDevice("cpu");
    }

    ProfileRun run;
    run.device = options.device;
    run.deviceName = cuda ? profiling::CudaProfiling::deviceName() : "CPU (ATen op executions)";
    run.torchVersion = TORCH_VERSION;
    run.cuptiVersion = cuda ? profiling::CudaProfiling::cuptiVersion() : "";
    run.kforgeVersion = KFORGE_VERSION_STRING;
    run.graphExecutor = session.forwardProgram();
    run.intraOpThreads = intraOpThreadCount();
    run.model = session.displayName();
    run.inputs = session.describeInputs();
    run.warmupIterations = options.warmupIterations;
    run.iterations = options.iterations;
    run.usedPlan = options.usePlan;
    run.plan = options.plan;
    run.modules = session.modules();

    std::unique_ptr<KernelProviderRuntime> runtime;
    if (options.usePlan) {
        runtime = std::make_unique<KernelProviderRuntime>(session, options.plan);
        runtime->activate();
    }
    const int total = options.warmupIterations + options.iterations;
    const auto progress = [&](int done) { return keepGoing(options.progress, done, total); };
    const auto runOnce = [&] {
        return replay ? replayCapture(sessionImpl(session), options.replayCapture)
                      : guardedForward(sessionImpl(session));
    };
    for (int i = 0; i < options.warmupIterations; ++i) {
        runOnce();
        if (!progress(i + 1)) {
            run.cancelled = true;
            return run;
        }
    }

    const std::vector<EntryDeclines> declinedInWarmup = runtime ? runtime->declines() : std::vector<EntryDeclines>{};
    c10::IValue output;
    {
        profiling::HostRecorder recorder(/*timeCpuOps=*/!cuda, options.recordShapes);
        std::optional<profiling::MemoryRecorder> memory;
        if (options.recordMemory)
            memory.emplace([&recorder] { return recorder.openScope(); }, /*tapCpuAllocator=*/!cuda);
        if (cuda) {
            tracer = std::make_unique<profiling::CudaProfiling>(recorder, options.recordMemory);
            if (replay)
                addCaptureTables(sessionImpl(session), options.replayCapture, *tracer);
        }
        const int64_t start = runtime::nowNs();
        int64_t snapshotNs = 0; // building partial runs, left out of the wall time
        int64_t lastSnapshot = 0;
        for (int i = 0; i < options.iterations; ++i) {
            recorder.beginIteration(i);
            if (memory)
                memory->setIteration(i);
            try {
                output = runOnce();
            } catch (...) {
                recorder.endIteration();
                throw;
            }
            recorder.endIteration();
            if (!progress(options.warmupIterations + i + 1)) {
                run.cancelled = true;
                run.iterations = i + 1;
                break;
            }
            const int64_t now = runtime::nowNs();
            if (options.partial && !cuda && i + 1 < options.iterations &&
                (i == 0 || now - lastSnapshot >= int64_t(options.partialEveryMs) * 1'000'000)) {
                ProfileRun snapshot = run;
                snapshot.inProgress = true;
                snapshot.iterations = i + 1;
                snapshot.records = recorder.records();
                snapshot.ranges = recorder.ranges();
                snapshot.wallNs = now - start - snapshotNs;
                options.partial(snapshot);
                lastSnapshot = runtime::nowNs();
                snapshotNs += lastSnapshot - now;
            }
        }
        if (tracer)
            tracer->synchronize();
        run.wallNs = runtime::nowNs() - start - snapshotNs;
        const MachineState machine = currentMachineState(run.intraOpThreads);
        run.cores = machine.cores;
        run.loadAverage = machine.loadAverage;
        if (tracer) {
            run.records = tracer->finish(run.droppedRecords);
        } else {
            run.records = recorder.takeRecords();
        }
        run.ranges = recorder.takeRanges();
        if (memory) {
            run.memory = memory->take();
            for (MemoryRecord& event : run.memory) // on the clock of the ranges and records
                event.timeNs -= recorder.originNs();
            if (tracer) { // the driver's allocations beside the caching allocator's (on that clock already)
                std::vector<MemoryRecord> driver = tracer->takeDeviceMemory();
                run.memory.insert(run.memory.end(), driver.begin(), driver.end());
                std::stable_sort(run.memory.begin(), run.memory.end(),
                                 [](const MemoryRecord& a, const MemoryRecord& b) { return a.timeNs < b.timeNs; });
            }
        }
    }
    if (runtime)
        run.declines = measuredDeclines(declinedInWarmup, runtime->declines());
    run.outputs = digestOutput(output);
    collectValues(output, run.outputValues);
    return run;
}

} // namespace kforge
