// SPDX-License-Identifier: Apache-2.0
// kforge capture: one CUDA graph capture with a plan in effect (R15): which providers it baked in, replays
// against eager forwards, whether a later plan makes it stale, and the leftovers of a capture that failed.
#include "commands.h"
#include "output.h"

#include <kforge/capture.h>
#include <kforge/module_path.h>
#include <kforge/runtime.h>

#include <ostream>

namespace kforge::cli {
namespace {

struct CaptureOptions {
    ModelOptions model;
    PlanOptions plan;
    std::string thenPlanFile;
    std::vector<std::string> thenProvides;
    int warmup = 2;
    int replays = 1;
};

nlohmann::ordered_json toJson(const CaptureRecord& r)
{
    nlohmann::ordered_json providers = nlohmann::ordered_json::array(), leftovers = nlohmann::ordered_json::array();
    for (const auto& p : r.providers)
        providers.push_back({{"scope", p.scope}, {"function", p.function}, {"provider", p.provider}});
    for (const auto& p : r.leftovers)
        leftovers.push_back(nlohmann::ordered_json(p));
    nlohmann::ordered_json out{{"id", r.id}, {"ok", r.ok}, {"providers", providers}, {"leftovers", leftovers}};
    if (!r.error.empty())
        out["error"] = r.error;
    return out;
}

void printRecord(std::ostream& out, const CaptureRecord& r)
{
    out << r.id << ": " << (r.ok ? "captured" : "FAILED: " + r.error) << '\n';
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : r.providers)
        rows.push_back({module_path::displayName(p.scope), p.function, p.provider});
    if (rows.empty())
        out << "providers baked in: none (the originals)\n";
    else
        out << "providers baked in:\n" << formatTable({"SCOPE", "FUNCTION", "PROVIDER"}, rows);
    out << "leftovers: " << (r.leftovers.empty() ? "none" : "") << '\n';
    for (const auto& group : groupLeftovers(r.leftovers))
        out << "  " << describe(group) << (group.patch.capture.empty() ? "" : " [" + group.patch.capture + "]") << '\n';
}

} // namespace

Command addCaptureCommand(CLI::App& app)
{
    auto o = std::make_shared<CaptureOptions>();
    auto* cmd = app.add_subcommand(
        "capture",
        "Capture one forward into a CUDA graph with a plan in effect: baked-in providers, replays, leftovers");
    addModelOptions(cmd, o->model);
    addPlanOptions(cmd, o->plan, "in effect while capturing");
    cmd->add_option("--then-plan", o->thenPlanFile, "a later plan: is the capture stale against it?")
        ->type_name("FILE");
    cmd->add_option("--then-provide", o->thenProvides, "entry of the later plan (with or instead of --then-plan)")
        ->type_name("SPEC");
    cmd->add_option("--warmup", o->warmup, "eager forwards before capturing")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    cmd->add_option("--replays", o->replays, "graph replays after the capture")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    addJsonFlag(cmd);
    return {cmd, [o](Report& report) {
                Plan plan = o->plan.read();
                const bool hasLaterPlan = !o->thenPlanFile.empty() || !o->thenProvides.empty();
                const Plan later = planFromOptions(o->thenPlanFile, o->thenProvides);
                auto session = openModel(o->model, report);
                requireInputs(*session);
                session->setDevice("cuda");
                const auto eager = session->forward();

                landPlan(report, plan, *session, session->device(), o->plan); // re-validated, never-fire warned
                KernelProviderRuntime runtime(*session, plan);
                runtime.activate();
                const CaptureRecord record = session->capture(o->warmup);
                // Unwinds what a failed capture left behind; the record keeps the leftovers as they were.
                runtime.deactivate();
                const bool unwound = runtime.leftovers().empty();

                std::vector<TensorDigest> replayed;
                for (int i = 0; record.ok && i < o->replays; ++i)
                    replayed = session->replay(record.id);
                const auto eagerAfter = session->forward();
                const bool stale = hasLaterPlan && record.ok && captureIsStale(record, later);

                {
                    nlohmann::ordered_json& out = report.json;
                    out = {{"model", session->displayName()},
                           {"inputs", session->describeInputs()},
                           {"capture", toJson(record)},
                           {"replays", record.ok ? o->replays : 0},
                           {"leftovers_unwound", unwound},
                           {"eager", nlohmann::ordered_json::array()},
                           {"replayed", nlohmann::ordered_json::array()},
                           {"eager_after", nlohmann::ordered_json::array()}};
                    for (const auto& d : eager)
                        out["eager"].push_back(nlohmann::ordered_json(d));
                    for (const auto& d : replayed)
                        out["replayed"].push_back(nlohmann::ordered_json(d));
                    for (const auto& d : eagerAfter)
                        out["eager_after"].push_back(nlohmann::ordered_json(d));
                    if (hasLaterPlan)
                        out["stale"] = stale;
                }
                {
                    std::ostream& out = report.text;
                    out << "model " << session->displayName() << " on cuda, plan of " << plan.entries.size() << " entr"
                        << (plan.entries.size() == 1 ? "y" : "ies") << '\n';
                    printRecord(out, record);
                    if (!record.leftovers.empty())
                        out << "after deactivate: "
                            << (unwound ? "unwound, the originals are back" : "patches still in effect") << '\n';
                    for (const auto& d : eager)
                        out << "eager before:  " << describe(d) << '\n';
                    for (const auto& d : replayed)
                        out << "replay x" << o->replays << ":     " << describe(d) << '\n';
                    for (const auto& d : eagerAfter)
                        out << "eager after:   " << describe(d) << '\n';
                    if (hasLaterPlan && record.ok)
                        out << "against the later plan (" << later.entries.size()
                            << " entries): " << (stale ? "STALE: re-capture to run it" : "current") << '\n';
                }
                report.exitCode = record.ok ? 0 : 1;
            }};
}

} // namespace kforge::cli
