// The interposer (R1): a thread-local mode key sees each replaceable op before Autograd and before
// composite decomposition. With nothing in effect it redispatches below itself; providers and originals
// run with the key excluded, so nested ops reach the real kernels.
#include "runtime/interposer.h"

#include "optimizer/sample_capture.h"
#include "profiling/host_recorder.h"
#include "runtime/event_sink.h"
#include "runtime/mode_key.h"
#include "runtime/runtime_core.h"
#include "runtime/step_points.h"
#include "runtime/thread_state.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <utility>

namespace kforge::runtime {
namespace {

thread_local std::string tlsLastEngineError;
thread_local int tlsProbeHits = 0; // counted by the self-test

[[noreturn]] void rethrowWithContext(const ThreadState& thread, Function f, const ProviderFunction& fn,
                                     const std::string& why)
{
    const char* scope = thread.scopeOf(f);
    tlsLastEngineError = "function '" + std::string(functionName(f)) + "', provider '" + fn.providerName +
                         "', module '" + (scope ? scope : "") + "': " + why;
    TORCH_CHECK(false, tlsLastEngineError);
}

void observeOriginal(ThreadState& thread, Function f)
{
    ++tlsProbeHits;
    if (events::recording())
        events::emit(EventKind::OriginalCall, thread.scopeOf(f), functionName(f).data(), "original", 0);
    stepping::maybePause(PausePoint::Kind::FunctionCall, thread.scopeOf(f), functionName(f).data());
}

template <int I> void interposed(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack)
{
    constexpr auto f = static_cast<Function>(I);
    ThreadState& thread = ThreadState::current();
    if (thread.hasPendingUnwinds()) // a runtime deactivated by another thread during this forward (R12)
        applyPendingUnwinds(thread);
    // Alive while we call it: only this thread releases what its table holds while it is inside a forward.
    const ProviderFunction* fn = thread.inEffect(f);
    c10::impl::ExcludeDispatchKeyGuard noReentry(kModeKey);
    if (thread.observe)
        if (auto* samples = optimizer::SampleCapture::onThisThread())
            samples->observe(f, *stack, op.schema().arguments().size());
    profiling::HostRecorder* recorder = thread.observe ? profiling::HostRecorder::onThisThread() : nullptr;
    profiling::FunctionCallScope call(recorder, f, nameOf(fn), recorder ? op.schema().name().c_str() : nullptr);
    if (!fn) {
        if (thread.observe)
            observeOriginal(thread, f);
        else if (!thread.anyInEffect())
            c10::impl::tls_set_dispatch_key_included(kModeKey, false); // left on after a remote unwind
        op.redispatchBoxed(keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kModeKey), stack);
        return;
    }
    if (events::recording())
        events::emit(EventKind::ProviderCall, thread.scopeOf(f), fn->functionName, fn->providerName, 0);
    stepping::maybePause(PausePoint::Kind::FunctionCall, thread.scopeOf(f), fn->functionName);
    try {
        fn->provider->call(op, *stack);
    } catch (const c10::Error& e) {
        rethrowWithContext(thread, f, *fn, e.what_without_backtrace());
    } catch (const std::exception& e) {
        rethrowWithContext(thread, f, *fn, e.what());
    }
}

template <int I> torch::CppFunction kernelFor() { return torch::CppFunction::makeFromBoxedFunction<&interposed<I>>(); }
template <int... I> torch::CppFunction kernelAt(int index, std::integer_sequence<int, I...>)
{
    torch::CppFunction out = torch::CppFunction::makeFallthrough();
    ((index == I ? (void)(out = kernelFor<I>()) : (void)0), ...);
    return out;
}

std::string qualified(const OpOverload& o)
{
    return std::string(o.name) + (o.overload.empty() ? "" : "." + std::string(o.overload));
}

void selfTest(InterposerReport& report)
{
    // A probe: with the key included and observation on, aten::relu must reach our kernel exactly once
    // and still produce the original's result.
    ThreadState& thread = ThreadState::current();
    const bool wasObserving = std::exchange(thread.observe, true);
    tlsProbeHits = 0;
    at::Tensor out;
    {
        c10::impl::IncludeDispatchKeyGuard include(kModeKey);
        out = at::relu(at::tensor({-1.0f, 2.0f}));
    }
    thread.observe = wasObserving;
    const bool valueOk = out.defined() && out[0].item<float>() == 0.0f && out[1].item<float>() == 2.0f;
    report.selfTestPassed = tlsProbeHits == 1 && valueOk;
    report.selfTestMessage = report.selfTestPassed
                                 ? "probe op aten::relu intercepted once, original result intact"
                                 : "probe op aten::relu reached the interposer " + std::to_string(tlsProbeHits) +
                                       " times (expected 1)" + (valueOk ? "" : ", wrong result");
}

InterposerReport registerOnce()
{
    InterposerReport report;
    report.dispatchKey = c10::toString(kModeKey);
    auto& dispatcher = c10::Dispatcher::singleton();
    if (dispatcher.hasBackendFallbackForDispatchKey(kModeKey)) {
        report.selfTestMessage = "another library already registered a fallback on " + report.dispatchKey;
        return report;
    }
    // Registrations live for the whole process: toggling state, never registrations (§1b).
    static auto* fallback = new torch::Library(torch::Library::IMPL, "_", kModeKey, __FILE__, __LINE__);
    fallback->fallback(torch::CppFunction::makeFallthrough());
    static auto* ops = new torch::Library(torch::Library::IMPL, "aten", kModeKey, __FILE__, __LINE__);
    std::string foreign;
    for (Function f : allFunctions()) {
        for (const OpOverload& o : functionOverloads(f)) {
            const auto handle = dispatcher.findSchema({std::string(o.name), std::string(o.overload)});
            if (!handle) {
                report.missingOps.push_back(qualified(o));
                continue;
            }
            if (handle->hasKernelForDispatchKey(kModeKey))
                foreign += (foreign.empty() ? "" : ", ") + qualified(o);
            std::string name(o.name.substr(6)); // strip "aten::"
            if (!o.overload.empty())
                name += "." + std::string(o.overload);
            ops->impl(name.c_str(), kernelAt(static_cast<int>(f), std::make_integer_sequence<int, kFunctionCount>{}));
            report.interceptedOps.push_back(qualified(o));
        }
    }
    if (!foreign.empty()) {
        report.selfTestMessage = "foreign kernels already sit on " + report.dispatchKey + " for: " + foreign;
        return report;
    }
    selfTest(report);
    return report;
}

} // namespace

const InterposerReport& ensureInterposer()
{
    static const InterposerReport report = registerOnce();
    return report;
}

const std::string& lastEngineError() { return tlsLastEngineError; }
void setLastEngineError(std::string message) { tlsLastEngineError = std::move(message); }
void clearLastEngineError() { tlsLastEngineError.clear(); }

} // namespace kforge::runtime

kforge::InterposerReport kforge::interposerReport() { return runtime::ensureInterposer(); }
