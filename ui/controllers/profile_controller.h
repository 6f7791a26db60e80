// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/plan.h>
#include <kforge/profiling.h>

#include "controllers/measure_controller.h"
#include "controllers/session_job.h"
#include "item_models/profile_results.h"

#include <QObject>
#include <QString>

#include <memory>
#include <vector>

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class ProfileResultsSource;

// Profiles the owner's session on its worker thread (kforge::profile()): a baseline, a run with a plan, or both and
// their comparison. Its results source holds the last baseline and plan runs and all that is derived from them, made
// on the worker (ProfileResults) and replaced whole. It claims the session
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
    // Record every allocation and free in baseline and plan runs (ProfileOptions::recordMemory).
    void setRecordMemory(bool record) { m_settings->recordMemory = record; }
    bool recordMemory() const { return m_settings->recordMemory; }
    std::shared_ptr<const MeasureSettings> sharedSettings() const { return m_settings; }
    // The results it measured, and those a .kfprof put there (ProfileFileController).
    ProfileResultsSource* source() const { return m_source; }

    // Each returns false with a one-line `error` when nothing started: no model, a forward or a profile is
    // running, the plan has no enabled entry. finished() follows a start.
    bool runBaseline(QString* error = nullptr);
    bool runWithPlan(const kforge::Plan& plan, QString* error = nullptr);
    bool compare(const kforge::Plan& plan, QString* error = nullptr);
    void cancel() override;
    void stop() override;
    bool isRunning() const override { return m_job.isRunning(); }
    Kind lastKind() const { return m_kind; } // of the running or last action

    // While a baseline or plan run measures, the source's baseline or plan is its run so far
    // (ProfileRun::inProgress), refined as its forwards end; the previous run is shown until the first measured
    // forward ends, and comes back if the new run fails.
    // Calls the plan's providers declined in the measured forwards of the last runWithPlan() or compare()
    // (ProfileRun::declines), entries numbered as in the plan given to it (disabled entries included); empty
    // while a profile runs and after a baseline.
    const std::vector<kforge::EntryDeclines>& declines() const { return m_declines; }

private:
    struct Result {
        std::shared_ptr<const kforge::ProfileRun> baseline; // as measured
        std::shared_ptr<const kforge::ProfileRun> plan;
        ResultsPtr results; // what finish() shows: the runs measured, or those kept from before (made on the worker)
        QString runSummary; // a baseline or plan run's status line, with its stalls (made on the worker)
        QString error;
    };
    ProfileController(SessionOwner* owner, std::shared_ptr<MeasureSettings> settings, QObject* parent);
    bool start(Kind kind, const kforge::Plan& plan, QString* error);
    void finish(const Result& result);
    void showPartial(ResultsPtr results); // with a run so far, on the UI thread
    void forgetResults() override;        // the runs belonged to the previous model

    std::shared_ptr<MeasureSettings> m_settings;
    ProfileResultsSource* m_source;

    SessionJob<Result> m_job;
    Kind m_kind = Kind::Baseline;

    ResultsPtr m_before; // shown when the running action started
    std::vector<kforge::EntryDeclines> m_declines;
};

} // namespace kforge::ui
