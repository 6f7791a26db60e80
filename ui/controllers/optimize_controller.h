// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs make_plan (kforge::makePlan: providers and kernel generators, as `kforge optimize`) off the UI thread. Each
// function's candidates reach candidates() as soon as they are judged; finished() brings the plan made. It claims the
// owner's session (SessionOwner::claim), so it never runs alongside a forward or a profile; a new session stops it
// and clears the table.
#include <kforge/optimizer.h>
#include <kforge/plan.h>

#include "controllers/session_job.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class CandidateTableModel;

class OptimizeController : public QObject {
    Q_OBJECT
public:
    enum class Outcome { Finished, Cancelled, Failed };
    Q_ENUM(Outcome)

    explicit OptimizeController(SessionOwner* owner, QObject* parent = nullptr);
    ~OptimizeController() override; // cancels a run in progress and waits for it
    CandidateTableModel* candidates() const { return m_candidates; }

    // Profile and benchmark settings of the next run (device, iterations, rounds, generators, timeout); the
    // callbacks are the controller's own.
    void setOptions(const kforge::OptimizeOptions& options) { m_options = options; }
    const kforge::OptimizeOptions& options() const { return m_options; }

    // False with a one-line `error` when nothing started (no model, a forward or a profile runs, already running).
    bool start(QString* error = nullptr);
    void cancel(); // stops before the next function; the plan holds the functions finished so far
    void stop();   // cancels and waits (blocking)
    bool isRunning() const { return m_job.isRunning(); }
    // The plan of the last run (kforge dialect, one entry per kept function), empty before the first.
    const kforge::Plan& plan() const { return m_plan; }

    // What a finished run says: how many functions were kept and, when none was, why for each function tried or
    // skipped (as the CLI prints), so an empty table is never the only answer.
    static QString summary(const kforge::OptimizeResult& result);

Q_SIGNALS:
    void runningChanged(bool running);
    void progress(const QString& line); // make_plan's progress lines
    void finished(kforge::ui::OptimizeController::Outcome outcome, const QString& message);

private:
    struct Result {
        kforge::OptimizeResult result;
        QString error;
    };
    void finish(Result r);
    void sessionChanged();
    // A function's judged candidates, as the search reports them (on the UI thread); those of an earlier run go.
    void showJudged(quint64 runId, const std::vector<kforge::CandidateReport>& judged,
                    const kforge::FunctionReport& function);

    SessionOwner* m_owner;
    CandidateTableModel* m_candidates;
    kforge::OptimizeOptions m_options;
    kforge::Plan m_plan;
    SessionJob<Result> m_job;
    quint64 m_runId = 0; // rows still queued from an older run (or model) are dropped
};

} // namespace kforge::ui
