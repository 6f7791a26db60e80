// SPDX-License-Identifier: Apache-2.0
// kforge compare: the model without and with a plan, per function and per module, with the output error.
#include "commands.h"
#include "memory_tables.h"
#include "profile_study.h"
#include "profile_tables.h"
#include "progress.h"

#include <kforge/error.h>

namespace kforge::cli {

Command addCompareCommand(CLI::App& app)
{
    auto o = std::make_shared<StudySetup>();
    auto* cmd = app.add_subcommand("compare", "Profile the model without and with a plan: time per function and per "
                                              "module before and after, speedup, output error");
    addStudyOptions(cmd, *o);
    addMaxDetectableOption(cmd, o->maxDetectable);
    addMemoryFlag(cmd, *o);
    return {cmd, [o](Report& report) {
                if (!o->plan.given())
                    throw Error("kforge compare", "needs a plan: --plan FILE and/or --provide SPEC");
                Plan plan = o->plan.read();
                auto session = openModel(o->model, report);
                requireInputs(*session);
                landPlan(report, plan, *session, o->device, o->plan);
                InterruptGuard guard;
                const StudyResult study = runStudy(*session, *o, StudyKind::Compare, plan);
                const ProfileRun& baseline = *study.baseline;
                nlohmann::ordered_json files = nlohmann::ordered_json::object();
                writeStudyFiles(study, *o, "", files);
                if (!study.plan) {
                    // Interrupted during the baseline: what was measured, and no comparison.
                    report.json = {{"baseline", runJson(baseline, "function", 0, "baseline")},
                                   {"cancelled", true},
                                   {"files", files}};
                    printRunHeader(report.text, baseline);
                    printRunTables(report.text, baseline, "function", o->top);
                    printFiles(report.text, files);
                    reportInterrupted(report, baseline);
                    return;
                }
                const ProfileRun& planned = *study.plan;
                const Comparison comparison = compare(baseline, planned, o->maxDetectable);
                report.json = comparisonJson(comparison, baseline, planned, 0);
                report.json["files"] = files;
                report.json["cancelled"] = planned.cancelled;
                printComparison(report.text, comparison, baseline, planned);
                if (o->recordMemory) {
                    const MemorySummary before = summarizeMemory(baseline), after = summarizeMemory(planned);
                    report.json["memory"] = memoryComparisonJson(before, after);
                    printMemoryComparison(report.text, before, after, o->top);
                }
                printFiles(report.text, files);
                if (planned.cancelled)
                    reportInterrupted(report, planned);
            }};
}

} // namespace kforge::cli
