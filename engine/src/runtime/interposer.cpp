// SPDX-License-Identifier: Apache-2.0
// The interposer (R1): a thread-local mode key sees each replaceable op before Autograd and before
// composite decomposition. With nothing in effect it redispatches below itself; providers and originals
// run with the key excluded, so nested ops reach the real kernels.
#include "runtime/interposer.h"

#include <kforge/provider_sdk.h>

#include "runtime/interposed_form.h"

#include "runtime/event_sink.h"
#include "runtime/mode_key.h"
#include "runtime/normal_form.h"
#include "runtime/observer.h"
#include "runtime/runtime_core.h"
#include "runtime/step_points.h"
#include "runtime/string_pool.h"
#include "runtime/task_context.h"
#include "runtime/thread_state.h"
#include "runtime/unboxed_forms.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <map>
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

void observeOriginal(ThreadState& thread, Function f, const char* declined = nullptr)
{
    ++tlsProbeHits;
    if (events::recording())
        events::emit(EventKind::OriginalCall, thread.scopeOf(f), functionName(f).data(), "original", 0, declined);
    if (!declined)
        stepping::maybePause(PausePoint::Kind::FunctionCall, thread.scopeOf(f), functionName(f).data());
}

// The arguments of a call in the function's normal form, for the observers that want them (the optimizer
// benchmarks providers on these samples).
void tellSample(const ObserverList& observers, const OpForm& form, const c10::OperatorHandle& op, Function f,
                const torch::jit::Stack& stack, size_t n)
{
    const auto tell = [&](const torch::jit::Stack& args, size_t count) {
        for (const auto& observer : observers.observers)
            if (observer->wantsSamples())
                observer->sample(f, args, count);
    };
    if (form.kind == FormKind::Normal || form.kind == FormKind::InPlace) {
        tell(stack, n);
        return;
    }
    if (form.kind == FormKind::Variant) { // another op's schema, told apart: the optimizer benchmarks the normal form
        for (const auto& observer : observers.observers)
            if (observer->wantsSamples())
                observer->sampleVariant(f, op, stack, n);
        return;
    }
    torch::jit::Stack args(stack.end() - long(n), stack.end());
    if (!toNormalForm(form, args))
        tell(args, args.size());
}

// What is wrong with the outputs a provider left for `op` on the stack above `base`, or "": as many values as the op
// returns, a tensor where it returns one (R16).
std::string wrongOutputs(const c10::OperatorHandle& op, const torch::jit::Stack& stack, size_t base)
{
    const auto& returns = op.schema().returns();
    if (stack.size() != base + returns.size())
        return "returned " + std::to_string(std::ptrdiff_t(stack.size()) - std::ptrdiff_t(base)) + " value(s) where " +
               op.schema().name() + " returns " + std::to_string(returns.size());
    for (size_t i = 0; i < returns.size(); ++i)
        if (returns[i].type()->kind() == c10::TypeKind::TensorType && !stack[base + i].isTensor())
            return "returned a " + std::string(stack[base + i].tagKind()) + " where " + op.schema().name() +
                   " returns a tensor";
    return {};
}

// The provider on the call, in the normal form. On a decline the stack is as it was.
CallResult callProvider(const ProviderFunction& fn, const OpForm& form, const c10::OperatorHandle& op, Function f,
                        torch::jit::Stack& stack, size_t n)
{
    if (form.kind == FormKind::Normal || form.kind == FormKind::Variant)
        return fn.provider->call(op, stack);
    const c10::OperatorHandle& normal = *normalOp(f); // present: the runtime refuses entries without it
    if (form.kind == FormKind::InPlace) {
        const c10::IValue self = stack[stack.size() - n];
        const size_t base = stack.size() - n;
        const CallResult result = fn.provider->call(normal, stack);
        if (result.wasServed()) { // the result lands in the input, as the in-place op's would
            if (const std::string wrong = wrongOutputs(normal, stack, base); !wrong.empty())
                throw std::runtime_error(wrong);
            at::Tensor target = self.toTensor();
            const at::Tensor out = stack.back().toTensor();
            // copy_ would broadcast a smaller result and convert another dtype without a word.
            if (out.sizes() != target.sizes() || out.scalar_type() != target.scalar_type())
                throw std::runtime_error("returned " + std::string(c10::toString(out.scalar_type())) +
                                         c10::str(out.sizes()) + " for an in-place call on " +
                                         c10::toString(target.scalar_type()) + c10::str(target.sizes()));
            if (!out.is_same(target))
                target.copy_(out);
            stack.back() = self;
        }
        return result;
    }
    torch::jit::Stack args(stack.end() - long(n), stack.end());
    if (const char* why = toNormalForm(form, args))
        return CallResult::decline(why);
    const CallResult result = fn.provider->call(normal, args);
    if (result.wasServed()) {
        torch::jit::drop(stack, n);
        stack.insert(stack.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
    }
    return result;
}

// "declined by PROVIDER: reason", interned once per provider name and reason (both live as long as the process:
// names are interned, reasons have static storage, CallResult), so that a decline allocates nothing while events
// are recorded (R13).
const char* declineDetail(const ProviderFunction& fn, const char* reason)
{
    thread_local std::map<std::pair<const char*, const char*>, const char*> details;
    const auto [it, added] = details.try_emplace({fn.providerName, reason}, nullptr);
    if (added)
        it->second = intern(std::string("declined by ") + fn.providerName + ": " + reason);
    return it->second;
}

void declined(ThreadState& thread, Function f, const ProviderFunction& fn, const char* reason)
{
    fn.declines.fetch_add(1, std::memory_order_relaxed);
    fn.lastDecline.store(reason, std::memory_order_relaxed);
    if (events::recording())
        observeOriginal(thread, f, declineDetail(fn, reason));
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
    // Registrations live for the whole process: toggling state, never registrations.
    static auto* fallback = new torch::Library(torch::Library::IMPL, "_", kModeKey, __FILE__, __LINE__);
    fallback->fallback(torch::CppFunction::makeFallthrough());
    static auto* ops = new torch::Library(torch::Library::IMPL, "aten", kModeKey, __FILE__, __LINE__);
    static auto* registrations = new std::vector<c10::RegistrationHandleRAII>();
    std::string foreign;
    for (const OpForm& form : allOpForms()) {
        const auto handle = dispatcher.findSchema({std::string(form.op.name), std::string(form.op.overload)});
        if (!handle) {
            report.missingOps.push_back(qualifiedOpName(form.op));
            continue;
        }
        if (handle->hasKernelForDispatchKey(kModeKey))
            foreign += (foreign.empty() ? "" : ", ") + qualifiedOpName(form.op);
        std::string name(form.op.name.substr(6)); // strip "aten::"
        if (!form.op.overload.empty())
            name += "." + std::string(form.op.overload);
        if (auto kernel = unboxedKernel(form, *handle)) // a typed entry for C++ callers too
            registrations->push_back(dispatcher.registerImpl(handle->operator_name(), kModeKey, std::move(*kernel),
                                                             std::nullopt, nullptr, "kforge interposer (typed)"));
        else
            ops->impl(name.c_str(),
                      torch::CppFunction::makeFromBoxedFunctor(std::make_unique<InterposedForm>(form, *handle)));
        report.interceptedOps.push_back(qualifiedOpName(form.op));
    }
    if (!foreign.empty()) {
        report.selfTestMessage = "foreign kernels already sit on " + report.dispatchKey + " for: " + foreign;
        return report;
    }
    selfTest(report);
    return report;
}

} // namespace

InterposedForm::InterposedForm(const OpForm& form, const c10::OperatorHandle& op)
    : m_form(form), m_arguments(op.schema().arguments().size()), m_returns(op.schema().returns().size()),
      m_tensorReturns(0)
{
    const auto& returns = op.schema().returns();
    for (size_t i = 0; i < returns.size() && i < 64; ++i)
        if (returns[i].type()->kind() == c10::TypeKind::TensorType)
            m_tensorReturns |= std::uint64_t{1} << i;
}

bool InterposedForm::returnsLookRight(const torch::jit::Stack& stack, size_t base) const
{
    if (stack.size() != base + m_returns)
        return false;
    for (size_t i = 0; i < m_returns; ++i)
        if ((m_tensorReturns >> i & 1) && !stack[base + i].isTensor())
            return false;
    return true;
}

void InterposedForm::operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack)
{
    const auto below = keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kModeKey);
    ThreadState& thread = ThreadState::current();
    // Nested ops (in a provider, an original, an opaque op) reach the real kernels, not us.
    ModeKeyExcluded noReentry(thread.dispatchKeys());
    std::optional<Function> f = m_form.function;
    if (!f && m_form.kind != FormKind::Opaque)
        f = functionOfCall(m_form,
                           c10::ArrayRef<c10::IValue>(stack->data() + stack->size() - m_arguments, m_arguments));
    if (!f) {
        op.redispatchBoxed(below, stack);
        return;
    }
    // Outside a forward of its own, the thread may run a task forked from one: it carries its table (R12).
    if (thread.guardDepth.load(std::memory_order_relaxed) == 0)
        followTask(thread);
    if (thread.hasPendingUnwinds()) // a runtime deactivated by another thread during this forward (R12)
        applyPendingUnwinds(thread);
    // Alive while we call it: only this thread releases what its table holds while it is inside a forward.
    const ProviderFunction* fn = thread.inEffect(*f);
    if (!fn && !thread.observe) { // the original, and nobody to tell: the common case of an active runtime
        if (!thread.anyInEffect())
            c10::impl::tls_set_dispatch_key_included(kModeKey, false); // left on after a remote unwind
        op.redispatchBoxed(below, stack);
        return;
    }
    const size_t n = m_arguments;
    const ObserverList* observers = thread.observe ? &observersOnThisThread() : nullptr;
    if (observers && observers->empty())
        observers = nullptr;
    if (observers && observers->wantsSamples)
        tellSample(*observers, m_form, op, *f, *stack, n);
    ObservedCall call(observers, *f, nameOf(fn), observers ? op.schema().name().c_str() : nullptr);
    if (!fn) { // observed
        observeOriginal(thread, *f);
        op.redispatchBoxed(below, stack);
        return;
    }
    stepping::maybePause(PausePoint::Kind::FunctionCall, thread.scopeOf(*f), fn->functionName);
    CallResult result;
    const size_t base = stack->size() - n;
    try {
        result = callProvider(*fn, m_form, op, *f, *stack, n);
        // The provider contract, checked where a break would surface far from its cause (R16).
        if (!result.wasServed() && stack->size() != base + n)
            throw std::runtime_error("declined the call after taking its arguments off the stack");
        if (result.wasServed() && m_form.kind != FormKind::InPlace && !returnsLookRight(*stack, base))
            throw std::runtime_error(wrongOutputs(op, *stack, base));
    } catch (const c10::Error& e) {
        rethrowWithContext(thread, *f, *fn, e.what_without_backtrace());
    } catch (const std::exception& e) {
        rethrowWithContext(thread, *f, *fn, e.what());
    } catch (...) {
        rethrowWithContext(thread, *f, *fn, "threw something that is not a std::exception");
    }
    if (result.wasServed()) {
        if (events::recording())
            events::emit(EventKind::ProviderCall, thread.scopeOf(*f), fn->functionName, fn->providerName, 0);
        return;
    }
    declined(thread, *f, *fn, result.declined);
    call.declined();
    op.redispatchBoxed(below, stack);
}

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
