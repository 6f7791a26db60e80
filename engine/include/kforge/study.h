// SPDX-License-Identifier: Apache-2.0
#pragma once
// Studies: the profile runs a user asks for as one piece of work, with the same rules in the CLI (kforge profile,
// compare, report) and the desktop app: a baseline, a run with a plan, or both and their comparison, each optionally
// profiled as replays of a CUDA graph captured with the plan in effect; what a cancelled study keeps; the labels its
// runs carry in files; and how saved runs pair up again as baseline and plan.
#include <kforge/profile_export.h>
#include <kforge/profiling.h>
#include <kforge/progress.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

class ModelSession;

enum class StudyKind { Baseline, Plan, Compare };
// The run a study is making; a compare (without graph replay) makes both in alternating rounds (Rounds).
enum class StudyStage { Baseline, Plan, Rounds };

struct StudyOptions {
    StudyKind kind = StudyKind::Baseline;
    std::string device = "cpu"; // "cpu" or "cuda"
    int warmupIterations = 3;
    int iterations = 10;
    Plan plan; // Plan and Compare: its enabled entries (one at least) are in effect for the plan run
    // Capture one forward into a CUDA graph (the plan in effect for the plan run) and profile its replays: replays
    // run no host code, so the providers captured are the ones replayed (device "cuda" only).
    bool graphReplay = false;
    // A run is starting. A compare measures baseline and plan in rounds of one forward each, the side that goes
    // first alternating (ABBA), so that drift and the order of the runs hit both alike: its stage is Rounds, and
    // progress counts the forwards of both sides. Graph replay compares run the baseline, then the plan.
    std::function<void(StudyStage)> onStage;
    // (done, total) forwards of the current stage, warm-up included; false cancels after the current forward.
    ProgressCallback progress;
    bool recordShapes = false; // ProfileOptions::recordShapes, for every run of the study
    bool recordMemory = false; // ProfileOptions::recordMemory, for the baseline and plan studies
    // The run so far while a baseline or plan run measures (ProfileOptions::partial); not called by an interleaved
    // compare, whose rounds alternate the two runs.
    std::function<void(const ProfileRun&)> partial;
};

struct StudyResult {
    // The runs made; a compare cancelled before the plan measured anything has no plan run. A run cancelled during
    // its warm-up measured nothing (measuredNothing): its iterations are 0. In an interleaved compare iteration i of
    // the baseline and of the plan ran in the same round.
    std::shared_ptr<const ProfileRun> baseline, plan;
    std::optional<Comparison> comparison; // both runs made and the plan run not cancelled before measuring
    bool cancelled() const;
    // The runs labelled "baseline" and "plan", in that order: what the exporters (profile_export.h) write.
    std::vector<LabeledRun> runs() const;
};

// Runs the study on `session` (its device is changed as ProfileOptions::device asks). kforge::Error when a plan is
// needed and has no enabled entry, when graph replay is asked for off CUDA, when the capture fails (naming the
// leftovers) or a run fails.
StudyResult runStudy(ModelSession& session, const StudyOptions& options);

// Cancelled before any measured forward: the run holds no record and there is nothing to show or keep.
bool measuredNothing(const ProfileRun& run);

// The runs of a study as the exporters take them: "baseline" and "plan" for whichever is present.
std::vector<LabeledRun> studyRuns(const ProfileRun* baseline, const ProfileRun* plan);

// Which of a .kfprof file's runs are the baseline and the plan: by label ("baseline", "plan"), an unlabelled run by
// whether it used a plan; when two or more runs leave a side empty, the first run is the baseline and the second
// the plan (two baselines compare in file order). Null where there is none (a file of one run).
struct PairedRuns {
    const SavedRun* baseline = nullptr;
    const SavedRun* plan = nullptr;
    // When both are there and their module trees differ (runs of two models, or of two versions of one): what
    // differs, and that per-module differences compare only the paths both have; "" when the trees are the same.
    std::string treeMismatch;
};
PairedRuns pairSavedRuns(const std::vector<SavedRun>& runs);

} // namespace kforge
