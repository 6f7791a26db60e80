// SPDX-License-Identifier: Apache-2.0
// Forward time of the built-in models (docs/design/runtime-semantics.md, Cost: "with no runtime active, an instrumented
// model runs within 1% of the uninstrumented one"). Per model:
//
//   uninstrumented      a fresh module from kforge::builtin::create, forward called directly (NoGradGuard,
//                       as ModelSession::forward uses) -- the baseline
//   session_inactive    ModelSession::forward(), no runtime active; it returns an output digest, so its target is
//                       read against uninstr_digest (below), the baseline with the same digest
//   active_empty_stack  ModelSession::forward() with an active runtime whose only entry targets a function the
//                       model never calls (relu for tiny-gpt, gelu for convnet) at the root: every replaceable
//                       op is intercepted and runs its original
//   active_all_ref      ModelSession::forward() with Aten<Function>Provider at the root for every function
//                       the model calls: every replaceable op runs through the reference provider
//   observed            ModelSession::forward() with an event stream attached (what `kforge run` and the desktop
//                       app's live view do), drained after each forward: every call and module is observed
//
// and, to attribute the session_inactive overhead, breakdown rows:
//
//   *_no_digest         the three session rows above through ModelSession::forwardDiscardingOutputs: forward
//                       less the output digest it returns (what timing loops and forwardMany run)
//   instr_graph_direct  the session's instrumented module, forward called directly (module enter/exit ops)
//   instr_callguard     as above inside the engine's CallGuard (what ModelSession::forward adds, less digest)
//   instr_guard_digest  as above plus the output digest: ModelSession::forward less its error handling
//   uninstr_digest      the baseline plus the output digest that ModelSession::forward computes
//
// Models: the built-in tiny-gpt and convnet, and deep-stack, the 10,000-module model (deep_stack_model.h).
// The summary after the run prints ratios to the uninstrumented baseline, from means of repetitions. Every row runs
// the session's graph executor (KFORGE_BENCH_EXECUTOR=direct, the default, or optimized), the baseline included, so
// that the ratios compare instrumentation only.
//
// `bench_forward --instructions` counts instructions per forward of the main rows under callgrind instead
// (instruction_count.h): on a shared VM a repetition's time spreads by more than the 0.5% being asked about.
#include "bench_common.h"
#include "deep_stack_model.h"
#include "instruction_count.h"

#include "model/builtin_models.h"
#include "model/output_digest.h"
#include "model/session_impl.h"
#include "runtime/call_guard.h"

#include <kforge/events.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/runtime.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include <unistd.h>

namespace {

using kforge::KernelProviderRuntime;

struct ModelFixture {
    std::string name;
    std::vector<std::string> calledFunctions; // what the model's forward calls
    std::string unusedFunction;               // one it never calls
    torch::jit::Module plain;                 // uninstrumented
    std::vector<c10::IValue> plainInputs;
    std::unique_ptr<kforge::ModelSession> session;
    std::unique_ptr<KernelProviderRuntime> emptyStack;
    std::unique_ptr<KernelProviderRuntime> allReference;
};
std::vector<std::unique_ptr<ModelFixture>> gModels;

std::string pascalCase(const std::string& snake)
{
    std::string out;
    bool upper = true;
    for (char c : snake) {
        if (c == '_') {
            upper = true;
            continue;
        }
        out += upper ? char(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return out;
}

kforge::PlanEntry referenceEntry(const std::string& function)
{
    kforge::PlanEntry e;
    e.scope = "";
    e.function = function;
    e.provider = {{"type", "Aten" + pascalCase(function) + "Provider"}};
    return e;
}

// The executor ModelSession::forward runs (guardedForward sets it per forward).
bool optimized(const ModelFixture& m) { return m.session->options().executor == kforge::GraphExecutor::Optimized; }

c10::IValue plainForward(ModelFixture& m)
{
    at::NoGradGuard noGrad;
    torch::jit::GraphOptimizerEnabledGuard executor(optimized(m));
    return m.plain.get_method("forward")(m.plainInputs, {});
}

c10::IValue instrumentedForward(ModelFixture& m)
{
    at::NoGradGuard noGrad;
    torch::jit::GraphOptimizerEnabledGuard executor(optimized(m));
    auto& impl = sessionImpl(*m.session);
    return impl.module.get_method("forward")(impl.inputs, impl.kwargs);
}

// What ModelSession::forward returns: the output digest (engine/src/model/output_digest.h).
std::vector<kforge::TensorDigest> digest(const c10::IValue& out) { return kforge::digestOutput(out); }

void BM_uninstrumented(benchmark::State& state, ModelFixture* m)
{
    for (auto _ : state)
        benchmark::DoNotOptimize(plainForward(*m));
}

void BM_uninstrDigest(benchmark::State& state, ModelFixture* m)
{
    for (auto _ : state)
        benchmark::DoNotOptimize(digest(plainForward(*m)));
}

void BM_instrGraphDirect(benchmark::State& state, ModelFixture* m)
{
    for (auto _ : state)
        benchmark::DoNotOptimize(instrumentedForward(*m));
}

void BM_instrCallGuard(benchmark::State& state, ModelFixture* m)
{
    for (auto _ : state) {
        kforge::runtime::CallGuard guard(false);
        benchmark::DoNotOptimize(instrumentedForward(*m));
        guard.finish(nullptr);
    }
}

void BM_instrCallGuardDigest(benchmark::State& state, ModelFixture* m)
{
    for (auto _ : state) {
        kforge::runtime::CallGuard guard(false);
        c10::IValue out = instrumentedForward(*m);
        guard.finish(nullptr);
        benchmark::DoNotOptimize(digest(out));
    }
}

void BM_sessionForward(benchmark::State& state, ModelFixture* m, KernelProviderRuntime* runtime)
{
    if (runtime)
        runtime->activate();
    for (auto _ : state)
        benchmark::DoNotOptimize(m->session->forward());
    if (runtime)
        runtime->deactivate();
}

// ModelSession::forward less the output digest: ModelSession::forwardDiscardingOutputs.
void BM_sessionNoDigest(benchmark::State& state, ModelFixture* m, KernelProviderRuntime* runtime)
{
    if (runtime)
        runtime->activate();
    for (auto _ : state)
        m->session->forwardDiscardingOutputs();
    if (runtime)
        runtime->deactivate();
}

void BM_sessionObserved(benchmark::State& state, ModelFixture* m)
{
    auto stream = kforge::EventStream::attach(1 << 16);
    std::vector<kforge::Event> events;
    for (auto _ : state) {
        benchmark::DoNotOptimize(m->session->forward());
        events.clear();
        stream->drain(events);
    }
}

// One observed forward per configuration: which replaceable functions ran, as provider or original.
std::string observe(ModelFixture& m, KernelProviderRuntime* runtime)
{
    std::map<std::string, int> counts;
    {
        auto stream = kforge::EventStream::attach();
        if (runtime)
            runtime->activate();
        m.session->forward();
        if (runtime)
            runtime->deactivate();
        std::vector<kforge::Event> events;
        stream->drain(events);
        for (const auto& e : events)
            if (e.kind == kforge::EventKind::ProviderCall)
                ++counts["provider:" + e.function];
            else if (e.kind == kforge::EventKind::OriginalCall)
                ++counts["original:" + e.function];
    }
    std::string s;
    for (const auto& [k, n] : counts)
        s += (s.empty() ? "" : " ") + k + "x" + std::to_string(n);
    return s;
}

kforge::OpenOptions benchOpenOptions()
{
    kforge::OpenOptions options;
    if (const char* executor = std::getenv("KFORGE_BENCH_EXECUTOR"))
        options.executor = kforge::graphExecutorFromName(executor).value_or(kforge::GraphExecutor::Direct);
    return options;
}

// `plain`: the model without instrumentation; `session`: the same model opened by the engine, with its inputs.
void setUp(const std::string& name, torch::jit::Module plain, std::unique_ptr<kforge::ModelSession> session,
           std::vector<std::string> called, std::string unused)
{
    auto m = std::make_unique<ModelFixture>();
    m->name = name;
    m->calledFunctions = std::move(called);
    m->unusedFunction = std::move(unused);
    m->plain = plain;
    m->session = std::move(session);
    m->plainInputs = sessionImpl(*m->session).inputs;
    m->emptyStack =
        std::make_unique<KernelProviderRuntime>(*m->session, kforge::Plan{{referenceEntry(m->unusedFunction)}});
    kforge::Plan all;
    for (const auto& f : m->calledFunctions)
        all.entries.push_back(referenceEntry(f));
    m->allReference = std::make_unique<KernelProviderRuntime>(*m->session, all);

    // Warm up the graph executors (profiling runs, then the optimized plan) in every configuration.
    for (int i = 0; i < 5; ++i) {
        plainForward(*m);
        instrumentedForward(*m);
        m->session->forward();
        for (auto* rt : {m->emptyStack.get(), m->allReference.get()}) {
            rt->activate();
            m->session->forward();
            rt->deactivate();
        }
    }
    const auto ref = plainForward(*m).toTensor();
    const auto inst = instrumentedForward(*m).toTensor();
    m->allReference->activate();
    const auto viaRef = instrumentedForward(*m).toTensor();
    m->allReference->deactivate();
    std::printf("%s: instrumented output equals uninstrumented: %s; with all reference providers: %s\n", name.c_str(),
                at::equal(ref, inst) ? "yes" : "NO", at::allclose(ref, viaRef) ? "yes" : "NO");
    std::printf("  observed inactive    : %s\n", observe(*m, nullptr).c_str());
    std::printf("  observed empty stack : %s\n", observe(*m, m->emptyStack.get()).c_str());
    std::printf("  observed all ref     : %s\n", observe(*m, m->allReference.get()).c_str());

    ModelFixture* p = m.get();
    const std::string b = name + "/";
    benchmark::RegisterBenchmark((b + "uninstrumented").c_str(), BM_uninstrumented, p)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "session_inactive").c_str(), BM_sessionForward, p, nullptr)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "active_empty_stack").c_str(), BM_sessionForward, p, p->emptyStack.get())
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "active_all_ref").c_str(), BM_sessionForward, p, p->allReference.get())
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "observed").c_str(), BM_sessionObserved, p)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "inactive_no_digest").c_str(), BM_sessionNoDigest, p, nullptr)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "empty_stack_no_digest").c_str(), BM_sessionNoDigest, p, p->emptyStack.get())
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "all_ref_no_digest").c_str(), BM_sessionNoDigest, p, p->allReference.get())
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "instr_graph_direct").c_str(), BM_instrGraphDirect, p)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "instr_callguard").c_str(), BM_instrCallGuard, p)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "instr_guard_digest").c_str(), BM_instrCallGuardDigest, p)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((b + "uninstr_digest").c_str(), BM_uninstrDigest, p)->Unit(benchmark::kMicrosecond);
    gModels.push_back(std::move(m));
}

// session_inactive's target is read against uninstr_digest (the same output digest on both sides); the ratio
// printed for it against the plain baseline includes the digest's own cost.
const char* verdict(const std::string& row, double ratio)
{
    if (row == "inactive_no_digest" || row == "session_vs_digest")
        return ratio <= 1.005 ? "  (<=0.5%: meets target)" : "  (>0.5%: MISSES target)";
    if (row == "observed")
        return ratio <= 1.10 ? "  (<=1.10x: meets target)" : "  (>1.10x: MISSES target)";
    return "";
}

void printSummary(kforge_bench::CollectingReporter& rep)
{
    std::printf("\n=== forward summary: time per forward, mean of repetitions (median in brackets); "
                "ratio to uninstrumented ===\n");
    std::printf(
        "targets: inactive_no_digest within 0.5%% of uninstrumented, session_inactive within 0.5%% of uninstr_digest "
        "(the design's Cost section says 1%%), "
        "observed within 1.10x\n");
    for (const bool cpu : {false, true}) {
        std::printf("\n--- %s ---\n", cpu ? "CPU time of the benchmark thread" : "real (wall) time");
        for (const auto& m : gModels) {
            const std::string b = m->name + "/";
            const auto* base = rep.stats(b + "uninstrumented", cpu);
            if (!base)
                continue;
            std::printf("%s (at::get_num_threads()=%d)\n", m->name.c_str(), at::get_num_threads());
            for (const char* row : {"uninstrumented", "session_inactive", "active_empty_stack", "active_all_ref",
                                    "observed", "inactive_no_digest", "empty_stack_no_digest", "all_ref_no_digest",
                                    "instr_graph_direct", "instr_callguard", "instr_guard_digest", "uninstr_digest"}) {
                const auto* s = rep.stats(b + row, cpu);
                if (!s)
                    continue;
                const double ratio = s->mean / base->mean, ratioMedian = s->median / base->median;
                std::printf("  %-20s %9.2f us [%9.2f] sd %6.2f (%2d reps)  ratio %.4f [%.4f]  %+6.2f%% [%+6.2f%%]%s\n",
                            row, s->mean / 1e3, s->median / 1e3, s->stddev / 1e3, s->reps, ratio, ratioMedian,
                            (ratio - 1) * 100, (ratioMedian - 1) * 100, verdict(row, ratio));
            }
            const auto* inactive = rep.stats(b + "session_inactive", cpu);
            if (const auto* digested = rep.stats(b + "uninstr_digest", cpu); inactive && digested)
                std::printf("  %-20s ratio %.4f  %+6.2f%% to uninstr_digest%s\n", "session_inactive",
                            inactive->mean / digested->mean, (inactive->mean / digested->mean - 1) * 100,
                            verdict("session_vs_digest", inactive->mean / digested->mean));
            // Attribution of the inactive overhead, in us per forward (means; differences of noisy figures).
            const auto* graph = rep.stats(b + "instr_graph_direct", cpu);
            const auto* guard = rep.stats(b + "instr_callguard", cpu);
            const auto* dig = rep.stats(b + "uninstr_digest", cpu);
            if (inactive && graph && guard && dig)
                std::printf("  inactive overhead %+.2f us = enter/exit ops %+.2f + call guard %+.2f + output digest "
                            "%+.2f + rest (method lookup, strings) %+.2f\n",
                            (inactive->mean - base->mean) / 1e3, (graph->mean - base->mean) / 1e3,
                            (guard->mean - graph->mean) / 1e3, (dig->mean - base->mean) / 1e3,
                            (inactive->mean - guard->mean - (dig->mean - base->mean)) / 1e3);
        }
    }
}

// --instructions: instructions per forward of the main rows, counted under callgrind in a child run.
constexpr const char* kCountedRows[] = {"uninstrumented",     "uninstr_digest",     "session_inactive",
                                        "inactive_no_digest", "active_empty_stack", "observed"};

// Each model's rows are counted in kCountRounds rounds, and the report gives the median over the rounds of each
// row's ratio to the baseline of the same round: the allocator's and the interpreter's hash tables' state moves a
// single count of deep-stack by up to ~0.5% between builds, with no change on the path counted.
constexpr int kCountRounds = 3;

void countEveryModel()
{
    for (int round = 0; round < kCountRounds; ++round)
        for (const auto& m : gModels) {
            const bool deep = m->name == "deep-stack";
            const int calls = deep ? 2 : 20, warmUp = deep ? 1 : 5;
            const std::string b = m->name + "/", tag = "#" + std::to_string(round);
            ModelFixture& fx = *m;
            kforge_bench::countInstructions(
                b + "uninstrumented" + tag, calls, [&] { plainForward(fx); }, warmUp);
            kforge_bench::countInstructions(
                b + "uninstr_digest" + tag, calls, [&] { digest(plainForward(fx)); }, warmUp);
            kforge_bench::countInstructions(
                b + "session_inactive" + tag, calls, [&] { fx.session->forward(); }, warmUp);
            kforge_bench::countInstructions(
                b + "inactive_no_digest" + tag, calls, [&] { fx.session->forwardDiscardingOutputs(); }, warmUp);
            fx.emptyStack->activate();
            kforge_bench::countInstructions(
                b + "active_empty_stack" + tag, calls, [&] { fx.session->forward(); }, warmUp);
            fx.emptyStack->deactivate();
            auto stream = kforge::EventStream::attach(1 << 16);
            std::vector<kforge::Event> events;
            kforge_bench::countInstructions(
                b + "observed" + tag, calls,
                [&] {
                    fx.session->forward();
                    events.clear();
                    stream->drain(events);
                },
                warmUp);
        }
}

int reportInstructions(const char* self)
{
    const auto counts = kforge_bench::instructionsPerCall(self, {"--instructions-child"});
    if (counts.empty())
        return 1;
    std::printf("\n=== instructions per forward (callgrind), median over %d rounds of the ratio to the same round's "
                "baseline ===\n"
                "targets: inactive_no_digest <= 0.5%% over uninstrumented, session_inactive <= 0.5%% over "
                "uninstr_digest (both digest their outputs), observed <= 1.10x\n",
                kCountRounds);
    for (const std::string model : {"tiny-gpt", "convnet", "deep-stack"}) {
        const auto count = [&](const std::string& row, int round) {
            const auto it = counts.find(model + "/" + row + "#" + std::to_string(round));
            return it == counts.end() ? -1.0 : it->second;
        };
        // The median over the rounds of row / baseline, with the rounds' smallest and largest ratio.
        const auto ratios = [&](const std::string& row, const std::string& baseline) {
            std::vector<double> r;
            for (int round = 0; round < kCountRounds; ++round)
                if (count(row, round) > 0 && count(baseline, round) > 0)
                    r.push_back(count(row, round) / count(baseline, round));
            std::sort(r.begin(), r.end());
            return r;
        };
        if (count("uninstrumented", 0) <= 0)
            continue;
        std::printf("%s\n", model.c_str());
        const auto print = [&](const std::string& label, const std::string& row, const std::string& baseline,
                               const char* verdictRow) {
            const auto r = ratios(row, baseline);
            if (r.empty())
                return;
            const double median = r[r.size() / 2];
            std::printf("  %-32s %14.0f  ratio %.4f  %+7.3f%%  (rounds %+.3f..%+.3f%%)%s\n", label.c_str(),
                        count(row, 0), median, (median - 1) * 100, (r.front() - 1) * 100, (r.back() - 1) * 100,
                        verdict(verdictRow, median));
        };
        for (const char* row : kCountedRows)
            print(row, row, "uninstrumented", row);
        print("session_inactive/uninstr_digest", "session_inactive", "uninstr_digest", "session_vs_digest");
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    at::set_num_threads(1);
    const bool countChild = argc > 1 && std::strcmp(argv[1], "--instructions-child") == 0;
    const bool countParent = argc > 1 && std::strcmp(argv[1], "--instructions") == 0;
    if (countParent) // the child runs the models; this process only reads its counts
        return reportInstructions(argv[0]);
    for (const std::string name : {"tiny-gpt", "convnet"}) {
        const bool gpt = name == "tiny-gpt";
        setUp(name, kforge::builtin::create(name)->module,
              kforge::ModelSession::open("builtin:" + name, benchOpenOptions()),
              gpt ? std::vector<std::string>{"layer_norm", "linear", "scaled_dot_product_attention", "gelu", "softmax"}
                  : std::vector<std::string>{"conv2d", "group_norm", "silu", "relu", "linear"},
              gpt ? "relu" : "gelu");
    }
    {
        const auto path =
            std::filesystem::temp_directory_path() / ("kforge-deep-stack-" + std::to_string(getpid()) + ".pt");
        kforge_bench::deepStackModel().save(path.string());
        auto session = kforge::ModelSession::open(path.string(), benchOpenOptions());
        session->setInputSpecs({"float32[2,8]"});
        setUp("deep-stack", torch::jit::load(path.string()), std::move(session), {"layer_norm", "linear", "gelu"},
              "relu");
        std::filesystem::remove(path);
    }
    std::printf("graph executor: %s (KFORGE_BENCH_EXECUTOR)\n\n",
                kforge::graphExecutorName(gModels.front()->session->options().executor).data());
    if (countChild) {
        countEveryModel();
        gModels.clear();
        return 0;
    }

    const int status = kforge_bench::runBenchmarks(
        argc, argv,
        {"--benchmark_repetitions=10", "--benchmark_min_time=0.3", "--benchmark_enable_random_interleaving=true"},
        printSummary);
    gModels.clear();
    return status;
}
