// SPDX-License-Identifier: Apache-2.0
// kforge profile: time per kernel (CUDA) or ATen op (cpu), per function and per module; traces, CSV and .kfprof
// files. Ctrl+C stops the run after the current forward with a partial result.
#include "commands.h"
#include "memory_tables.h"
#include "profile_study.h"
#include "profile_tables.h"
#include "progress.h"

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
                    "one table: kernel, geometry (kernel + grid/block), function, module or shape (op + input "
                    "shapes, as torch.profiler's group_by_input_shape; records them) (default: kernel, function and "
                    "module tables)")
        ->check(CLI::IsMember({"kernel", "geometry", "function", "module", "shape"}));
    addMemoryFlag(cmd, *o);
    cmd->add_option("--memory-snapshot", o->memorySnapshot,
                    "write the allocations as PyTorch's memory snapshot (a pickle that pytorch.org/memory_viz and "
                    "torch.cuda._memory_viz open); records memory as --memory does")
        ->type_name("FILE.pickle");
    cmd->add_option("--top", o->top, "rows per table (0 = all; JSON lists all unless given)")->capture_default_str();
    auto* topOption = cmd->get_option("--top");
    return {cmd, [o, topOption](Report& report) {
                o->recordShapes = o->recordShapes || o->groupBy == "shape";
                o->recordMemory = o->recordMemory || !o->memorySnapshot.empty();
                auto session = openModel(o->model, report);
                requireInputs(*session);
                const bool usePlan = o->plan.given();
                Plan plan = o->plan.read();
                if (usePlan)
                    landPlan(report, plan, *session, o->device, o->plan);
                else
                    report.setPlanWarnings({});
                InterruptGuard guard;
                const StudyResult study = runStudy(*session, *o, usePlan ? StudyKind::Plan : StudyKind::Baseline, plan);
                const ProfileRun& run = usePlan ? *study.plan : *study.baseline;
                nlohmann::ordered_json files = nlohmann::ordered_json::object();
                writeStudyFiles(study, *o, o->csv, files);
                report.json = runJson(run, o->groupBy, topOption->count() ? o->top : 0);
                report.json["files"] = files;
                printRunHeader(report.text, run);
                printRunTables(report.text, run, o->groupBy, o->top);
                if (o->recordMemory) {
                    const MemorySummary memory = summarizeMemory(run);
                    report.json["memory"] = memoryJson(memory);
                    printMemory(report.text, memory, o->top);
                }
                printFiles(report.text, files);
                if (run.cancelled)
                    reportInterrupted(report, run);
            }};
}

} // namespace kforge::cli
