// SPDX-License-Identifier: Apache-2.0
// kforge verify: can this plan be trusted on this model? The model's own outputs with the plan against without, a
// verdict against thresholds, and the first module whose output diverges when they differ. Exit status 1 on a fail, 2
// when an output cannot be judged (inconclusive).
#include "commands.h"
#include "memory_tables.h"
#include "output.h"
#include "progress.h"

#include <kforge/error.h>
#include <kforge/memory_profile.h>
#include <kforge/model_session.h>
#include <kforge/module_path.h>
#include <kforge/verify.h>

#include <cstdio>
#include <ostream>

namespace kforge::cli {
namespace {

struct VerifyCommandOptions {
    ModelOptions model;
    PlanOptions plan;
    std::string device = "cpu";
    VerifyOptions run;
    double minCosine = 0.999;
    double atol = -1, rtol = -1, minTop1 = -1; // < 0: not given
    bool allowNan = false;
    CLI::Option* minCosineOption = nullptr;
    CLI::Option* allowNanOption = nullptr;
    bool noLocate = false;
    bool freshRandom = false;
    bool quiet = false;
};

std::string number(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
}

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

nlohmann::ordered_json toJson(const TensorAgreement& a)
{
    nlohmann::ordered_json out{{"path", a.path},
                               {"dtype", a.dtype},
                               {"shape", a.shape},
                               {"passed", a.passed},
                               {"judged", a.judged},
                               {"moving_elements", a.movingElements},
                               {"max_abs_error", a.maxAbsError},
                               {"max_rel_error", a.maxRelError},
                               {"cosine", a.cosine},
                               {"baseline_non_finite", a.baselineNonFinite},
                               {"plan_non_finite", a.planNonFinite},
                               {"new_non_finite", a.newNonFinite},
                               {"outside_tolerance", a.outsideTolerance}};
    if (a.top1Agreement)
        out["top1_agreement"] = *a.top1Agreement;
    if (a.top5Agreement)
        out["top5_agreement"] = *a.top5Agreement;
    if (!a.problem.empty())
        out["problem"] = a.problem;
    return out;
}

// "pass", "fail" or "inconclusive": what the exit status says (0, 1, 2).
std::string verdictWord(const VerifyReport& r) { return r.passed ? "pass" : r.inconclusive ? "inconclusive" : "fail"; }

nlohmann::ordered_json toJson(const ModelSession& session, const Plan& plan, const VerifyOptions& o,
                              const VerifyReport& r)
{
    nlohmann::ordered_json thresholds{{"min_cosine", o.thresholds.minCosine},
                                      {"allow_new_non_finite", o.thresholds.allowNewNonFinite}};
    if (o.thresholds.absolute)
        thresholds["atol"] = *o.thresholds.absolute;
    if (o.thresholds.relative)
        thresholds["rtol"] = *o.thresholds.relative;
    if (o.thresholds.minTop1Agreement)
        thresholds["min_top1_agreement"] = *o.thresholds.minTop1Agreement;
    nlohmann::ordered_json out{{"model", session.displayName()}, {"inputs", session.describeInputs()},
                               {"device", session.device()},     {"passed", r.passed},
                               {"inconclusive", r.inconclusive}, {"verdict", verdictWord(r)},
                               {"thresholds", thresholds},       {"outputs", nlohmann::ordered_json::array()}};
    for (const auto& a : r.outputs)
        out["outputs"].push_back(toJson(a));
    if (r.divergence) {
        const ModuleDivergence& d = *r.divergence;
        nlohmann::ordered_json entries = nlohmann::ordered_json::array();
        for (const int i : d.entries)
            entries.push_back({{"index", i},
                               {"scope", plan.entries[size_t(i)].scope},
                               {"function", plan.entries[size_t(i)].function},
                               {"provider", plan.entries[size_t(i)].providerType()}});
        nlohmann::ordered_json calls = nlohmann::ordered_json::array();
        for (const auto& c : d.calls)
            calls.push_back({{"function", c.function}, {"provider", c.provider}, {"calls", c.calls}});
        out["first_divergence"] = {{"module", d.module},         {"call", d.call},     {"module_calls", d.moduleCalls},
                                   {"output", toJson(d.output)}, {"entries", entries}, {"function_calls", calls}};
    }
    if (!r.localisationNote.empty())
        out["localisation_note"] = r.localisationNote;
    if (!r.nondeterminism.empty())
        out["nondeterminism"] = r.nondeterminism;
    out["baseline_forwards"] = r.baselineForwards;
    out["randomness"] = r.randomness;
    out["restored_state"] = r.restoredState;
    out["locating_passes"] = r.passes;
    out["modules"] = nlohmann::ordered_json::array();
    for (const ModuleAgreement& m : r.modules)
        out["modules"].push_back({{"module", m.module},
                                  {"calls", m.calls},
                                  {"outputs_agree", m.outputsAgree},
                                  {"inputs_agree", m.inputsAgree},
                                  {"max_abs_error", m.maxAbsError},
                                  {"min_cosine", m.minCosine},
                                  {"new_non_finite", m.newNonFinite}});
    return out;
}

void printText(std::ostream& out, const ModelSession& session, const Plan& plan, const VerifyReport& r)
{
    std::string inputs;
    for (const auto& d : session.describeInputs())
        inputs += (inputs.empty() ? "" : ", ") + d;
    out << "model " << session.displayName() << "  inputs " << inputs << "  device " << session.device() << "\n\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& a : r.outputs)
        rows.push_back({a.path, a.dtype + shapeText(a.shape), number(a.maxAbsError), number(a.maxRelError),
                        number(a.cosine), std::to_string(a.newNonFinite),
                        a.top1Agreement ? number(*a.top1Agreement) : "-",
                        a.top5Agreement ? number(*a.top5Agreement) : "-",
                        !a.judged  ? "not judged"
                        : a.passed ? "pass"
                                   : "FAIL"});
    const std::vector<Column> columns{{"OUTPUT", false},     {"TENSOR", false}, {"MAX ABS ERR", true},
                                      {"MAX REL ERR", true}, {"COSINE", true},  {"NEW NAN/INF", true},
                                      {"TOP-1", true},       {"TOP-5", true},   {"", false}};
    out << formatTable(columns, rows);
    for (const auto& a : r.outputs)
        if (!a.passed || !a.judged)
            out << "output " << a.path << ": " << a.problem << '\n';
    if (!r.nondeterminism.empty())
        out << "\nnote: " << r.nondeterminism << '\n';
    out << "\n" << r.baselineForwards << " forwards without the plan, 1 with it; random draws " << r.randomness << '\n';
    if (!r.restoredState.empty()) {
        std::string names;
        for (const auto& n : r.restoredState)
            names += (names.empty() ? "" : ", ") + n;
        out << "state the forwards changed, put back before each and after the last: " << names << '\n';
    }
    out << "\nverdict: "
        << (r.passed         ? "the plan keeps the model's outputs"
            : r.inconclusive ? "INCONCLUSIVE: an output moves between forwards without the plan and cannot be judged "
                               "against that spread (above); the plan is not shown to keep the model's outputs"
                             : "FAIL: the plan changes the model's outputs")
        << '\n';
    if (r.divergence) {
        const ModuleDivergence& d = *r.divergence;
        out << "\nfirst diverging module: " << module_path::displayName(d.module) << " (call " << d.call + 1
            << ", module call " << d.moduleCalls << " to end), its inputs agreeing\n"
            << "  output " << d.output.path << ": " << d.output.problem << '\n';
        for (const int i : d.entries) {
            const PlanEntry& e = plan.entries[size_t(i)];
            out << "  plan entry " << i << " in effect: " << module_path::displayName(e.scope) << ':' << e.function
                << ':' << e.providerType() << '\n';
        }
        for (const auto& c : d.calls)
            out << "  inside: " << c.function << " x" << c.calls << " served by " << c.provider << '\n';
    }
    if (!r.localisationNote.empty())
        out << "\nnote: " << r.localisationNote << '\n';
}

} // namespace

Command addVerifyCommand(CLI::App& app)
{
    auto o = std::make_shared<VerifyCommandOptions>();
    auto* cmd = app.add_subcommand(
        "verify", "Check a plan on the model's own outputs: baseline and plan forwards on the same inputs and state, a "
                  "verdict against thresholds (exit status 1 on a fail, 2 when inconclusive), and the first module "
                  "whose output diverges");
    addModelOptions(cmd, o->model);
    addPlanOptions(cmd, o->plan, "to verify");
    addDeviceOption(cmd, o->device, "where the model runs");
    o->minCosineOption =
        cmd->add_option("--min-cosine", o->minCosine,
                        "least cosine similarity of every output tensor (default: the plan's \"verify\", else 0.999)")
            ->check(CLI::Range(-1.0, 1.0));
    cmd->add_option("--atol", o->atol, "element-wise absolute tolerance (default: per dtype, float32 1e-4)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--rtol", o->rtol, "element-wise relative tolerance (default: per dtype, float32 1e-3)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--min-top1", o->minTop1,
                    "least top-1 agreement of [batch, classes] and [batch, tokens, vocab] outputs (default: report "
                    "only)")
        ->check(CLI::Range(0.0, 1.0));
    o->allowNanOption = cmd->add_flag("--allow-nan", o->allowNan, "do not fail on NaN/Inf the baseline lacks");
    cmd->add_flag("--no-locate", o->noLocate, "do not look for the first diverging module when the outputs differ");
    cmd->add_flag("--fresh-random", o->freshRandom,
                  "let each forward draw its own random numbers (by default every forward replays the same draws) and "
                  "judge outputs that move against their spread over 8 forwards");
    addJsonFlag(cmd);
    addQuietFlag(cmd, o->quiet);
    return {cmd, [o](Report& report) {
                const auto [session, plan] = openWithPlan("verify", o->model, o->plan, o->device, report);
                VerifyOptions run = o->run;
                // The plan's own thresholds, then each one the command line gives.
                run.thresholds = plan.verifyThresholds.value_or(VerifyThresholds{});
                if (o->minCosineOption->count() > 0)
                    run.thresholds.minCosine = o->minCosine;
                if (o->allowNanOption->count() > 0)
                    run.thresholds.allowNewNonFinite = o->allowNan;
                if (o->atol >= 0)
                    run.thresholds.absolute = o->atol;
                if (o->rtol >= 0)
                    run.thresholds.relative = o->rtol;
                if (o->minTop1 >= 0)
                    run.thresholds.minTop1Agreement = o->minTop1;
                run.locate = !o->noLocate;
                run.replayRandomness = !o->freshRandom;
                VerifyReport result;
                {
                    InterruptGuard guard;
                    Progress progress(o->quiet, "verify: ");
                    run.progress = progress.callback(0, "forward");
                    try {
                        result = verifyPlan(*session, plan, run);
                    } catch (const Error&) {
                        if (!interrupted())
                            throw;
                        report.diagnostic("interrupted: stopped before a verdict");
                        report.exitCode = kInterruptedExitCode;
                        return;
                    }
                }
                report.json = toJson(*session, plan, run, result);
                printText(report.text, *session, plan, result);
                reportPeakChange(report, *session, plan);
                report.exitCode = result.passed ? 0 : result.inconclusive ? 2 : 1;
            }};
}

} // namespace kforge::cli
