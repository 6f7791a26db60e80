// SPDX-License-Identifier: Apache-2.0
// Cost of one intercepted op (docs/design/runtime-semantics.md, Cost: "an intercepted op with no provider in effect
// costs at most about 150 ns more than a plain call").
//
//   a  plain         the interposition key is not included: the op dispatches as in plain LibTorch
//   b1 orig/guard    the key is included around each call, this thread's table is empty: the interposer runs
//                    and redispatches to the original (it also drops the key, as it does after a remote unwind,
//                    which is why the include guard is taken per call; its own cost is measured separately)
//   b2 orig/active   a runtime is active and inside its root scope with a provider in effect for another
//                    function (softmax): the key stays on and the interposer redispatches to the original. This
//                    is the state every non-replaced op of a patched model runs in.
//   c  provider      Aten<Function>Provider in effect at the root scope: the interposer calls the reference
//                    provider, which runs the same ATen op through the boxed provider path.
//   d  provider      the same reference provider as the op's own kernel (a bench-only op of the same schema whose
//      alone         kernel calls it, interposition key excluded as the interposer does), called the same way: the
//                    provider's own cost plus the dispatcher's entry every call pays. c - d is what the interposer
//                    adds to a provider call (target: <= 60 ns), for C++ and boxed callers alike.
//
// Each op is timed twice: called from C++ (at::gelu: an unboxed call, which the interposer's boxed kernel boxes and
// the original's kernel unboxes again) and called boxed (OperatorHandle::callBoxed), as the TorchScript interpreter
// calls every op of a scripted or traced model: the "_boxed" rows are what a model's forward pays.
// b2 and c run inside an engine call guard, as every forward does.
//
// Ops: gelu on 16 floats (on this LibTorch build CPU gelu goes through oneDNN, a few us per call, so its
// overhead figures are noisy), the same gelu with oneDNN switched off (gelu16_native), relu on 16 floats (a light
// TensorIterator op), linear [4,16]x[16,16]. Also timed: one module_enter + module_exit pair (what each instrumented
// module forward adds). The summary after the run prints (b)-(a), (c)-(a) in ns per call and the ratios, from means of
// repetitions, in real time and in CPU time (the latter is steadier when other processes share the cores).
//
// `bench_interposer --instructions` counts the same a/b2/c configurations in instructions per call under callgrind
// instead (instruction_count.h): figures that do not move between runs, where timing spreads more than the targets.
#include "bench_common.h"
#include "instruction_count.h"
#include "steady_cpu_allocator.h"

#include <torch/csrc/jit/runtime/operator.h>

#include "model/session_impl.h"
#include "runtime/call_guard.h"
#include "runtime/interposer.h"
#include "runtime/mode_key.h"
#include "runtime/thread_state.h"

#include <kforge/events.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

namespace {

using kforge::Function;
using kforge::KernelProviderRuntime;
using kforge::runtime::kModeKey;

struct Fixture {
    std::unique_ptr<kforge::ModelSession> session;
    std::unique_ptr<KernelProviderRuntime> otherPatched; // softmax at the root: originals for the ops timed
    std::unique_ptr<KernelProviderRuntime> providers;    // Aten{Gelu,Relu,Linear}Provider at the root
    c10::IValue root;
    c10::IValue head;      // a submodule no plan entry names (tiny-gpt's "head")
    at::Tensor x16;        // gelu input: 16 floats
    at::Tensor lx, lw, lb; // linear: [4,16] x [16,16]^T + [16]
};
Fixture* gFx = nullptr;

kforge::PlanEntry entry(const std::string& function, const std::string& provider)
{
    kforge::PlanEntry e;
    e.scope = "";
    e.function = function;
    e.provider = {{"type", provider}};
    return e;
}

// The hook ops as the interpreter runs them: registered TorchScript operations (runtime/hook_ops.cpp).
torch::jit::Operation operationOf(const char* qualified)
{
    return torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(qualified)).front()->getOperation();
}
torch::jit::Operation& enterOp()
{
    static auto op = operationOf("kforge::module_enter");
    return op;
}
torch::jit::Operation& exitOp()
{
    static auto op = operationOf("kforge::module_exit");
    return op;
}
// Calls a hook op as the instrumented graph does, with the module object as its only argument.
inline void callHook(torch::jit::Operation& op, const c10::IValue& self)
{
    torch::jit::Stack stack{self};
    op(stack);
}
void callHook(const char* name) { callHook(std::string(name) == "enter" ? enterOp() : exitOp(), gFx->root); }

// Activates a runtime and runs its root module's pre-hook on this thread (as the instrumented forward's
// first op would); undoes both on leaving.
class InRootScope {
public:
    explicit InRootScope(KernelProviderRuntime& runtime) : m_runtime(runtime), m_forward(false)
    {
        m_runtime.activate();
        callHook("enter");
    }
    ~InRootScope()
    {
        callHook("exit");
        m_runtime.deactivate();
    }

private:
    KernelProviderRuntime& m_runtime;
    kforge::runtime::CallGuard m_forward; // as around every engine forward
};

inline at::Tensor opGelu() { return at::gelu(gFx->x16); }
inline at::Tensor opRelu() { return at::relu(gFx->x16); }
inline at::Tensor opLinear() { return at::linear(gFx->lx, gFx->lw, gFx->lb); }

// The same calls made boxed, as the TorchScript interpreter makes them.
c10::OperatorHandle handleOf(const char* name) { return c10::Dispatcher::singleton().findSchemaOrThrow(name, ""); }
inline at::Tensor boxedResult(const c10::OperatorHandle& op, torch::jit::Stack stack)
{
    op.callBoxed(stack);
    return stack.back().toTensor();
}
at::Tensor opGeluBoxed()
{
    static const c10::OperatorHandle op = handleOf("aten::gelu");
    return boxedResult(op, {gFx->x16, std::string("none")});
}
at::Tensor opReluBoxed()
{
    static const c10::OperatorHandle op = handleOf("aten::relu");
    return boxedResult(op, {gFx->x16});
}
at::Tensor opLinearBoxed()
{
    static const c10::OperatorHandle op = handleOf("aten::linear");
    return boxedResult(op, {gFx->lx, gFx->lw, gFx->lb});
}

// d: the reference provider as the op's own kernel. A bench-only operator with the catalog op's schema
// (kforge_bench::relu, ...) whose kernel calls the provider on the call's stack, with the aten op's handle and the
// interposition key excluded, as the interposer calls it. The kernel sits at CompositeImplicitAutograd, so nothing
// runs before it, as nothing runs before the interposer's key. Called as the a/b2/c rows call the aten op (from C++,
// which the dispatcher boxes for the boxed kernel as our typed entry does, or boxed), d pays the dispatcher's entry
// that every call pays, so c - d is what the interposer adds to a provider call and nothing else. (Until 2026-12-07
// d called the provider without the dispatcher, which put the entry, ~200 instructions with RecordFunction's check,
// in c - d.)
std::unique_ptr<kforge::KernelProvider> referenceProvider(const char* type)
{
    return kforge::ProviderRegistry::instance().create({{"type", type}});
}
class ProviderAsKernel final : public c10::OperatorKernel {
public:
    ProviderAsKernel(const char* provider, const char* atenOp)
        : m_provider(referenceProvider(provider)), m_aten(handleOf(atenOp))
    {
    }
    void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack* stack)
    {
        kforge::runtime::ModeKeyExcluded noInterposer;
        m_provider->call(m_aten, *stack);
    }

private:
    std::unique_ptr<kforge::KernelProvider> m_provider;
    c10::OperatorHandle m_aten;
};
void registerProviderOps()
{
    static auto* defs = new torch::Library(torch::Library::DEF, "kforge_bench", std::nullopt, __FILE__, __LINE__);
    static auto* impls = new torch::Library(torch::Library::IMPL, "kforge_bench",
                                            c10::DispatchKey::CompositeImplicitAutograd, __FILE__, __LINE__);
    const struct {
        const char *schema, *name, *provider, *aten;
    } ops[] = {
        {"relu(Tensor self) -> Tensor", "relu", "AtenReluProvider", "aten::relu"},
        {"gelu(Tensor self, *, str approximate='none') -> Tensor", "gelu", "AtenGeluProvider", "aten::gelu"},
        {"linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", "linear", "AtenLinearProvider",
         "aten::linear"},
    };
    for (const auto& op : ops) {
        defs->def(op.schema);
        impls->impl(op.name,
                    torch::CppFunction::makeFromBoxedFunctor(std::make_unique<ProviderAsKernel>(op.provider, op.aten)));
    }
}
template <class Schema> c10::TypedOperatorHandle<Schema> providerOp(const char* name)
{
    return handleOf(name).typed<Schema>();
}
at::Tensor opGeluProviderAlone()
{
    static const auto op = providerOp<at::_ops::gelu::schema>("kforge_bench::gelu");
    return op.call(gFx->x16, "none");
}
at::Tensor opReluProviderAlone()
{
    static const auto op = providerOp<at::_ops::relu::schema>("kforge_bench::relu");
    return op.call(gFx->x16);
}
at::Tensor opLinearProviderAlone()
{
    static const auto op = providerOp<at::_ops::linear::schema>("kforge_bench::linear");
    return op.call(gFx->lx, gFx->lw, gFx->lb);
}
at::Tensor opGeluProviderAloneBoxed()
{
    static const c10::OperatorHandle op = handleOf("kforge_bench::gelu");
    return boxedResult(op, {gFx->x16, std::string("none")});
}
at::Tensor opReluProviderAloneBoxed()
{
    static const c10::OperatorHandle op = handleOf("kforge_bench::relu");
    return boxedResult(op, {gFx->x16});
}
at::Tensor opLinearProviderAloneBoxed()
{
    static const c10::OperatorHandle op = handleOf("kforge_bench::linear");
    return boxedResult(op, {gFx->lx, gFx->lw, gFx->lb});
}

// For the gelu16_native rows: LibTorch's own vectorized gelu kernel instead of oneDNN's, so that the
// ~100 ns being measured is not lost in oneDNN's allocation-heavy primitive set-up.
class OneDnnOff {
public:
    explicit OneDnnOff(bool off) : m_saved(at::globalContext().userEnabledMkldnn()), m_off(off)
    {
        if (m_off)
            at::globalContext().setUserEnabledMkldnn(false);
    }
    ~OneDnnOff()
    {
        if (m_off)
            at::globalContext().setUserEnabledMkldnn(m_saved);
    }

private:
    bool m_saved, m_off;
};

template <at::Tensor (*Op)(), bool NoDnnl = false> void BM_plain(benchmark::State& state)
{
    OneDnnOff dnnl(NoDnnl);
    for (auto _ : state) {
        at::Tensor y = Op();
        benchmark::DoNotOptimize(y.unsafeGetTensorImpl());
    }
}

template <at::Tensor (*Op)(), bool NoDnnl = false> void BM_originalKeyGuard(benchmark::State& state)
{
    OneDnnOff dnnl(NoDnnl);
    for (auto _ : state) {
        c10::impl::IncludeDispatchKeyGuard include(kModeKey);
        at::Tensor y = Op();
        benchmark::DoNotOptimize(y.unsafeGetTensorImpl());
    }
}

template <at::Tensor (*Op)(), bool NoDnnl = false> void BM_originalActive(benchmark::State& state)
{
    OneDnnOff dnnl(NoDnnl);
    InRootScope scope(*gFx->otherPatched);
    for (auto _ : state) {
        at::Tensor y = Op();
        benchmark::DoNotOptimize(y.unsafeGetTensorImpl());
    }
}

template <at::Tensor (*Op)(), bool NoDnnl = false> void BM_provider(benchmark::State& state)
{
    OneDnnOff dnnl(NoDnnl);
    InRootScope scope(*gFx->providers);
    for (auto _ : state) {
        at::Tensor y = Op();
        benchmark::DoNotOptimize(y.unsafeGetTensorImpl());
    }
}

// One module_enter + module_exit pair, as every instrumented module forward runs: with no runtime active,
// on a module outside every active plan's scopes, and on an active plan's scope module (push + pop).
void BM_hookPair(benchmark::State& state, KernelProviderRuntime* runtime, bool scopeModule)
{
    if (runtime)
        runtime->activate();
    const c10::IValue& self = scopeModule ? gFx->root : gFx->head;
    auto& enter = enterOp();
    auto& exit = exitOp();
    for (auto _ : state) {
        callHook(enter, self);
        callHook(exit, self);
    }
    if (runtime)
        runtime->deactivate();
}

void BM_includeGuardOnly(benchmark::State& state)
{
    for (auto _ : state) {
        c10::impl::IncludeDispatchKeyGuard include(kModeKey);
        benchmark::ClobberMemory();
    }
}

// Checks, before timing, that each configuration takes the path it claims (events count interposer hits).
void sanityCheck()
{
    auto& thread = kforge::runtime::ThreadState::current();
    auto count = [&](const std::function<void()>& body) {
        std::map<std::string, int> counts;
        {
            const bool wasObserving = std::exchange(thread.observe, true); // originals emit events too
            auto stream = kforge::EventStream::attach();
            body();
            thread.observe = wasObserving;
            std::vector<kforge::Event> events;
            stream->drain(events);
            for (const auto& e : events)
                if (e.kind == kforge::EventKind::ProviderCall || e.kind == kforge::EventKind::OriginalCall)
                    ++counts[std::string(kforge::eventKindName(e.kind)) + ":" + e.function + ":" + e.provider];
        }
        std::string s;
        for (const auto& [k, n] : counts)
            s += (s.empty() ? "" : ", ") + k + " x" + std::to_string(n);
        return s.empty() ? std::string("no interposer hits") : s;
    };
    std::printf("sanity (one gelu, relu and linear per configuration, observed through the event stream):\n");
    std::printf("  a  plain        : %s\n", count([] {
                                                opGelu();
                                                opRelu();
                                                opLinear();
                                            }).c_str());
    std::printf("  b1 orig/guard   : %s\n", count([] {
                                                c10::impl::IncludeDispatchKeyGuard include(kModeKey);
                                                opGelu();
                                                c10::impl::IncludeDispatchKeyGuard include2(kModeKey);
                                                opRelu();
                                                c10::impl::IncludeDispatchKeyGuard include3(kModeKey);
                                                opLinear();
                                            }).c_str());
    {
        InRootScope scope(*gFx->otherPatched);
        std::printf("  b2 orig/active  : %s\n", count([] {
                                                    opGelu();
                                                    opRelu();
                                                    opLinear();
                                                }).c_str());
    }
    {
        InRootScope scope(*gFx->providers);
        std::printf("  c  provider     : %s\n", count([] {
                                                    opGelu();
                                                    opRelu();
                                                    opLinear();
                                                }).c_str());
    }
    // Without observation, does the key survive an intercepted call that found an empty table?
    bool keptAfterEmptyTable;
    {
        c10::impl::IncludeDispatchKeyGuard include(kModeKey);
        opGelu();
        keptAfterEmptyTable = c10::impl::tls_is_dispatch_key_included(kModeKey);
    }
    bool keptWhileActive;
    {
        InRootScope scope(*gFx->otherPatched);
        opGelu();
        opGelu();
        keptWhileActive = c10::impl::tls_is_dispatch_key_included(kModeKey);
    }
    std::printf("  key still included after an intercepted call: empty table %s, runtime active %s\n",
                keptAfterEmptyTable ? "yes" : "no (dropped: hence the per-call include guard in b1)",
                keptWhileActive ? "yes" : "NO");
    const at::Tensor ref = at::gelu(gFx->x16);
    at::Tensor viaProvider;
    {
        InRootScope scope(*gFx->providers);
        viaProvider = at::gelu(gFx->x16);
    }
    std::printf("  provider result equals plain result: %s\n\n", at::equal(ref, viaProvider) ? "yes" : "NO");
}

void printSummary(kforge_bench::CollectingReporter& rep)
{
    std::printf("\n=== interposer summary: time per call, mean of repetitions (median in brackets) ===\n");
    std::printf("targets: an interposed call with the original in effect (b2) <= 30 ns over plain (a); with "
                "the reference provider in effect (c) <= 60 ns over the provider called directly (d)\n");
    for (const bool cpu : {false, true}) {
        std::printf("\n--- %s ---\n", cpu ? "CPU time of the benchmark thread" : "real (wall) time");
        if (const auto* g = rep.stats("include_guard_only", cpu))
            std::printf("IncludeDispatchKeyGuard alone: %.1f ns (included in b1, not subtracted)\n", g->mean);
        for (const char* h :
             {"inactive", "active_unscoped_module", "active_scope_module_1_entry", "active_scope_module_3_entries"})
            if (const auto* g = rep.stats(std::string("hook_pair/") + h, cpu))
                std::printf("module_enter+module_exit pair, %-29s %7.1f ns [%7.1f] sd %5.1f\n", h, g->mean, g->median,
                            g->stddev);
        for (const char* op : {"gelu16", "gelu16_native", "relu16", "linear4x16", "gelu16_native_boxed", "relu16_boxed",
                               "linear4x16_boxed"}) {
            const std::string base = op;
            const auto* a = rep.stats(base + "/a_plain", cpu);
            if (!a)
                continue;
            std::printf("%s: a plain %.1f ns [%.1f] (sd %.1f, %d reps)\n", op, a->mean, a->median, a->stddev, a->reps);
            const struct {
                const char* suffix;
                const char* label;
                double target; // ns over plain; 0: none (b1 pays the include guard per call)
            } rows[] = {{"/b1_original_keyguard", "b1 original, key guard per call", 0.0},
                        {"/b2_original_runtime_active", "b2 original, runtime active    ", 30.0},
                        {"/c_provider", "c  reference provider         ", 0.0}};
            for (const auto& row : rows) {
                const auto* s = rep.stats(base + row.suffix, cpu);
                if (!s)
                    continue;
                const double over = s->mean - a->mean, overMedian = s->median - a->median;
                std::printf("  %s %8.1f ns [%8.1f] sd %6.1f  interposed overhead (ns/call) %+7.1f [%+7.1f]  "
                            "ratio %.3f [%.3f]%s\n",
                            row.label, s->mean, s->median, s->stddev, over, overMedian, s->mean / a->mean,
                            s->median / a->median,
                            row.target == 0.0    ? ""
                            : over <= row.target ? "  (meets target)"
                                                 : "  (MISSES target)");
            }
            const auto* c = rep.stats(base + "/c_provider", cpu);
            const auto* d = rep.stats(base + "/d_provider_alone", cpu);
            if (c && d) {
                const double over = c->mean - d->mean;
                std::printf(
                    "  d  provider alone %8.1f ns [%8.1f] sd %6.1f  c over d (interposer's part of the provider "
                    "path) %+7.1f [%+7.1f]%s\n",
                    d->mean, d->median, d->stddev, over, c->median - d->median,
                    over <= 60.0 ? "  (meets target)" : "  (MISSES target)");
            }
        }
    }
}

// --instructions: the same configurations counted in instructions per call under callgrind (instruction_count.h),
// with a nanosecond estimate from the plain call's time per instruction measured here, outside valgrind.
struct CountedOp {
    const char* name;
    at::Tensor (*call)();
    at::Tensor (*providerAlone)(); // row d
    bool noDnnl;
};
constexpr CountedOp kCountedOps[] = {
    {"relu16", opRelu, opReluProviderAlone, false},
    {"gelu16_native", opGelu, opGeluProviderAlone, true},
    {"linear4x16", opLinear, opLinearProviderAlone, false},
    {"relu16_boxed", opReluBoxed, opReluProviderAloneBoxed, false},
    {"gelu16_native_boxed", opGeluBoxed, opGeluProviderAloneBoxed, true},
    {"linear4x16_boxed", opLinearBoxed, opLinearProviderAloneBoxed, false},
};
constexpr int kCountedCalls = 2000;
// runtime-semantics.md's cost targets in instructions (issue 67: 150 for a call the original serves, 250 for what the
// interposer adds to a provider's call), so that the verdict does not move with the machine's speed or load.
constexpr double kOriginalTarget = 150, kProviderTarget = 250;

// Each configuration is counted in kCountRounds rounds, the ops interleaved, and the parent reports the median over
// the rounds of each configuration's count minus the plain count of the same round: the allocator's state (free
// lists settling, consolidation) moves a single count by up to ~150 instructions per call.
constexpr int kCountRounds = 3;

void countEveryConfiguration()
{
    for (int round = 0; round < kCountRounds; ++round)
        for (const CountedOp& op : kCountedOps) {
            OneDnnOff dnnl(op.noDnnl);
            const auto body = [&] {
                at::Tensor y = op.call();
                benchmark::DoNotOptimize(y.unsafeGetTensorImpl());
            };
            const std::string base = op.name, tag = "#" + std::to_string(round);
            kforge_bench::countInstructions(base + "/a_plain" + tag, kCountedCalls, body);
            {
                InRootScope scope(*gFx->otherPatched);
                kforge_bench::countInstructions(base + "/b2_original_runtime_active" + tag, kCountedCalls, body);
            }
            {
                InRootScope scope(*gFx->providers);
                kforge_bench::countInstructions(base + "/c_provider" + tag, kCountedCalls, body);
            }
            kforge_bench::countInstructions(base + "/d_provider_alone" + tag, kCountedCalls, [&] {
                at::Tensor y = op.providerAlone();
                benchmark::DoNotOptimize(y.unsafeGetTensorImpl());
            });
        }
}

// Fastest of 7 timed loops: the estimate's denominator should carry as little of the machine's noise as possible.
double plainNanosecondsPerCall(const CountedOp& op)
{
    OneDnnOff dnnl(op.noDnnl);
    double best = 1e300;
    for (int rep = 0; rep < 7; ++rep) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 20000; ++i) {
            at::Tensor y = op.call();
            benchmark::DoNotOptimize(y.unsafeGetTensorImpl());
        }
        const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
        best = std::min(best, took.count() / 20000);
    }
    return best;
}

int reportInstructions(const char* self)
{
    const auto counts = kforge_bench::instructionsPerCall(self, {"--instructions-child"});
    if (counts.empty())
        return 1;
    std::printf(
        "\n=== interposer cost in instructions per call (callgrind, %d calls each, median of 3 rounds) ===\n"
        "ns estimates: instructions x the plain call's ns per instruction, timed here (fastest of 7 loops)\n"
        "targets: original in effect (b2) <= 150 instructions (30 ns) over plain (a); reference provider in effect "
        "(c)\n"
        "<= 250 instructions (60 ns) over the provider as the op's own kernel (d). The verdict is on instructions:\n"
        "the ns estimates move 2x with the VM's other tenants\n\n",
        kCountedCalls);
    std::printf("%-20s %12s %10s | %14s %8s | %14s | %14s %8s\n", "op", "plain instr", "plain ns", "b2 over a", "~ns",
                "c over a", "c over d", "~ns");
    for (const CountedOp& op : kCountedOps) {
        const std::string base = op.name;
        const auto count = [&](const char* suffix, int round) {
            const auto it = counts.find(base + suffix + "#" + std::to_string(round));
            return it == counts.end() ? -1.0 : it->second;
        };
        // Per round, a configuration's count over another's of the same round; the median of the rounds.
        const auto medianOver = [&](const char* suffix, const char* baseline) {
            std::vector<double> over;
            for (int round = 0; round < kCountRounds; ++round)
                if (count(baseline, round) > 0 && count(suffix, round) >= 0)
                    over.push_back(count(suffix, round) - count(baseline, round));
            if (over.empty())
                return std::numeric_limits<double>::quiet_NaN();
            std::sort(over.begin(), over.end());
            return over[over.size() / 2];
        };
        const double a = count("/a_plain", 0), b2 = medianOver("/b2_original_runtime_active", "/a_plain"),
                     c = medianOver("/c_provider", "/a_plain"), cd = medianOver("/c_provider", "/d_provider_alone");
        if (a <= 0 || std::isnan(b2) || std::isnan(c) || std::isnan(cd))
            continue;
        const double ns = plainNanosecondsPerCall(op), nsPerInstruction = ns / a;
        std::printf("%-20s %12.0f %10.1f | %+14.0f %+8.1f | %+14.0f | %+14.0f %+8.1f%s\n", op.name, a, ns, b2,
                    b2 * nsPerInstruction, c, cd, cd * nsPerInstruction,
                    b2 <= kOriginalTarget && cd <= kProviderTarget ? "" : "  MISSES a target");
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    at::set_num_threads(1);
    kforge::runtime::ensureInterposer();
    registerProviderOps();
    Fixture fx;
    gFx = &fx;
    fx.session = kforge::ModelSession::open("builtin:tiny-gpt");
    fx.root = c10::IValue(sessionImpl(*fx.session).module._ivalue());
    fx.head = sessionImpl(*fx.session).module.attr("head");
    fx.otherPatched =
        std::make_unique<KernelProviderRuntime>(*fx.session, kforge::Plan{{entry("softmax", "AtenSoftmaxProvider")}});
    fx.providers = std::make_unique<KernelProviderRuntime>(
        *fx.session, kforge::Plan{{entry("gelu", "AtenGeluProvider"), entry("relu", "AtenReluProvider"),
                                   entry("linear", "AtenLinearProvider")}});
    fx.x16 = at::randn({16});
    fx.lx = at::randn({4, 16});
    fx.lw = at::randn({16, 16});
    fx.lb = at::randn({16});

    if (argc > 1 && std::strcmp(argv[1], "--instructions-child") == 0) {
        kforge_bench::SteadyCpuAllocator::install();
        countEveryConfiguration();
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "--instructions") == 0)
        return reportInstructions(argv[0]);

    sanityCheck();

    benchmark::RegisterBenchmark("include_guard_only", BM_includeGuardOnly);
    benchmark::RegisterBenchmark("hook_pair/inactive", BM_hookPair, nullptr, false);
    benchmark::RegisterBenchmark("hook_pair/active_unscoped_module", BM_hookPair, fx.otherPatched.get(), false);
    benchmark::RegisterBenchmark("hook_pair/active_scope_module_1_entry", BM_hookPair, fx.otherPatched.get(), true);
    benchmark::RegisterBenchmark("hook_pair/active_scope_module_3_entries", BM_hookPair, fx.providers.get(), true);
    benchmark::RegisterBenchmark("gelu16/a_plain", BM_plain<opGelu>);
    benchmark::RegisterBenchmark("gelu16/b1_original_keyguard", BM_originalKeyGuard<opGelu>);
    benchmark::RegisterBenchmark("gelu16/b2_original_runtime_active", BM_originalActive<opGelu>);
    benchmark::RegisterBenchmark("gelu16/c_provider", BM_provider<opGelu>);
    benchmark::RegisterBenchmark("gelu16/d_provider_alone", BM_plain<opGeluProviderAlone>);
    benchmark::RegisterBenchmark("gelu16_native/a_plain", BM_plain<opGelu, true>);
    benchmark::RegisterBenchmark("gelu16_native/b1_original_keyguard", BM_originalKeyGuard<opGelu, true>);
    benchmark::RegisterBenchmark("gelu16_native/b2_original_runtime_active", BM_originalActive<opGelu, true>);
    benchmark::RegisterBenchmark("gelu16_native/c_provider", BM_provider<opGelu, true>);
    benchmark::RegisterBenchmark("gelu16_native/d_provider_alone", BM_plain<opGeluProviderAlone, true>);
    benchmark::RegisterBenchmark("relu16/a_plain", BM_plain<opRelu>);
    benchmark::RegisterBenchmark("relu16/b1_original_keyguard", BM_originalKeyGuard<opRelu>);
    benchmark::RegisterBenchmark("relu16/b2_original_runtime_active", BM_originalActive<opRelu>);
    benchmark::RegisterBenchmark("relu16/c_provider", BM_provider<opRelu>);
    benchmark::RegisterBenchmark("relu16/d_provider_alone", BM_plain<opReluProviderAlone>);
    benchmark::RegisterBenchmark("linear4x16/a_plain", BM_plain<opLinear>);
    benchmark::RegisterBenchmark("linear4x16/b1_original_keyguard", BM_originalKeyGuard<opLinear>);
    benchmark::RegisterBenchmark("linear4x16/b2_original_runtime_active", BM_originalActive<opLinear>);
    benchmark::RegisterBenchmark("linear4x16/c_provider", BM_provider<opLinear>);
    benchmark::RegisterBenchmark("linear4x16/d_provider_alone", BM_plain<opLinearProviderAlone>);
    benchmark::RegisterBenchmark("gelu16_native_boxed/a_plain", BM_plain<opGeluBoxed, true>);
    benchmark::RegisterBenchmark("gelu16_native_boxed/b2_original_runtime_active",
                                 BM_originalActive<opGeluBoxed, true>);
    benchmark::RegisterBenchmark("gelu16_native_boxed/c_provider", BM_provider<opGeluBoxed, true>);
    benchmark::RegisterBenchmark("gelu16_native_boxed/d_provider_alone", BM_plain<opGeluProviderAloneBoxed, true>);
    benchmark::RegisterBenchmark("relu16_boxed/a_plain", BM_plain<opReluBoxed>);
    benchmark::RegisterBenchmark("relu16_boxed/b2_original_runtime_active", BM_originalActive<opReluBoxed>);
    benchmark::RegisterBenchmark("relu16_boxed/c_provider", BM_provider<opReluBoxed>);
    benchmark::RegisterBenchmark("relu16_boxed/d_provider_alone", BM_plain<opReluProviderAloneBoxed>);
    benchmark::RegisterBenchmark("linear4x16_boxed/a_plain", BM_plain<opLinearBoxed>);
    benchmark::RegisterBenchmark("linear4x16_boxed/b2_original_runtime_active", BM_originalActive<opLinearBoxed>);
    benchmark::RegisterBenchmark("linear4x16_boxed/c_provider", BM_provider<opLinearBoxed>);
    benchmark::RegisterBenchmark("linear4x16_boxed/d_provider_alone", BM_plain<opLinearProviderAloneBoxed>);

    const int status = kforge_bench::runBenchmarks(
        argc, argv,
        {"--benchmark_repetitions=10", "--benchmark_min_time=0.2", "--benchmark_enable_random_interleaving=true"},
        printSummary);

    fx.providers.reset();
    fx.otherPatched.reset();
    gFx = nullptr;
    return status;
}
