// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/benchmark.h>
#include <kforge/plan.h>
#include <kforge/profiling.h>
#include <kforge/verify.h>

#include "item_models/speed_summary.h"

#include "controllers/session_job.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <utility>
#include <memory>
#include <optional>

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

// Profiles the owner's session on its worker thread (kforge::profile()): a baseline, a run with a plan, or both and
// their comparison; or benchmarks the plan without the profiler (kforge::benchmarkPlan(), as `kforge bench`); or
// verifies it on the model's outputs (kforge::verifyPlan(), as `kforge verify`). Keeps the last baseline and plan
// runs, and the comparison when both exist. It claims the session (SessionOwner::claim), so a
// profile never runs alongside a forward or an optimisation. A new session cancels a profile and clears the runs.
class ProfileController : public QObject {
    Q_OBJECT
public:
    enum class Outcome { Finished, Cancelled, Failed };
    Q_ENUM(Outcome)
    enum class Kind { Baseline, Plan, Compare, Benchmark, Verify };
    Q_ENUM(Kind)

    using RunPtr = std::shared_ptr<const kforge::ProfileRun>;

    explicit ProfileController(SessionOwner* owner, QObject* parent = nullptr);
    ~ProfileController() override; // cancels a profile in progress and waits for it

    // Whether CUDA kernels can be traced here (CUPTI and a device); `why` says why not.
    static bool cudaAvailable(QString* why = nullptr);
    // "cpu" or "cuda"; "cuda" where it is not available falls back to "cpu".
    void setDevice(const QString& device);
    QString device() const { return m_device; }
    void setWarmupIterations(int count) { m_warmup = count; }
    int warmupIterations() const { return m_warmup; }
    void setIterations(int count) { m_iterations = count; }
    int iterations() const { return m_iterations; }
    // Record each CPU op's input shapes in baseline and plan runs (ProfileOptions::recordShapes).
    void setRecordShapes(bool record) { m_recordShapes = record; }
    bool recordShapes() const { return m_recordShapes; }
    // The kernel table's grouping: a study's runs have their rows of it computed on the worker (run_views.h).
    void setTableGrouping(kforge::GroupBy groupBy) { m_groupBy = groupBy; }

    // Each returns false with a one-line `error` when nothing started: no model, a forward or a profile is
    // running, the plan has no enabled entry. finished() follows a start.
    bool runBaseline(QString* error = nullptr);
    bool runWithPlan(const kforge::Plan& plan, QString* error = nullptr);
    bool compare(const kforge::Plan& plan, QString* error = nullptr);
    // Forward latency without and with the plan in alternating rounds (warm-up and iterations are rounds).
    bool benchmark(const kforge::Plan& plan, QString* error = nullptr);
    // The plan's outputs against the baseline's, and the first diverging module when they differ.
    bool verify(const kforge::Plan& plan, QString* error = nullptr);
    // The run stops after its current forward and reports Cancelled.
    void cancel();
    // Cancels and waits (blocking; for when the session goes away).
    void stop();
    bool isRunning() const { return m_job.isRunning(); }
    Kind lastKind() const { return m_kind; } // of the running or last action

    // While a baseline or plan run measures, baseline() or plan() is its run so far (ProfileRun::inProgress),
    // refined as its forwards end (resultsChanged each time); the previous run is shown until the first measured
    // forward ends, and comes back if the new run fails.

    // Runs from a .kfprof file, or none; the comparison follows when both are there.
    void setRuns(RunPtr baseline, RunPtr plan);
    RunPtr baseline() const { return m_baseline; }
    RunPtr plan() const { return m_plan; }
    const std::optional<kforge::Comparison>& comparison() const { return m_comparison; }
    // The last benchmark of this model (a stopped one keeps its measured rounds); none before the first.
    const std::optional<kforge::BenchmarkResult>& benchmarkResult() const { return m_benchmark; }
    // The plan the last benchmark measured, and whether it or the comparison came last (wholeForwardLines).
    const kforge::Plan& benchmarkedPlan() const { return m_benchmarkPlan; }
    NewerResult newerResult() const { return m_newer; }
    // The last finished verification of this model; none before the first.
    const std::optional<kforge::VerifyReport>& verifyReport() const { return m_verify; }
    // Calls the plan's providers declined in the measured forwards of the last runWithPlan() or compare()
    // (ProfileRun::declines), entries numbered as in the plan given to it (disabled entries included); empty
    // while a profile runs and after a baseline.
    const std::vector<kforge::EntryDeclines>& declines() const { return m_declines; }

Q_SIGNALS:
    void runningChanged(bool running);
    // Forwards done of all the forwards the action runs (warm-up included); `stage` is "baseline" or "plan".
    void progress(int done, int total, const QString& stage);
    void resultsChanged();
    void finished(kforge::ui::ProfileController::Outcome outcome, const QString& message);

private:
    struct Result {
        std::shared_ptr<const kforge::ProfileRun> baseline;
        std::shared_ptr<const kforge::ProfileRun> plan;
        std::shared_ptr<kforge::BenchmarkResult> benchmark;
        std::shared_ptr<kforge::VerifyReport> verify;
        // The comparison of the runs finish() will hold (new or kept from before), computed on the worker.
        std::shared_ptr<const kforge::Comparison> comparison;
        std::pair<const kforge::ProfileRun*, const kforge::ProfileRun*> compared{nullptr, nullptr};
        QString error;
    };
    bool start(Kind kind, const kforge::Plan& plan, QString* error);
    void finish(const Result& result);
    void updateComparison();
    void showPartial(RunPtr run); // a run so far, on the UI thread
    void sessionChanged();        // the runs and the benchmark belonged to the previous model

    SessionOwner* m_owner;
    QString m_device = QStringLiteral("cpu");
    int m_warmup = 3;
    int m_iterations = 10;
    bool m_recordShapes = false;
    kforge::GroupBy m_groupBy = kforge::GroupBy::Kernel;

    SessionJob<Result> m_job;
    Kind m_kind = Kind::Baseline;

    RunPtr m_baseline;
    RunPtr m_plan;
    RunPtr m_baselineBefore, m_planBefore; // shown when the running action started
    std::optional<kforge::Comparison> m_comparison;
    std::optional<kforge::BenchmarkResult> m_benchmark;
    kforge::Plan m_startedPlan; // of the running action
    kforge::Plan m_benchmarkPlan;
    NewerResult m_newer = NewerResult::Comparison;
    std::optional<kforge::VerifyReport> m_verify;
    std::vector<kforge::EntryDeclines> m_declines;
};

} // namespace kforge::ui
