// SPDX-License-Identifier: Apache-2.0
// kforge compare: the model without and with a plan, per function and per module, with the output error.
#include "commands.h"
#include "profile_study.h"
#include "profile_tables.h"
#include "progress.h"

#include <kforge/error.h>

#include <iostream>

namespace kforge::cli {

Command addCompareCommand(CLI::App& app)
{
    auto o = std::make_shared<StudySetup>();
    auto* cmd = app.add_subcommand("compare", "Profile the model without and with a plan: time per function and per "
                                              "module before and after, speedup, output error");
    addStudyOptions(cmd, *o);
    return {cmd, [o] {
                if (!o->hasPlan())
                    throw Error("kforge compare", "needs a plan: --plan FILE and/or --provide SPEC");
                const Plan plan = planOf(*o);
                auto session = openModel(o->model);
                requireInputs(*session);
                const auto warnings = warnPlan(plan, *session, o->device);
                InterruptGuard guard;
                const StudyResult study = runStudy(*session, *o, StudyKind::Compare, plan);
                const ProfileRun& baseline = *study.baseline;
                nlohmann::ordered_json files = nlohmann::ordered_json::object();
                writeStudyFiles(study, *o, "", files);
                if (!study.plan) {
                    // Interrupted during the baseline: what was measured, and no comparison.
                    if (o->json) {
                        nlohmann::ordered_json out{{"baseline", runJson(baseline, "function", 0, "baseline")},
                                                   {"cancelled", true},
                                                   {"files", files},
                                                   {"warnings", nlohmann::ordered_json(warnings)}};
                        std::cout << out.dump(2) << '\n';
                    } else {
                        printRunHeader(baseline);
                        printRunTables(baseline, "function", o->top);
                        printFiles(files);
                    }
                    reportInterrupted(baseline);
                    return kInterruptedExitCode;
                }
                const ProfileRun& planned = *study.plan;
                if (o->json) {
                    nlohmann::ordered_json out = comparisonJson(baseline, planned, 0);
                    out["files"] = files;
                    out["cancelled"] = planned.cancelled;
                    out["warnings"] = nlohmann::ordered_json(warnings);
                    std::cout << out.dump(2) << '\n';
                } else {
                    printComparison(baseline, planned);
                    printFiles(files);
                }
                if (planned.cancelled) {
                    reportInterrupted(planned);
                    return kInterruptedExitCode;
                }
                return 0;
            }};
}

} // namespace kforge::cli
