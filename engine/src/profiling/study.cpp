// SPDX-License-Identifier: Apache-2.0
// Studies (kforge/study.h): the orchestration kforge profile / compare / report and the desktop app's profile
// workspace share.
#include <kforge/study.h>

#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/profiling.h>
#include <kforge/runtime.h>

#include <algorithm>
#include <optional>
#include <string>

namespace kforge {
namespace {

// The id of a CUDA graph of one forward captured with `plan` in effect (none: the model as it is).
std::string captureGraph(ModelSession& session, const Plan* plan, int warmup)
{
    std::optional<KernelProviderRuntime> runtime;
    if (plan) {
        runtime.emplace(session, *plan);
        runtime->activate();
    }
    const CaptureRecord capture = session.capture(std::max(1, warmup));
    if (runtime)
        runtime->deactivate();
    if (!capture.ok)
        throw Error("graph capture of '" + session.displayName() + "'",
                    capture.error + " (" + std::to_string(capture.leftovers.size()) + " leftover patch(es))");
    return capture.id;
}

std::shared_ptr<const ProfileRun> makeRun(ModelSession& session, const StudyOptions& options, const Plan* plan)
{
    if (options.onStage)
        options.onStage(plan ? StudyStage::Plan : StudyStage::Baseline);
    ProfileOptions profileOptions;
    profileOptions.device = options.device;
    profileOptions.warmupIterations = options.warmupIterations;
    profileOptions.iterations = options.iterations;
    profileOptions.progress = options.progress;
    if (options.graphReplay) {
        profileOptions.replayCapture = captureGraph(session, plan, options.warmupIterations);
    } else if (plan) {
        profileOptions.plan = *plan;
        profileOptions.usePlan = true;
    }
    auto run = std::make_shared<ProfileRun>(profile(session, profileOptions));
    if (options.graphReplay && plan) {
        run->plan = *plan; // baked into the graph: the replays ran it
        run->usedPlan = true;
    }
    if (measuredNothing(*run))
        run->iterations = 0;
    return run;
}

} // namespace

bool measuredNothing(const ProfileRun& run) { return run.cancelled && run.records.empty(); }

bool StudyResult::cancelled() const { return (baseline && baseline->cancelled) || (plan && plan->cancelled); }

std::vector<LabeledRun> StudyResult::runs() const { return studyRuns(baseline.get(), plan.get()); }

std::vector<LabeledRun> studyRuns(const ProfileRun* baseline, const ProfileRun* plan)
{
    std::vector<LabeledRun> runs;
    if (baseline)
        runs.push_back({"baseline", baseline});
    if (plan)
        runs.push_back({"plan", plan});
    return runs;
}

StudyResult runStudy(ModelSession& session, const StudyOptions& options)
{
    if (options.graphReplay && options.device != "cuda")
        throw Error("graph replay", "graph capture needs the cuda device");
    // The whole plan goes to the runtime, which skips disabled entries: declines keep the plan's entry numbers.
    const Plan& plan = options.plan;
    if (options.kind != StudyKind::Baseline && !plan.hasEnabledEntry())
        throw Error("profile with a plan", "the plan has no enabled entry");

    StudyResult result;
    if (options.kind != StudyKind::Plan)
        result.baseline = makeRun(session, options, nullptr);
    if (options.kind == StudyKind::Plan || (options.kind == StudyKind::Compare && !result.baseline->cancelled))
        result.plan = makeRun(session, options, &plan);
    if (result.baseline && result.plan && !measuredNothing(*result.plan))
        result.comparison = compare(*result.baseline, *result.plan);
    return result;
}

PairedRuns pairSavedRuns(const std::vector<SavedRun>& runs)
{
    PairedRuns pair;
    for (const SavedRun& saved : runs) {
        const bool isPlan = saved.label == "plan" || (saved.label != "baseline" && saved.run.usedPlan);
        const SavedRun*& side = isPlan ? pair.plan : pair.baseline;
        if (!side)
            side = &saved;
    }
    if (runs.size() >= 2 && (!pair.baseline || !pair.plan))
        pair = {&runs[0], &runs[1]};
    return pair;
}

} // namespace kforge
