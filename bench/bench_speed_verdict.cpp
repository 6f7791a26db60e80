// SPDX-License-Identifier: Apache-2.0
// Calibrates the speed verdict (kforge/speed_verdict.h) of `kforge bench` (--study bench) or `kforge compare`
// (--study compare: the profiled comparison in alternating rounds, kforge/study.h) on a real model of the corpus, as
// docs/verify.md ("The speed verdict") reports it:
//
//   A/A     the same plan on both sides (BenchmarkOptions::baselinePlan), `--repeats` times: how often the verdict
//           says "faster" or "slower" when nothing differs (the false-positive rate; at most 5% by design)
//   power   the plan's side slowed by a known amount, `--power-repeats` times per slowdown: how often the verdict
//           says "slower" (and how often, wrongly, "faster")
//
// Both sides run one provider, BenchDelayedProvider, for `--function` in every module: it runs the original op and
// then spins for its "delay_ns" setting. The baseline's delay is 0, so the two sides differ only by the delay, whose
// total per forward is the slowdown times the median forward measured first (the calls per forward are counted).
// A compare's baseline runs without a plan, so its A/A is a pass-through provider against the model as it is; its
// "rows" column counts the function rows other than the provider's function that got a verdict (rows a user would
// see coloured although nothing there changed), out of the rows judged. Module rows are left out: a module's time
// includes its calls of the provider's function, which the provider does change.
// Nothing passes or fails: the counts are printed for people to judge.
//
//   bench_speed_verdict [--model timm_vit_tiny] [--form script|trace|pt2] [--corpus DIR] [--function gelu]
//                       [--repeats 100] [--power-repeats 30] [--rounds 20] [--warmup 2] [--threads 0]
//                       [--slowdowns 0.01,0.02,0.05,0.1] [--study bench|compare] [--aa-function mish]
//                       [--load 0] [--burst-threads 0] [--burst-ms 5] [--period-ms 50]
//
// --load N: N threads spin beside the measurement all the while, and --burst-threads more every --period-ms for
// --burst-ms (bench/competing_load.h): the calibration under a competing load, as users' machines have one.
// --aa-function F: the A/A plan is an entry for F, a function the model does not call, instead of the pass-through
// (a compare's no-op plan: the runtime active, nothing served).
#include "competing_load.h"
#include "corpus_dir.h"

#include <kforge/benchmark.h>
#include <kforge/functions.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/provider_sdk.h>
#include <kforge/speed_verdict.h>
#include <kforge/study.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::atomic<long> gDelayedCalls{0};

class DelayedProvider final : public kforge::KernelProvider {
public:
    DelayedProvider(kforge::Function function, std::string type) : m_function(function), m_type(std::move(type)) {}
    kforge::Function function() const override { return m_function; }
    std::string typeName() const override { return m_type; }
    nlohmann::json settings() const override { return {{"type", typeName()}, {"delay_ns", m_delayNs}}; }

protected:
    kforge::CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        op.callBoxed(stack);
        ++gDelayedCalls;
        // A spin, not a sleep: sleeps overshoot by tens of microseconds, and the delay must be what it says.
        const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(m_delayNs);
        while (std::chrono::steady_clock::now() < until) {
        }
        return kforge::CallResult::served();
    }
    void loadSettings(const nlohmann::json& settings) override { m_delayNs = settings.value("delay_ns", 0L); }

private:
    kforge::Function m_function;
    std::string m_type;
    long m_delayNs = 0;
};

kforge::Plan delayedPlan(const std::string& function, long delayNs, const char* type = "BenchDelayedProvider")
{
    kforge::PlanEntry e;
    e.function = function;
    e.provider = {{"type", type}, {"delay_ns", delayNs}};
    kforge::Plan plan;
    plan.entries.push_back(e);
    return plan;
}

struct Tally {
    int faster = 0, slower = 0, unchanged = 0, noisy = 0;
    long rowVerdicts = 0, rowsJudged = 0; // compare: untouched rows called faster or slower, of those judged
    std::vector<double> speedups, detectable;

    void add(const kforge::SpeedComparison& c)
    {
        faster += c.verdict == kforge::SpeedVerdict::Faster;
        slower += c.verdict == kforge::SpeedVerdict::Slower;
        unchanged += c.verdict == kforge::SpeedVerdict::NoDetectableChange;
        noisy += c.verdict == kforge::SpeedVerdict::TooNoisy;
        speedups.push_back(c.speedup);
        detectable.push_back(c.minDetectableChange);
    }
    int runs() const { return faster + slower + unchanged + noisy; }
};

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void printRow(const char* what, double slowdown, const Tally& t)
{
    std::printf("| %-5s | %5.1f%% | %4d | %6d | %6d | %9d | %9d | %7.3fx | %6.1f%% | %ld of %ld |\n", what,
                100 * slowdown, t.runs(), t.faster, t.slower, t.unchanged, t.noisy, median(t.speedups),
                100 * median(t.detectable), t.rowVerdicts, t.rowsJudged);
    std::fflush(stdout);
}

// One profiled compare (kforge compare) of the model against `plan`: the verdict on the whole iterations, and in
// `tally` the verdicts of the function rows the plan does not touch (every function but `function`).
kforge::SpeedComparison compareOnce(kforge::ModelSession& session, const kforge::Plan& plan, int warmup, int rounds,
                                    const std::string& function, Tally& tally)
{
    kforge::StudyOptions study;
    study.kind = kforge::StudyKind::Compare;
    study.warmupIterations = warmup;
    study.iterations = rounds;
    study.plan = plan;
    const kforge::StudyResult result = kforge::runStudy(session, study);
    if (!result.comparison)
        return {};
    for (const kforge::ComparisonRow& row : result.comparison->byFunction) {
        if (row.key == function || !row.speed.enoughRounds() || row.baselineUs <= 0 || row.planUs <= 0)
            continue;
        ++tally.rowsJudged;
        tally.rowVerdicts += kforge::isChange(row.speed.verdict);
    }
    return result.comparison->speed;
}

std::vector<double> parseList(const std::string& text)
{
    std::vector<double> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        out.push_back(std::stod(item));
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    std::string model = "timm_vit_tiny", form = "script", function = "gelu", slowdowns = "0.01,0.02,0.05,0.1",
                studyKind = "bench", aaFunction;
    fs::path corpus = kforge_bench::defaultCorpus();
    int repeats = 100, powerRepeats = 30, rounds = 20, warmup = 2, threads = 0;
    int load = 0, burstThreads = 0, burstMs = 5, periodMs = 50;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--model")
            model = value;
        else if (flag == "--form")
            form = value;
        else if (flag == "--corpus")
            corpus = value;
        else if (flag == "--function")
            function = value;
        else if (flag == "--repeats")
            repeats = std::stoi(value);
        else if (flag == "--power-repeats")
            powerRepeats = std::stoi(value);
        else if (flag == "--rounds")
            rounds = std::stoi(value);
        else if (flag == "--warmup")
            warmup = std::stoi(value);
        else if (flag == "--threads")
            threads = std::stoi(value);
        else if (flag == "--slowdowns")
            slowdowns = value;
        else if (flag == "--study")
            studyKind = value;
        else if (flag == "--aa-function")
            aaFunction = value;
        else if (flag == "--load")
            load = std::stoi(value);
        else if (flag == "--burst-threads")
            burstThreads = std::stoi(value);
        else if (flag == "--burst-ms")
            burstMs = std::stoi(value);
        else if (flag == "--period-ms")
            periodMs = std::stoi(value);
        else {
            std::fprintf(stderr, "bench_speed_verdict: unknown flag %s (see the comment at the top of the source)\n",
                         flag.c_str());
            return 2;
        }
    }
    // builtin:tiny-gpt and builtin:convnet carry their inputs; corpus models are files with an input file beside.
    const bool builtin = model.rfind("builtin:", 0) == 0;
    const fs::path file = builtin ? fs::path(model) : corpus / (model + (form == "pt2" ? ".pt2" : "." + form + ".pt"));
    if (!builtin && !fs::exists(file)) {
        std::printf("bench_speed_verdict: no %s (export the corpus first: ctest -R corpus_export); nothing to do\n",
                    file.c_str());
        return 0;
    }
    const auto fn = kforge::functionFromName(function);
    if (!fn) {
        std::fprintf(stderr, "bench_speed_verdict: no function '%s' in the catalog\n", function.c_str());
        return 2;
    }
    const auto aaFn = aaFunction.empty() ? fn : kforge::functionFromName(aaFunction);
    if (!aaFn) {
        std::fprintf(stderr, "bench_speed_verdict: no function '%s' in the catalog\n", aaFunction.c_str());
        return 2;
    }
    // A provider type serves one function: the A/A function's pass-through is a type of its own.
    kforge::ProviderRegistry::instance().add(
        {"BenchDelayedProvider", *fn, {"cpu"}, "bench: the original, then a spin", [f = *fn] {
             return std::make_unique<DelayedProvider>(f, "BenchDelayedProvider");
         }});
    if (!aaFunction.empty())
        kforge::ProviderRegistry::instance().add(
            {"BenchAAProvider", *aaFn, {"cpu"}, "bench: the original (an A/A entry)", [f = *aaFn] {
                 return std::make_unique<DelayedProvider>(f, "BenchAAProvider");
             }});

    kforge::OpenOptions open;
    open.intraOpThreads = threads; // for compare; bench sets them per run as well
    auto session = kforge::ModelSession::open(file.string(), open);
    if (!builtin)
        session->loadInputsFile((corpus / (model + ".input.pt")).string());
    const kforge::Plan same = delayedPlan(function, 0);
    // The A/A run's plan: the pass-through for `function`, or with --aa-function an entry for a function the model
    // does not call (a plan that can never fire: nothing should change).
    const kforge::Plan aaPlan = aaFunction.empty() ? same : delayedPlan(aaFunction, 0, "BenchAAProvider");
    kforge::BenchmarkOptions options;
    options.warmup = warmup;
    options.iterations = rounds;
    options.threads = threads;
    options.baselinePlan = &same;

    // The forward's median and the delayed function's calls per forward, from a short A/A run.
    const long callsBefore = gDelayedCalls;
    kforge::BenchmarkOptions probe = options;
    probe.iterations = 5;
    const kforge::BenchmarkResult first = kforge::benchmarkPlan(*session, same, probe);
    const double callsPerForward = double(gDelayedCalls - callsBefore) / (2.0 * (probe.warmup + probe.iterations));
    const double forwardMs = first.baseline.medianMs;
    std::printf("bench_speed_verdict: %s (%s), %s calls per forward %.0f, median forward %.2f ms; %d rounds after %d "
                "warm-up per run\n\n",
                file.filename().c_str(), studyKind.c_str(), function.c_str(), callsPerForward, forwardMs, rounds,
                warmup);
    const bool compare = studyKind == "compare";
    const auto measure = [&](const kforge::Plan& plan, Tally& tally) {
        if (compare)
            return compareOnce(*session, plan, warmup, rounds, function, tally);
        kforge::BenchmarkOptions run = options;
        if (&plan == &aaPlan && !aaFunction.empty())
            run.baselinePlan = nullptr; // the never-firing entry against the model as it is, as compare has it
        return kforge::benchmarkPlan(*session, plan, run).speed;
    };
    if (callsPerForward < 1) {
        std::printf("the model calls no %s: nothing to slow down (pick another --function)\n", function.c_str());
        return 0;
    }
    if (load > 0 || burstThreads > 0)
        std::printf("competing load: %d busy thread(s), %d more for %d ms every %d ms\n\n", load, burstThreads, burstMs,
                    periodMs);
    const kforge_bench::CompetingLoad competing(load, burstThreads, burstMs, periodMs);
    std::printf("| run   | slowed | runs | faster | slower | no change | too noisy | speedup | detects | rows |\n");
    std::printf("|-------|--------|------|--------|--------|-----------|-----------|---------|---------|------|\n");

    Tally aa;
    std::vector<double> falsePositives; // their speedups: how far from 1.0x a verdict was wrong
    if (!aaFunction.empty())
        std::printf("A/A plan: an entry for %s, which the model does not call\n\n", aaFunction.c_str());
    for (int r = 0; r < repeats; ++r) {
        const kforge::SpeedComparison c = measure(aaPlan, aa);
        aa.add(c);
        if (kforge::isChange(c.verdict))
            falsePositives.push_back(c.speedup);
    }
    printRow("A/A", 0.0, aa);

    for (const double slowdown : powerRepeats > 0 ? parseList(slowdowns) : std::vector<double>{}) {
        const long delayNs = long(slowdown * forwardMs * 1e6 / callsPerForward);
        const kforge::Plan slowed = delayedPlan(function, delayNs);
        Tally power;
        for (int r = 0; r < powerRepeats; ++r)
            power.add(measure(slowed, power));
        printRow("power", slowdown, power);
    }
    std::printf("\nA/A verdicts at:");
    for (double speedup : falsePositives)
        std::printf(" %.4fx", speedup);
    std::printf("\nfaster/slower in the A/A row are false positives (at most 5%% by design); in the power rows "
                "\"slower\" is the power and \"faster\" a wrong-way verdict. speedup and detects are medians over "
                "the runs (speedup = baseline / plan; the smallest change each run could detect).\n");
    return 0;
}
