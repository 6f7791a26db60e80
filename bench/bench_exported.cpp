// SPDX-License-Identifier: Apache-2.0
// Forward latency of one real model (the test corpus, scripts/corpus_export.py) in each form kforge runs, and what
// interception costs on each. Rows, all on one thread, all in this process:
//
//   script/plain            the TorchScript file (M.script.pt, else M.trace.pt) loaded with torch::jit::load,
//                           forward with the direct executor: the baseline every ratio is against
//   script/session_inactive ModelSession::forwardDiscardingOutputs of the same file, no runtime active (instrumented)
//   script/session_active   the same with an active runtime whose one entry names a function the model never calls:
//                           every catalog op is intercepted and runs its original; activated and deactivated around
//                           each forward
//   script/active_steady    the same runtime activated once for all forwards: the steady state, without activation
//   script/scoped_steady    the same entry scoped to the root's first called child instead of the root: every
//                           module's hooks run (a root-only plan runs the plain copies between the root's hooks)
//   pt2/nativert            the .pt2 package in NativeRT (torch::nativert::ModelRunnerHandle), as PyTorch deploys
//                           it: static CPU kernels, no interception possible (docs/design/pt2-nativert-notes.md)
//   pt2/session_inactive    ModelSession::forwardDiscardingOutputs of the .pt2: kforge's node-by-node interpreter
//   pt2/session_active      the same with the active runtime as above
//   pt2/active_steady       and activated once
//   pt2/scoped_steady       and scoped to the root's first called child
//
// `bench_exported --instructions [--model M]` counts instructions per forward of the same rows under callgrind instead
// (instruction_count.h): the cost of the instrumentation on a real model, free of the machine's timing noise.
//
// After the run, bench_exported_eager.py times eager PyTorch, the exported program in Python and the TorchScript file
// in Python (another process: compare its ratios with care) when the LibTorch venv's Python is there.
//
//   bench_exported [--model NAME] [--corpus DIR] [benchmark flags]   (default resnet18 in the corpus cache)
#include "build_path.h"
#include "bench_common.h"
#include "corpus_dir.h"
#include "instruction_count.h"

#include "model/session_impl.h"

#include <kforge/functions.h>
#include <kforge/model_session.h>
#include <kforge/provider_catalog.h>
#include <kforge/plan.h>
#include <kforge/runtime.h>

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/nativert/ModelRunnerHandle.h>
#include <torch/script.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Fixture {
    fs::path corpus;
    std::string model;
    torch::jit::Module plain;
    std::unique_ptr<torch::nativert::ModelRunnerHandle> nativert;
    std::unique_ptr<kforge::ModelSession> script, exported;
    std::unique_ptr<kforge::KernelProviderRuntime> scriptActive, exportedActive, scriptScoped, exportedScoped;
    std::vector<c10::IValue> inputs;
};
Fixture* gFx = nullptr;

// NativeRT on the package's program: "model" as torch.export.save names it, else "forward" (package_pt2's default).
// Null, with the reason printed, when NativeRT refuses the package (it cannot run some Hugging Face exports): the
// pt2/nativert row is then left out.
std::unique_ptr<torch::nativert::ModelRunnerHandle> nativeRuntime(const fs::path& pt2)
{
    std::string refusal;
    for (const char* program : {"model", "forward"}) {
        try {
            return std::make_unique<torch::nativert::ModelRunnerHandle>(pt2.string(), program);
        } catch (const c10::Error& e) {
            if (refusal.empty())
                refusal = e.what_without_backtrace();
        }
    }
    std::fprintf(stderr, "bench_exported: NativeRT refuses %s, so no pt2/nativert row: %s\n", pt2.c_str(),
                 refusal.c_str());
    return nullptr;
}

// A runtime whose only entry names a function the model never calls: every catalog op is intercepted, none replaced.
// Scoped to the root, or with `belowRoot` to the root's first child whose forward is called.
std::unique_ptr<kforge::KernelProviderRuntime> activeRuntime(kforge::ModelSession& session, bool belowRoot = false)
{
    const auto& modules = session.modules();
    const auto& called = modules.front().subtreeFunctions;
    std::string scope;
    if (belowRoot)
        for (const kforge::ModuleInfo& m : modules)
            if (m.depth == 1 && m.hasForward && m.forwardCalled) {
                scope = m.path;
                break;
            }
    for (const kforge::Function f : kforge::allFunctions()) {
        const std::string name(kforge::functionName(f));
        if (called.count(name))
            continue;
        kforge::PlanEntry e;
        e.scope = scope;
        e.function = name;
        e.provider = {{"type", kforge::referenceProviderType(f)}};
        return std::make_unique<kforge::KernelProviderRuntime>(session, kforge::Plan{{e}});
    }
    return nullptr;
}

void BM_plain(benchmark::State& state)
{
    at::NoGradGuard noGrad;
    torch::jit::GraphOptimizerEnabledGuard direct(false);
    for (auto _ : state)
        benchmark::DoNotOptimize(gFx->plain.forward(gFx->inputs));
}

void BM_nativert(benchmark::State& state)
{
    at::NoGradGuard noGrad;
    for (auto _ : state)
        benchmark::DoNotOptimize(gFx->nativert->run(gFx->inputs, {}));
}

void BM_session(benchmark::State& state, kforge::ModelSession* session, kforge::KernelProviderRuntime* runtime)
{
    for (auto _ : state) {
        if (runtime)
            runtime->activate();
        session->forwardDiscardingOutputs();
        if (runtime)
            runtime->deactivate();
    }
}

void BM_steady(benchmark::State& state, kforge::ModelSession* session, kforge::KernelProviderRuntime* runtime)
{
    runtime->activate();
    for (auto _ : state)
        session->forwardDiscardingOutputs();
    runtime->deactivate();
}

// bench_exported_eager.py in the LibTorch venv's Python, if both are there: its JSON line, or "".
std::string pythonFigures(const Fixture& fx)
{
    const fs::path python = fs::path(KFORGE_TORCH_LIB_DIR) / "../../../../../bin/python";
    const fs::path script = fs::path(KFORGE_BENCH_SOURCE_DIR) / "bench_exported_eager.py";
    if (!fs::exists(python) || !fs::exists(script))
        return "";
    const std::string command = "'" + python.string() + "' '" + script.string() + "' '" + fx.corpus.string() + "' '" +
                                fx.model + "' 2>/dev/null";
    std::string out;
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char buffer[512];
        while (fgets(buffer, sizeof buffer, pipe))
            out += buffer;
        pclose(pipe);
    }
    return out;
}

constexpr const char* kRows[] = {
    "script/plain", "script/session_inactive", "script/session_active", "script/active_steady", "script/scoped_steady",
    "pt2/nativert", "pt2/session_inactive",    "pt2/session_active",    "pt2/active_steady",    "pt2/scoped_steady"};

void printSummary(kforge_bench::CollectingReporter& rep)
{
    std::printf("\n=== %s: forward latency, median of repetitions (mean in brackets), ratio to script/plain ===\n",
                gFx->model.c_str());
    const auto* base = rep.stats("script/plain");
    if (!base)
        return;
    for (const char* row : kRows)
        if (const auto* s = rep.stats(row))
            std::printf("  %-24s %9.3f ms [%9.3f] sd %6.3f  ratio %.3f\n", row, s->median / 1e6, s->mean / 1e6,
                        s->stddev / 1e6, s->median / base->median);
    const auto* nrt = rep.stats("pt2/nativert");
    const auto* pt2 = rep.stats("pt2/session_inactive");
    const auto* pt2Active = rep.stats("pt2/session_active");
    if (nrt && pt2 && pt2Active)
        std::printf("  kforge's .pt2 interpreter vs NativeRT: %.3fx inactive, %.3fx intercepting every op\n",
                    pt2->median / nrt->median, pt2Active->median / nrt->median);
    const std::string python = pythonFigures(*gFx);
    std::printf("  Python (another process, bench_exported_eager.py): %s\n",
                python.empty() ? "not run (no LibTorch venv Python)" : python.c_str());
}

void countRows()
{
    at::NoGradGuard noGrad;
    torch::jit::GraphOptimizerEnabledGuard direct(false);
    const auto count = [](const char* row, const std::function<void()>& forward) {
        kforge_bench::countInstructions(row, 3, forward, 2);
    };
    const auto session = [](kforge::ModelSession* s, kforge::KernelProviderRuntime* runtime) {
        return [s, runtime] {
            if (runtime)
                runtime->activate();
            s->forwardDiscardingOutputs();
            if (runtime)
                runtime->deactivate();
        };
    };
    // Activated once around the counted forwards: what an active runtime costs a forward, activation aside.
    const auto steady = [&](const char* row, kforge::ModelSession* s, kforge::KernelProviderRuntime* runtime) {
        runtime->activate();
        count(row, [s] { s->forwardDiscardingOutputs(); });
        runtime->deactivate();
    };
    count(kRows[0], [] { gFx->plain.forward(gFx->inputs); });
    count(kRows[1], session(gFx->script.get(), nullptr));
    count(kRows[2], session(gFx->script.get(), gFx->scriptActive.get()));
    steady(kRows[3], gFx->script.get(), gFx->scriptActive.get());
    steady(kRows[4], gFx->script.get(), gFx->scriptScoped.get());
    if (gFx->nativert)
        count(kRows[5], [] { gFx->nativert->run(gFx->inputs, {}); });
    count(kRows[6], session(gFx->exported.get(), nullptr));
    count(kRows[7], session(gFx->exported.get(), gFx->exportedActive.get()));
    steady(kRows[8], gFx->exported.get(), gFx->exportedActive.get());
    steady(kRows[9], gFx->exported.get(), gFx->exportedScoped.get());
}

int reportInstructions(const char* self, const Fixture& fx)
{
    const auto counts = kforge_bench::instructionsPerCall(
        self, {"--instructions-child", "--model", fx.model, "--corpus", fx.corpus.string()});
    const auto base = counts.find(kRows[0]);
    if (base == counts.end())
        return 1;
    std::printf("\n=== %s: instructions per forward (callgrind; deterministic), ratio to script/plain ===\n"
                "(session_active rows include activating and deactivating the runtime once per forward; active_steady "
                "rows activate it once)\n",
                fx.model.c_str());
    for (const char* row : kRows)
        if (const auto it = counts.find(row); it != counts.end())
            std::printf("  %-24s %14.0f  ratio %.4f  %+7.3f%%\n", row, it->second, it->second / base->second,
                        (it->second / base->second - 1) * 100);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    at::set_num_threads(1);
    Fixture fx;
    fx.corpus = kforge_bench::defaultCorpus();
    fx.model = "resnet18";
    std::vector<char*> rest{argv[0]};
    std::string mode; // "", "--instructions" (parent) or "--instructions-child"
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--model" && i + 1 < argc)
            fx.model = argv[++i];
        else if (a == "--corpus" && i + 1 < argc)
            fx.corpus = argv[++i];
        else if (a == "--instructions" || a == "--instructions-child")
            mode = a;
        else
            rest.push_back(argv[i]);
    }
    // The TorchScript form: scripted where the corpus scripts the model, else traced (Hugging Face models).
    const fs::path pt2 = fx.corpus / (fx.model + ".pt2");
    fs::path script = fx.corpus / (fx.model + ".script.pt");
    if (!fs::exists(script))
        script = fx.corpus / (fx.model + ".trace.pt");
    if (!fs::exists(pt2) || !fs::exists(script)) {
        std::printf("bench_exported: no %s and %s (export the corpus first: ctest -R corpus_export); nothing to do\n",
                    pt2.c_str(), script.c_str());
        return 0;
    }
    if (mode == "--instructions")
        return reportInstructions(argv[0], fx);
    gFx = &fx;
    fx.plain = torch::jit::load(script.string());
    fx.plain.eval();
    fx.script = kforge::ModelSession::open(script.string());
    fx.script->loadInputsFile((fx.corpus / (fx.model + ".input.pt")).string());
    fx.exported = kforge::ModelSession::open(pt2.string());
    fx.exported->loadInputsFile((fx.corpus / (fx.model + ".input.pt")).string());
    fx.inputs = sessionImpl(*fx.script).inputs;
    fx.nativert = nativeRuntime(pt2);
    fx.scriptActive = activeRuntime(*fx.script);
    fx.exportedActive = activeRuntime(*fx.exported);
    fx.scriptScoped = activeRuntime(*fx.script, true);
    fx.exportedScoped = activeRuntime(*fx.exported, true);
    if (mode == "--instructions-child") {
        countRows();
        return 0;
    }

    benchmark::RegisterBenchmark("script/plain", BM_plain)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("script/session_inactive", BM_session, fx.script.get(), nullptr)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("script/session_active", BM_session, fx.script.get(), fx.scriptActive.get())
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("script/active_steady", BM_steady, fx.script.get(), fx.scriptActive.get())
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("script/scoped_steady", BM_steady, fx.script.get(), fx.scriptScoped.get())
        ->Unit(benchmark::kMillisecond);
    if (fx.nativert)
        benchmark::RegisterBenchmark("pt2/nativert", BM_nativert)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("pt2/session_inactive", BM_session, fx.exported.get(), nullptr)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("pt2/session_active", BM_session, fx.exported.get(), fx.exportedActive.get())
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("pt2/active_steady", BM_steady, fx.exported.get(), fx.exportedActive.get())
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("pt2/scoped_steady", BM_steady, fx.exported.get(), fx.exportedScoped.get())
        ->Unit(benchmark::kMillisecond);
    const int status = kforge_bench::runBenchmarks(
        int(rest.size()), rest.data(),
        {"--benchmark_repetitions=7", "--benchmark_min_time=0.3", "--benchmark_enable_random_interleaving=true"},
        printSummary);
    gFx = nullptr;
    return status;
}
