// SPDX-License-Identifier: Apache-2.0
// kforge profile: time per kernel (CUDA) or ATen op (cpu), per function and per module; traces, CSV and .kfprof
// files. Ctrl+C stops the run after the current forward with a partial result.
#include "commands.h"
#include "profile_study.h"
#include "profile_tables.h"
#include "progress.h"

#include <iostream>

namespace kforge::cli {

Command addProfileCommand(CLI::App& app)
{
    struct Options : StudySetup {
        std::string csv;
        std::string groupBy;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("profile", "Profile forwards: time per kernel (CUDA) or ATen op (cpu), per "
                                              "function and per module; export traces and result files");
    addStudyOptions(cmd, *o);
    cmd->add_option("--csv", o->csv, "write one CSV row per kernel execution with its attribution")
        ->type_name("FILE.csv");
    cmd->add_option("--group-by", o->groupBy,
                    "one table: kernel, geometry (kernel + grid/block), function or module "
                    "(default: kernel, function and module tables)")
        ->check(CLI::IsMember({"kernel", "geometry", "function", "module"}));
    cmd->add_option("--top", o->top, "rows per table (0 = all; JSON lists all unless given)")->capture_default_str();
    auto* topOption = cmd->get_option("--top");
    return {cmd, [o, topOption] {
                auto session = openModel(o->model);
                requireInputs(*session);
                const bool usePlan = o->hasPlan();
                const Plan plan = planOf(*o);
                const auto warnings = usePlan ? warnPlan(plan, *session, o->device) : std::vector<PlanWarning>{};
                InterruptGuard guard;
                const StudyResult study = runStudy(*session, *o, usePlan ? StudyKind::Plan : StudyKind::Baseline, plan);
                const ProfileRun& run = usePlan ? *study.plan : *study.baseline;
                nlohmann::ordered_json files = nlohmann::ordered_json::object();
                writeStudyFiles(study, *o, o->csv, files);
                if (o->json) {
                    nlohmann::ordered_json out = runJson(run, o->groupBy, topOption->count() ? o->top : 0);
                    out["files"] = files;
                    out["warnings"] = nlohmann::ordered_json(warnings);
                    std::cout << out.dump(2) << '\n';
                } else {
                    printRunHeader(run);
                    printRunTables(run, o->groupBy, o->top);
                    printFiles(files);
                }
                if (run.cancelled) {
                    reportInterrupted(run);
                    return kInterruptedExitCode;
                }
                return 0;
            }};
}

} // namespace kforge::cli
