// SPDX-License-Identifier: Apache-2.0
// kforge bench: is this model faster end to end with this plan? Forward latency without and with the plan, in
// alternating rounds in one process, without the profiler. Ctrl+C stops after the current round with a partial
// result.
#include "commands.h"
#include "output.h"
#include "progress.h"

#include <kforge/benchmark.h>
#include <kforge/error.h>
#include <kforge/model_session.h>

#include <cstdio>
#include <iostream>

namespace kforge::cli {
namespace {

struct BenchOptions {
    ModelOptions model;
    std::vector<std::string> provides;
    std::string planFile;
    std::string device = "cpu";
    BenchmarkOptions run;
    bool json = false;
    bool quiet = false;
};

std::string ms(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", value);
    return text;
}

std::string ratio(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3fx", value);
    return text;
}

nlohmann::ordered_json latencyJson(const LatencyStats& s)
{
    return {{"forwards", s.forwards},
            {"min_ms", s.minMs},
            {"median_ms", s.medianMs},
            {"p95_ms", s.p95Ms},
            {"max_ms", s.maxMs},
            {"mean_ms", s.meanMs},
            {"forwards_per_second", s.forwardsPerSecond}};
}

std::vector<std::string> row(const std::string& side, const LatencyStats& s)
{
    char throughput[32];
    std::snprintf(throughput, sizeof throughput, "%.1f/s", s.forwardsPerSecond);
    return {side, ms(s.minMs), ms(s.medianMs), ms(s.p95Ms), ms(s.maxMs), throughput};
}

// The verdict a reader wants first: faster, slower, or within noise (the interval contains 1).
std::string verdict(const BenchmarkResult& r)
{
    if (r.speedupLow > 1.0)
        return "the plan is faster";
    if (r.speedupHigh < 1.0)
        return "the plan is slower";
    return "no measurable difference (the interval contains 1.0x)";
}

void printText(const ModelSession& session, const BenchOptions& o, const BenchmarkResult& r)
{
    std::string inputs;
    for (const auto& d : session.describeInputs())
        inputs += (inputs.empty() ? "" : ", ") + d;
    std::cout << "model " << session.displayName() << "  inputs " << inputs << "  device " << session.device()
              << "  graph executor " << graphExecutorName(session.options().executor) << "  rounds "
              << r.baselineMs.size() << (r.stopped ? " (stopped: partial result)" : "") << " after " << o.run.warmup
              << " warm-up\n\n";
    const std::vector<Column> columns{{"", false},      {"MIN MS", true}, {"MEDIAN MS", true},
                                      {"P95 MS", true}, {"MAX MS", true}, {"THROUGHPUT", true}};
    std::cout << formatTable(columns, {row("baseline", r.baseline), row("plan", r.plan)});
    std::cout << "\nspeedup " << ratio(r.speedup) << " (95% interval " << ratio(r.speedupLow) << " to "
              << ratio(r.speedupHigh) << "): " << verdict(r) << '\n';
    std::cout << "outputs: "
              << (r.outputsAgree ? "agree within the correctness tolerances" : "DIFFER: " + r.outputsDifference)
              << '\n';
    for (const auto& d : r.declines)
        std::cout << describe(d) << '\n';
    for (const auto& note : r.notes)
        std::cout << "note: " << note << '\n';
}

void printJson(const ModelSession& session, const BenchOptions& o, const BenchmarkResult& r,
               const std::vector<PlanWarning>& warnings)
{
    nlohmann::ordered_json out{{"model", session.displayName()},
                               {"inputs", session.describeInputs()},
                               {"device", session.device()},
                               {"graph_executor", graphExecutorName(session.options().executor)},
                               {"warmup", o.run.warmup},
                               {"iterations", o.run.iterations},
                               {"rounds", r.baselineMs.size()},
                               {"stopped", r.stopped},
                               {"baseline", latencyJson(r.baseline)},
                               {"plan", latencyJson(r.plan)},
                               {"baseline_ms", r.baselineMs},
                               {"plan_ms", r.planMs},
                               {"speedup", r.speedup},
                               {"speedup_interval", {r.speedupLow, r.speedupHigh}},
                               {"outputs_agree", r.outputsAgree},
                               {"notes", r.notes},
                               {"declines", nlohmann::ordered_json::array()},
                               {"warnings", nlohmann::ordered_json(warnings)}};
    if (!r.outputsAgree)
        out["outputs_difference"] = r.outputsDifference;
    for (const auto& d : r.declines)
        out["declines"].push_back(nlohmann::ordered_json(d));
    std::cout << out.dump(2) << '\n';
}

} // namespace

Command addBenchCommand(CLI::App& app)
{
    auto o = std::make_shared<BenchOptions>();
    auto* cmd = app.add_subcommand(
        "bench", "Forward latency without and with a plan, in alternating rounds, with the speedup and whether the "
                 "outputs agree (no profiler)");
    addModelOptions(cmd, o->model);
    cmd->add_option("--plan", o->planFile, "plan file (kforge or AITune dialect); --provide entries come after it")
        ->type_name("FILE");
    cmd->add_option("--provide", o->provides, "SCOPE:FUNCTION:PROVIDER[:{json settings}] plan entry")
        ->type_name("SPEC");
    cmd->add_option("--device", o->device, "where the model runs")
        ->check(CLI::IsMember({"cpu", "cuda"}))
        ->capture_default_str();
    cmd->add_option("--warmup", o->run.warmup, "rounds before measuring (each runs both sides)")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    cmd->add_option("--iterations", o->run.iterations, "measured rounds (one baseline and one plan forward each)")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd->add_option("--threads", o->run.threads, "LibTorch intra-op threads (0: LibTorch's default)")
        ->check(CLI::Range(0, 1024))
        ->capture_default_str();
    cmd->add_flag("--json", o->json, "JSON output");
    cmd->add_flag("--quiet,-q", o->quiet, "no progress on stderr");
    return {cmd, [o] {
                auto session = openModel(o->model);
                if (o->device != "cpu")
                    session->setDevice(o->device);
                requireInputs(*session);
                const Plan plan = planFromOptions(o->planFile, o->provides);
                if (plan.entries.empty())
                    throw Error("bench", "no plan: give --plan FILE or --provide SCOPE:FUNCTION:PROVIDER");
                const auto warnings = warnPlan(plan, *session, session->device());
                BenchmarkResult result;
                {
                    InterruptGuard guard;
                    Progress progress(o->quiet, "bench: ");
                    result = benchmarkPlan(*session, plan, o->run, progress.callback(o->run.warmup, "round"));
                }
                if (o->json)
                    printJson(*session, *o, result, warnings);
                else
                    printText(*session, *o, result);
                return result.stopped ? kInterruptedExitCode : 0;
            }};
}

} // namespace kforge::cli
