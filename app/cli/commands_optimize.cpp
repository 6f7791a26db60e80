// SPDX-License-Identifier: Apache-2.0
// kforge optimize: make_plan on a model; writes the plan and prints why each candidate was kept or not.
#include "commands.h"
#include "output.h"
#include "progress.h"

#include <kforge/optimizer.h>
#include <kforge/plan.h>
#include <kforge/speed_verdict.h>

#include <unistd.h>

#include <iostream>
#include <map>
#include <optional>

namespace kforge::cli {

Command addOptimizeCommand(CLI::App& app)
{
    struct Options {
        ModelOptions model;
        std::string out, device = "cpu";
        double minShare = 0.0, generationTimeout = defaultGenerationTimeoutSeconds();
        double maxDetectable = kDefaultMaxDetectableChange;
        std::optional<double> maxPeakIncrease;
        std::vector<std::string> generators{"all"}, providers;
        OptimizeOptions::Granularity granularity = OptimizeOptions::Granularity::Auto;
        int warmup = 3, iterations = 5, rounds = 9;
        bool quiet = false, reference = false, noVerify = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("optimize", "Find the fastest correct provider per function and write a plan");
    addModelOptions(cmd, o->model);
    cmd->add_option("-o,--out", o->out, "plan file to write (kforge dialect)")->required();
    addDeviceOption(cmd, o->device, "where the model runs and the candidates are measured");
    cmd->add_option("--min-share", o->minShare, "skip functions below this share of the time (percent)")
        ->check(CLI::Range(0.0, 100.0));
    cmd->add_option("--warmup", o->warmup, "warm-up forwards of the profile")->check(CLI::Range(0, 1000));
    cmd->add_option("--iterations", o->iterations, "measured forwards of the profile")->check(CLI::Range(1, 100000));
    cmd->add_option("--rounds", o->rounds,
                    "benchmark rounds per candidate, interleaved with the original (a candidate is kept only on a "
                    "\"faster\" verdict, which takes 6 or more)")
        ->check(CLI::Range(1, 1000));
    cmd->add_flag("--include-reference", o->reference, "also try the Aten*Provider reference providers");
    cmd->add_flag("--no-verify", o->noVerify,
                  "keep the plan without checking it on the model's outputs (by default entries in effect where the "
                  "outputs diverge are dropped, as kforge verify would find them)");
    cmd->add_option("--providers", o->providers,
                    "try only these provider types (kforge providers; default: every type for the device)")
        ->delimiter(',');
    const std::map<std::string, OptimizeOptions::Granularity> granularities{
        {"model", OptimizeOptions::Granularity::Model},
        {"module", OptimizeOptions::Granularity::Module},
        {"auto", OptimizeOptions::Granularity::Auto}};
    cmd->add_option("--granularity", o->granularity,
                    "model: one provider per function; module: per module scope where the calls differ and that "
                    "wins; auto: per module only when 3% or more faster")
        ->transform(CLI::CheckedTransformer(granularities, CLI::ignore_case))
        ->default_str("auto");
    cmd->add_option("--generators", o->generators,
                    "kernel generators to ask for providers too: all, none, or names (kforge generators)")
        ->default_str("all");
    cmd->add_option("--generation-timeout", o->generationTimeout,
                    "seconds each generation task may take (default: KFORGE_GENERATION_TIMEOUT, else 60)")
        ->check(CLI::PositiveNumber);
    addMaxDetectableOption(cmd, o->maxDetectable);
    cmd->add_option("--max-peak-increase", o->maxPeakIncrease,
                    "a budget on the forward's peak memory, percent above the model's own: candidates whose extra "
                    "workspace could break it are rejected, and the plan made is measured against it")
        ->check(CLI::NonNegativeNumber);
    addJsonFlag(cmd, "JSON report");
    addQuietFlag(cmd, o->quiet);
    return {cmd, [o](Report& report) {
                auto session = openModel(o->model, report);
                requireInputs(*session);
                OptimizeOptions options;
                options.device = o->device;
                options.minSharePercent = o->minShare;
                options.warmupIterations = o->warmup;
                options.iterations = o->iterations;
                options.benchmarkRounds = o->rounds;
                options.maxDetectableChange = o->maxDetectable;
                options.includeReferenceProviders = o->reference;
                options.providers = o->providers;
                options.generators = o->generators;
                if (options.generators == std::vector<std::string>{"none"})
                    options.generators.clear();
                options.generationTimeoutSeconds = o->generationTimeout;
                options.granularity = o->granularity;
                options.verifyOutputs = !o->noVerify;
                options.maxPeakIncreasePercent = o->maxPeakIncrease;
                // Its lines are progress: shown on a terminal only, as every command's progress is.
                if (!o->quiet && ::isatty(STDERR_FILENO) == 1)
                    options.log = [](const std::string& line) { std::cerr << "kforge: " << line << '\n'; };
                InterruptGuard guard; // the first Ctrl+C stops after the current forward or candidate
                options.progress = [](int, int) { return !interrupted(); };
                OptimizeResult result = makePlan(*session, options);
                if (result.cancelled)
                    report.diagnostic("stopped by Ctrl+C: the plan holds the functions tried before it");
                result.plan.modelName = session->displayName();
                savePlan(result.plan, o->out);
                // The plan written must fire where it was measured; a warning here is a make_plan bug to report.
                warnPlan(report, planNotes(result.plan, *session, o->device));
                report.exitCode = result.cancelled ? kInterruptedExitCode : 0;
                {
                    nlohmann::ordered_json& out = report.json;
                    out = {{"plan", o->out},
                           {"stopped", result.cancelled},
                           {"functions", nlohmann::ordered_json::array()},
                           {"candidates", nlohmann::ordered_json::array()}};
                    for (const auto& f : result.functions)
                        out["functions"].push_back({{"function", f.function},
                                                    {"share_percent", f.sharePercent},
                                                    {"unique_samples", f.uniqueSamples},
                                                    {"benchmark_samples", f.benchmarkSamples},
                                                    {"skipped", f.skipped},
                                                    {"granularity", f.granularity},
                                                    {"per_module", f.perModule}});
                    for (const auto& c : result.candidates)
                        out["candidates"].push_back(
                            {{"function", c.function},
                             {"provider", c.provider},
                             {"generator", c.generator},
                             {"generation", c.generation},
                             {"settings", c.settings},
                             {"latency_us", c.latencyUs},
                             {"original_latency_us", c.originalLatencyUs},
                             {"verdict", speedVerdictName(c.speed.verdict)},
                             {"speedup", c.speed.speedup},
                             {"max_abs_error", c.correctness.maxAbsError},
                             {"kept", c.kept},
                             {"rejected", c.rejected},
                             {"same_as", c.sameAs},
                             {"speedup_interval", {c.speed.low, c.speed.high}},
                             {"min_detectable_change", c.speed.minDetectableChange},
                             {"noise", c.speed.noise},
                             {"stalls", c.stalls},
                             {"peak_growth_bytes", c.peakGrowthBytes ? nlohmann::ordered_json(*c.peakGrowthBytes)
                                                                     : nlohmann::ordered_json()}});
                    out["verified"] = result.verification ? nlohmann::ordered_json(result.verification->passed)
                                                          : nlohmann::ordered_json();
                    out["dropped_by_verify"] = result.droppedByVerify;
                    if (result.peak)
                        out["peak_memory"] = {{"baseline_bytes", result.peak->baselineBytes},
                                              {"plan_bytes", result.peak->planBytes},
                                              {"change_percent", result.peak->percent()},
                                              {"budget_percent", *o->maxPeakIncrease}};
                    out["dropped_by_peak_budget"] = result.droppedByBudget;
                }
                std::ostream& out = report.text;
                std::vector<std::vector<std::string>> functions;
                for (const auto& f : result.functions)
                    functions.push_back({f.function, fixed(f.sharePercent, 1) + "%", std::to_string(f.uniqueSamples),
                                         f.skipped.empty() ? "tried" : f.skipped});
                out << formatTable({"FUNCTION", "SHARE", "SAMPLES", "STATUS"}, functions) << '\n';
                std::vector<std::vector<std::string>> rows;
                for (const auto& c : result.candidates)
                    rows.push_back({c.function, c.provider.empty() ? c.settings.dump() : c.provider,
                                    c.generator.empty() ? "provided" : "generated",
                                    c.latencyUs > 0 ? fixed(c.latencyUs, 1) : "-",
                                    c.originalLatencyUs > 0 ? fixed(c.originalLatencyUs, 1) : "-",
                                    c.speed.speedup > 0 ? fixed(c.speed.speedup, 2) + "x" : "-",
                                    c.correctness.passed ? fixed(c.correctness.maxAbsError, 7) : "-",
                                    c.kept ? "KEPT" : c.rejected});
                out << formatTable({"FUNCTION", "CANDIDATE", "SOURCE", "LATENCY us", "ORIGINAL us", "SPEEDUP",
                                    "MAX ABS ERR", "RESULT"},
                                   rows);
                for (const auto& c : result.candidates) // what each generator made, or why it made nothing
                    if (!c.generator.empty() && !c.generation.empty())
                        out << "  " << c.function << " <- " << c.generator << ": " << c.generation << '\n';
                for (const auto& c : result.candidates) // rounds that waited on the machine, left out of the verdict
                    if (c.stalls.any())
                        out << "  " << c.function << " <- " << c.provider << ": " << describe(c.stalls) << '\n';
                for (const auto& f : result.functions) // per-module choices, or why one choice was kept
                    if (!f.perModule.empty())
                        out << "  " << f.function << " (" << f.granularity << "): " << f.perModule << '\n';
                for (const std::string& line : result.droppedByVerify)
                    out << "  verify dropped " << line << '\n';
                for (const std::string& line : result.droppedByBudget)
                    out << "  peak budget dropped " << line << '\n';
                if (result.peak)
                    out << "peak memory: " << describePeakChange(*result.peak) << ", budget +"
                        << fixed(*o->maxPeakIncrease, 1) << "%\n";
                if (result.verification)
                    out << "verify: " << (result.verification->passed ? "the plan keeps the model's outputs" : "FAIL")
                        << '\n';
                out << "\nplan: " << o->out << " (" << result.plan.entries.size() << " entries)\n";
            }};
}

} // namespace kforge::cli
