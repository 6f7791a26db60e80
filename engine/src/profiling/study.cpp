// SPDX-License-Identifier: Apache-2.0
// Studies (kforge/study.h): the orchestration kforge profile / compare / report and the desktop app's profile
// workspace share.
#include <kforge/study.h>

#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/module_path.h>
#include <kforge/profiling.h>
#include <kforge/runtime.h>

#include <algorithm>
#include <optional>
#include <set>
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

ProfileOptions profileOptionsFor(const StudyOptions& options)
{
    ProfileOptions profileOptions;
    profileOptions.device = options.device;
    profileOptions.warmupIterations = options.warmupIterations;
    profileOptions.iterations = options.iterations;
    profileOptions.progress = options.progress;
    profileOptions.recordShapes = options.recordShapes;
    profileOptions.recordMemory = options.recordMemory;
    return profileOptions;
}

std::shared_ptr<const ProfileRun> makeRun(ModelSession& session, const StudyOptions& options, const Plan* plan)
{
    if (options.onStage)
        options.onStage(plan ? StudyStage::Plan : StudyStage::Baseline);
    ProfileOptions profileOptions = profileOptionsFor(options);
    profileOptions.partial = options.partial;
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

// The end of the last thing `run` recorded, from the start of its profile.
std::int64_t recordedEndNs(const ProfileRun& run)
{
    std::int64_t end = run.wallNs;
    for (const KernelRecord& r : run.records)
        end = std::max(end, r.startNs + r.durationNs);
    for (const RangeRecord& r : run.ranges)
        end = std::max(end, r.startNs + r.durationNs);
    return end;
}

// `round`, a later profile of the same side, appended to `run`: its iterations numbered on and its times placed
// after what `run` holds, so that the merged run reads like one profile of all its rounds.
void appendRound(ProfileRun& run, ProfileRun&& round)
{
    const std::int64_t shiftNs = recordedEndNs(run);
    const int shiftIterations = run.iterations;
    for (KernelRecord& r : round.records) {
        r.startNs += shiftNs;
        r.iteration += shiftIterations;
        run.records.push_back(std::move(r));
    }
    for (RangeRecord& r : round.ranges) {
        r.startNs += shiftNs;
        r.iteration += shiftIterations;
        run.ranges.push_back(std::move(r));
    }
    for (MemoryRecord& m : round.memory) {
        m.timeNs += shiftNs;
        m.iteration += shiftIterations;
        run.memory.push_back(std::move(m));
    }
    for (EntryDeclines& d : round.declines) {
        auto same = std::find_if(run.declines.begin(), run.declines.end(),
                                 [&](const EntryDeclines& e) { return e.entry == d.entry; });
        if (same == run.declines.end()) {
            run.declines.push_back(std::move(d));
        } else {
            same->calls += d.calls;
            same->lastReason = d.lastReason;
        }
    }
    run.iterations += round.iterations;
    run.wallNs += round.wallNs;
    run.loadAverage = std::max(run.loadAverage, round.loadAverage); // the busiest the machine was
    run.droppedRecords += round.droppedRecords;
    run.cancelled = round.cancelled;
    run.outputs = std::move(round.outputs);
    run.outputValues = std::move(round.outputValues);
}

// A compare in rounds: each round one measured forward of the baseline and one of the plan, which of them goes
// first alternating (ABBA), so that neither side always runs on a colder or hotter machine. The first forward of
// each side gets the study's warm-up; later ones one warm-up forward each, as switching the plan on or off may make
// the executor specialise again.
StudyResult runInterleavedCompare(ModelSession& session, const StudyOptions& options)
{
    if (options.onStage)
        options.onStage(StudyStage::Rounds);
    const int rewarm = options.warmupIterations > 0 ? 1 : 0;
    const int total = 2 * (options.warmupIterations + options.iterations + rewarm * (options.iterations - 1));
    int done = 0;
    bool stopped = false;
    std::shared_ptr<ProfileRun> sides[2]; // baseline, plan
    const auto measure = [&](int side, int round) {
        ProfileOptions o = profileOptionsFor(options);
        o.warmupIterations = round == 0 ? options.warmupIterations : rewarm;
        o.iterations = 1;
        if (side == 1) {
            o.plan = options.plan;
            o.usePlan = true;
        }
        const int offset = done;
        o.progress = [&, offset](int chunkDone, int) {
            done = offset + chunkDone;
            return keepGoing(options.progress, done, total);
        };
        ProfileRun run = profile(session, o);
        done = offset + o.warmupIterations + o.iterations;
        stopped = run.cancelled;
        if (measuredNothing(run))
            run.iterations = 0;
        if (!sides[side])
            sides[side] = std::make_shared<ProfileRun>(std::move(run));
        else if (!measuredNothing(run))
            appendRound(*sides[side], std::move(run));
        else
            sides[side]->cancelled = true;
    };
    for (int round = 0; round < options.iterations && !stopped; ++round) {
        const int first = round % 2; // baseline first in even rounds, the plan first in odd ones
        measure(first, round);
        if (!stopped)
            measure(1 - first, round);
    }
    // Both sides stop together: the one that was not running when the user cancelled is marked too, and keeps only
    // the rounds the other completed (iteration i of both sides is one round).
    StudyResult result;
    for (auto& side : sides)
        if (side && stopped)
            side->cancelled = true;
    result.baseline = sides[0];
    if (sides[1] && !measuredNothing(*sides[1]))
        result.plan = sides[1];
    if (result.baseline && result.plan && !measuredNothing(*result.baseline))
        result.comparison = compare(*result.baseline, *result.plan);
    return result;
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

    if (options.kind == StudyKind::Compare && !options.graphReplay)
        return runInterleavedCompare(session, options);
    StudyResult result;
    if (options.kind != StudyKind::Plan)
        result.baseline = makeRun(session, options, nullptr);
    if (options.kind == StudyKind::Plan || (options.kind == StudyKind::Compare && !result.baseline->cancelled))
        result.plan = makeRun(session, options, &plan);
    if (result.baseline && result.plan && !measuredNothing(*result.plan))
        result.comparison = compare(*result.baseline, *result.plan);
    return result;
}

namespace {

// What differs between two runs' module trees, for PairedRuns::treeMismatch; "" when they are the same.
std::string moduleTreeMismatch(const ProfileRun& baseline, const ProfileRun& plan)
{
    std::set<std::string> base, other;
    for (const ModuleInfo& m : baseline.modules)
        base.insert(m.path);
    for (const ModuleInfo& m : plan.modules)
        other.insert(m.path);
    if (base == other)
        return {};
    std::string first;
    for (const std::string& path : other)
        if (!base.count(path)) {
            first = "module '" + module_path::displayName(path) + "' is only in the plan run";
            break;
        }
    if (first.empty())
        for (const std::string& path : base)
            if (!other.count(path)) {
                first = "module '" + module_path::displayName(path) + "' is only in the baseline run";
                break;
            }
    return "the two runs' module trees differ (baseline: " + baseline.model + ", " + std::to_string(base.size()) +
           " modules; plan: " + plan.model + ", " + std::to_string(other.size()) + " modules; " + first +
           "): per-module differences compare only the modules both have";
}

} // namespace

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
        pair = {&runs[0], &runs[1], {}};
    if (pair.baseline && pair.plan)
        pair.treeMismatch = moduleTreeMismatch(pair.baseline->run, pair.plan->run);
    return pair;
}

} // namespace kforge
