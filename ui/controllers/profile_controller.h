// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/plan.h>
#include <kforge/profiling.h>

#include "controllers/measure_controller.h"
#include "controllers/session_job.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <utility>
#include <memory>
#include <optional>
#include <string>

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

// Profiles the owner's session on its worker thread (kforge::profile()): a baseline, a run with a plan, or both and
// their comparison. Keeps the last baseline and plan runs, and the comparison when both exist. It claims the session
// (SessionOwner::claim), so a profile never runs alongside a forward or an optimisation. A new session cancels a
// profile and clears the runs. It owns the settings every measurement of the Profile workspace reads
// (sharedSettings(): BenchmarkController and VerifyController measure with them too).
class ProfileController : public MeasureController {
    Q_OBJECT
public:
    enum class Kind { Baseline, Plan, Compare };
    Q_ENUM(Kind)

    using RunPtr = std::shared_ptr<const kforge::ProfileRun>;

    explicit ProfileController(SessionOwner* owner, QObject* parent = nullptr);
    ~ProfileController() override; // cancels a profile in progress and waits for it

    // Whether CUDA kernels can be traced here (CUPTI and a device); `why` says why not.
    static bool cudaAvailable(QString* why = nullptr);
    // "cpu" or "cuda"; "cuda" where it is not available falls back to "cpu".
    void setDevice(const QString& device);
    void setWarmupIterations(int count) { m_settings->warmup = count; }
    void setIterations(int count) { m_settings->iterations = count; }
    // Record each CPU op's input shapes in baseline and plan runs (ProfileOptions::recordShapes).
    void setRecordShapes(bool record) { m_settings->recordShapes = record; }
    bool recordShapes() const { return m_settings->recordShapes; }
    std::shared_ptr<const MeasureSettings> sharedSettings() const { return m_settings; }
    // The kernel table's grouping and module scope (the tree's selection): a study's runs have their rows in every
    // grouping, and in this scope and grouping, computed on the worker (run_views.h).
    void setTableGrouping(kforge::GroupBy groupBy) { m_groupBy = groupBy; }
    void setTableScope(const std::string& scope) { m_tableScope = scope; }

    // Each returns false with a one-line `error` when nothing started: no model, a forward or a profile is
    // running, the plan has no enabled entry. finished() follows a start.
    bool runBaseline(QString* error = nullptr);
    bool runWithPlan(const kforge::Plan& plan, QString* error = nullptr);
    bool compare(const kforge::Plan& plan, QString* error = nullptr);
    void cancel() override;
    void stop() override;
    bool isRunning() const override { return m_job.isRunning(); }
    Kind lastKind() const { return m_kind; } // of the running or last action

    // While a baseline or plan run measures, baseline() or plan() is its run so far (ProfileRun::inProgress),
    // refined as its forwards end (resultsChanged each time); the previous run is shown until the first measured
    // forward ends, and comes back if the new run fails.

    // Runs from a .kfprof file, or none; the comparison follows when both are there.
    void setRuns(RunPtr baseline, RunPtr plan);
    RunPtr baseline() const { return m_baseline; }
    RunPtr plan() const { return m_plan; }
    const std::optional<kforge::Comparison>& comparison() const { return m_comparison; }
    // Calls the plan's providers declined in the measured forwards of the last runWithPlan() or compare()
    // (ProfileRun::declines), entries numbered as in the plan given to it (disabled entries included); empty
    // while a profile runs and after a baseline.
    const std::vector<kforge::EntryDeclines>& declines() const { return m_declines; }

Q_SIGNALS:
    // Runs were measured or set: what the comparison shows is newer than any benchmark (NewerResult).
    void runsReplaced();

private:
    struct Result {
        std::shared_ptr<const kforge::ProfileRun> baseline;
        std::shared_ptr<const kforge::ProfileRun> plan;
        // The comparison of the runs finish() will hold (new or kept from before), computed on the worker.
        std::shared_ptr<const kforge::Comparison> comparison;
        std::pair<const kforge::ProfileRun*, const kforge::ProfileRun*> compared{nullptr, nullptr};
        QString runSummary; // a baseline or plan run's status line, with its stalls (made on the worker)
        QString error;
    };
    ProfileController(SessionOwner* owner, std::shared_ptr<MeasureSettings> settings, QObject* parent);
    bool start(Kind kind, const kforge::Plan& plan, QString* error);
    void finish(const Result& result);
    void updateComparison();
    void showPartial(RunPtr run);  // a run so far, on the UI thread
    void forgetResults() override; // the runs belonged to the previous model

    std::shared_ptr<MeasureSettings> m_settings;
    kforge::GroupBy m_groupBy = kforge::GroupBy::Kernel;
    std::string m_tableScope;

    SessionJob<Result> m_job;
    Kind m_kind = Kind::Baseline;

    RunPtr m_baseline;
    RunPtr m_plan;
    RunPtr m_baselineBefore, m_planBefore; // shown when the running action started
    std::optional<kforge::Comparison> m_comparison;
    std::vector<kforge::EntryDeclines> m_declines;
};

} // namespace kforge::ui
