// SPDX-License-Identifier: Apache-2.0
// kforge bench: is this model faster end to end with this plan? Forward latency without and with the plan, in
// alternating rounds in one process, without the profiler. Ctrl+C stops after the current round with a partial
// result.
#include "commands.h"
#include "memory_tables.h"
#include "output.h"
#include "progress.h"

#include <kforge/benchmark.h>
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/speed_verdict.h>

#include <cstdio>
#include <filesystem>
#include <ostream>

namespace kforge::cli {
namespace {

struct BenchOptions {
    ModelOptions model;
    std::string against; // another file of the model, the baseline side
    PlanOptions plan;
    std::string device = "cpu";
    BenchmarkOptions run;
    bool quiet = false;
};

std::string againstName(const BenchOptions& o) { return std::filesystem::path(o.against).filename().string(); }

std::string ms(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", value);
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

void printText(std::ostream& out, const ModelSession& session, const BenchOptions& o, const BenchmarkResult& r)
{
    std::string inputs;
    for (const auto& d : session.describeInputs())
        inputs += (inputs.empty() ? "" : ", ") + d;
    out << "model " << session.displayName() << "  inputs " << inputs << "  device " << session.device()
        << "  graph executor " << session.forwardProgram() << "  rounds " << r.baselineMs.size()
        << (r.stopped ? " (stopped: partial result)" : "") << " after " << o.run.warmup << " warm-up\n\n";
    const std::vector<Column> columns{{"", false},      {"MIN MS", true}, {"MEDIAN MS", true},
                                      {"P95 MS", true}, {"MAX MS", true}, {"THROUGHPUT", true}};
    // Against another file, the sides are the two files (the plan, if any, applies to MODEL).
    const std::string baseline = o.against.empty() ? "baseline" : againstName(o);
    const std::string plan = o.against.empty() ? "plan" : session.displayName();
    out << formatTable(columns, {row(baseline, r.baseline), row(plan, r.plan)});
    // The verdict a reader wants first: faster, slower, or no detectable change, with what the run could detect.
    out << '\n'
        << (o.against.empty() ? "the plan against the baseline" : plan + " against " + baseline) << ": "
        << describe(r.speed) << '\n';
    if (r.stalls.any())
        out << describe(r.stalls) << '\n';
    out << "outputs: "
        << (r.outputsAgree ? "agree (kforge verify's default thresholds)" : "DIFFER: " + r.outputsDifference) << '\n';
    if (!r.outputsNondeterminism.empty())
        out << "note: " << r.outputsNondeterminism << '\n';
    for (const auto& d : r.declines)
        out << describe(d) << '\n';
    for (const auto& note : r.notes)
        out << "note: " << note << '\n';
}

nlohmann::ordered_json toJson(const ModelSession& session, const BenchOptions& o, const BenchmarkResult& r)
{
    nlohmann::ordered_json out{
        {"model", session.displayName()},
        {"inputs", session.describeInputs()},
        {"device", session.device()},
        {"graph_executor", session.forwardProgram()},
        {"warmup", o.run.warmup},
        {"iterations", o.run.iterations},
        {"rounds", r.baselineMs.size()},
        {"stopped", r.stopped},
        {"against", o.against.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(againstName(o))},
        {"baseline", latencyJson(r.baseline)},
        {"plan", latencyJson(r.plan)},
        {"baseline_ms", r.baselineMs},
        {"plan_ms", r.planMs},
        {"verdict", speedVerdictName(r.speed.verdict)},
        {"speedup", r.speed.speedup},
        {"speedup_interval", {r.speed.low, r.speed.high}},
        {"min_detectable_change", r.speed.minDetectableChange},
        {"noise", r.speed.noise},
        {"stalls", r.stalls},
        {"outputs_agree", r.outputsAgree},
        {"notes", r.notes},
        {"declines", nlohmann::ordered_json::array()}};
    if (!r.outputsAgree)
        out["outputs_difference"] = r.outputsDifference;
    if (!r.outputsNondeterminism.empty())
        out["outputs_nondeterminism"] = r.outputsNondeterminism;
    for (const auto& d : r.declines)
        out["declines"].push_back(nlohmann::ordered_json(d));
    return out;
}

} // namespace

Command addBenchCommand(CLI::App& app)
{
    auto o = std::make_shared<BenchOptions>();
    auto* cmd = app.add_subcommand(
        "bench", "Forward latency without and with a plan, or against another file of the model (--against), in "
                 "alternating rounds, with the speedup and whether the outputs agree (no profiler)");
    addModelOptions(cmd, o->model);
    cmd->add_option("--against", o->against,
                    "another file of the same model as the baseline side, with the same inputs (the exported "
                    "program an AOTInductor package was compiled from, the scripted form of a traced model): what "
                    "the form of MODEL buys; a plan, then optional, applies to MODEL only")
        ->type_name("MODEL");
    addPlanOptions(cmd, o->plan);
    addDeviceOption(cmd, o->device, "where the model runs");
    cmd->add_option("--warmup", o->run.warmup, "rounds before measuring (each runs both sides)")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    cmd->add_option("--iterations", o->run.iterations, "measured rounds (one baseline and one plan forward each)")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    addMaxDetectableOption(cmd, o->run.maxDetectableChange);
    addJsonFlag(cmd);
    addQuietFlag(cmd, o->quiet);
    return {cmd, [o](Report& report) {
                // Against another file of the model, a plan is optional: the two files are the sides.
                auto [session, plan] =
                    openWithPlan("bench", o->model, o->plan, o->device, report, /*planOptional=*/!o->against.empty());
                std::unique_ptr<ModelSession> against;
                BenchmarkOptions run = o->run;
                if (!o->against.empty()) {
                    ModelOptions other = o->model;
                    other.source = o->against;
                    other.open.program.clear(); // --program names one of MODEL's
                    against = openModel(other, report);
                    if (o->device != "cpu")
                        against->setDevice(o->device);
                    requireInputs(*against);
                    run.baselineSession = against.get();
                }
                BenchmarkResult result;
                {
                    InterruptGuard guard;
                    Progress progress(o->quiet, "bench: ");
                    result = benchmarkPlan(*session, plan, run, progress.callback(o->run.warmup, "round"));
                }
                report.json = toJson(*session, *o, result);
                printText(report.text, *session, *o, result);
                if (!against && !result.stopped) // against another model the peaks are of two models
                    reportPeakChange(report, *session, plan);
                report.exitCode = result.stopped ? kInterruptedExitCode : 0;
            }};
}

} // namespace kforge::cli
