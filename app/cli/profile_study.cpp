// SPDX-License-Identifier: Apache-2.0
#include "profile_study.h"

#include "progress.h"

#include <kforge/profile_export.h>

#include <memory>
#include <tuple>

namespace kforge::cli {

void addStudyOptions(CLI::App* cmd, StudySetup& o)
{
    addModelOptions(cmd, o.model);
    addPlanOptions(cmd, o.plan);
    addDeviceOption(cmd, o.device, "cpu times ATen op executions; cuda traces CUDA kernels with CUPTI");
    cmd->add_option("--warmup", o.warmup, "forwards before measuring")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    cmd->add_option("--iterations", o.iterations, "measured forwards")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd->add_option("--trace", o.trace, "write a Chrome trace JSON (opens in Perfetto, chrome://tracing)")
        ->type_name("FILE.json");
    cmd->add_option("-o,--out,--save", o.save,
                    "save the run(s) to a .kfprof file for kforge report and the GUI (--save: the older spelling)")
        ->type_name("FILE.kfprof");
    cmd->add_flag("--graph", o.graph,
                  "capture one forward into a CUDA graph (the plan in effect) and profile its replays (cuda only)");
    cmd->add_flag("--record-shapes", o.recordShapes,
                  "record each CPU op's input shapes (in the CSV, trace and .kfprof; tables: --group-by shape), as "
                  "torch.profiler's record_shapes: boxing every op's inputs makes profiling slower");
    addJsonFlag(cmd);
    addQuietFlag(cmd, o.quiet);
}

void addMemoryFlag(CLI::App* cmd, StudySetup& o)
{
    cmd->add_flag("--memory", o.recordMemory,
                  "record every allocation and free of the measured forwards: bytes allocated, freed and the peak "
                  "per module, and the forward's peak (the allocator reports each one, which costs time)");
}

StudyResult runStudy(ModelSession& session, const StudySetup& o, StudyKind kind, const Plan& plan)
{
    StudyOptions options;
    options.kind = kind;
    options.device = o.device;
    options.warmupIterations = o.warmup;
    options.iterations = o.iterations;
    options.plan = plan;
    options.graphReplay = o.graph;
    options.recordShapes = o.recordShapes;
    options.recordMemory = o.recordMemory;
    // A compare's line says whose forwards it counts: "baseline and plan in alternating rounds: iteration 3/26" (or
    // "baseline: ", then "plan: " for graph replays; a new Progress ends the line of the one before).
    std::unique_ptr<Progress> progress;
    ProgressCallback report;
    options.onStage = [&](StudyStage stage) {
        const char* prefix = kind != StudyKind::Compare      ? ""
                             : stage == StudyStage::Rounds   ? "baseline and plan in alternating rounds: "
                             : stage == StudyStage::Baseline ? "baseline: "
                                                             : "plan: ";
        progress = std::make_unique<Progress>(o.quiet, prefix);
        // Rounds interleave both sides' warm-up and measured forwards: count forwards.
        report = stage == StudyStage::Rounds ? progress->callback(0, "forward") : progress->callback(o.warmup);
    };
    options.progress = [&](int done, int total) { return report(done, total); };
    return kforge::runStudy(session, options);
}

void writeStudyFiles(const StudyResult& study, const StudySetup& o, const std::string& csv,
                     nlohmann::ordered_json& files)
{
    const std::vector<LabeledRun> runs = study.runs();
    for (const auto& [path, format, key] :
         {std::tuple{&o.trace, "chrome-trace", "trace"}, std::tuple{&csv, "csv", "csv"},
          std::tuple{&o.memorySnapshot, "memory-snapshot", "memory_snapshot"}, std::tuple{&o.save, "kfprof", "save"}}) {
        if (path->empty())
            continue;
        exportProfile(runs, format, *path);
        files[key] = *path;
    }
}

void printFiles(std::ostream& out, const nlohmann::ordered_json& files)
{
    if (files.empty())
        return;
    out << '\n';
    for (const auto& [key, what] :
         {std::pair{"trace", "trace written to "}, std::pair{"csv", "CSV written to "},
          std::pair{"memory_snapshot", "memory snapshot (pytorch.org/memory_viz) written to "},
          std::pair{"save", "saved to "}})
        if (files.contains(key))
            out << what << files.at(key).get<std::string>() << '\n';
}

void reportInterrupted(Report& report, const ProfileRun& run)
{
    report.diagnostic("interrupted: partial result of " + std::to_string(run.iterations) + " measured iteration(s)");
    report.exitCode = kInterruptedExitCode;
}

} // namespace kforge::cli
