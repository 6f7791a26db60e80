// SPDX-License-Identifier: Apache-2.0
#include "controllers/optimize_controller.h"

#include "item_models/candidate_table_model.h"
#include "item_models/format.h"
#include "controllers/queue_call.h"
#include "controllers/session_owner.h"

#include <kforge/memory_profile.h>
#include <kforge/model_session.h>

namespace kforge::ui {

OptimizeController::OptimizeController(SessionOwner* owner, QObject* parent)
    : QObject(parent), m_owner(owner), m_candidates(new CandidateTableModel(this)),
      m_job(owner, this, [this](Result r) { finish(std::move(r)); })
{
    connect(m_owner, &SessionOwner::aboutToChangeSession, this, &OptimizeController::stop);
    connect(m_owner, &SessionOwner::sessionChanged, this, &OptimizeController::sessionChanged);
}

OptimizeController::~OptimizeController() { stop(); }

void OptimizeController::sessionChanged()
{
    ++m_runId;
    m_candidates->clear();
    m_plan = {};
}

bool OptimizeController::start(QString* error)
{
    if (!m_job.claim(SessionOwner::Activity::Optimize, error))
        return false;

    m_candidates->clear();
    const quint64 runId = ++m_runId;
    Q_EMIT runningChanged(true);

    kforge::OptimizeOptions options = m_options;
    options.writtenBy = "KernelForge Studio (Optimize)";
    // Called on the worker thread: everything travels to the UI thread queued.
    options.progress = [cancel = m_job.cancelFlag()](int, int) { return !cancel->load(); };
    options.log = queuedLines(this, &OptimizeController::progress);
    options.onFunction = [this, runId](const kforge::FunctionReport& function,
                                       const std::vector<kforge::CandidateReport>& judged) {
        queueCall(this, &OptimizeController::showJudged, runId, judged, function);
    };
    auto work = [session = m_owner->session(), options] {
        Result r;
        try {
            if (session->device() != options.device)
                session->setDevice(options.device);
            r.result = kforge::makePlan(*session, options);
        } catch (const std::exception& e) {
            r.error = oneLine(e.what());
        }
        return r;
    };
    m_job.run(std::move(work));
    return true;
}

void OptimizeController::cancel() { m_job.cancel(); }

void OptimizeController::stop() { m_job.stop(); }

QString OptimizeController::summary(const kforge::OptimizeResult& result)
{
    QString kept = tr("%n function(s) kept in the plan", nullptr, int(result.plan.entries.size()));
    if (result.peak) // a budget was set: what the plan does to the forward's peak, and what it cost the plan
        kept +=
            tr(", peak memory %1").arg(QString::fromStdString(kforge::describePeakChange(*result.peak))) +
            (result.droppedByBudget.empty()
                 ? QString()
                 : tr(" after dropping %1 for the budget")
                           .arg(
                               QString::fromStdString(result.droppedByBudget.front()).section(QLatin1Char(':'), 0, 0)) +
                       (result.droppedByBudget.size() > 1
                            ? tr(" and %n more", nullptr, int(result.droppedByBudget.size() - 1))
                            : QString()));
    if (!result.plan.entries.empty())
        return kept;
    QStringList why;
    for (const kforge::FunctionReport& f : result.functions) {
        QString reason = QString::fromStdString(f.skipped);
        if (reason.isEmpty()) // tried: the first candidate's reason, in the order they were ranked
            for (const kforge::CandidateReport& c : result.candidates)
                if (c.function == f.function && !c.rejected.empty()) {
                    reason = QStringLiteral("%1 %2").arg(QString::fromStdString(c.provider),
                                                         QString::fromStdString(c.rejected));
                    break;
                }
        if (!reason.isEmpty())
            why << QStringLiteral("%1: %2").arg(QString::fromStdString(f.function), reason);
    }
    return why.isEmpty() ? kept : kept + QStringLiteral(" (") + why.join(QStringLiteral("; ")) + QLatin1Char(')');
}

void OptimizeController::showJudged(quint64 runId, const std::vector<kforge::CandidateReport>& judged,
                                    const kforge::FunctionReport& function)
{
    if (runId == m_runId)
        m_candidates->append(judged, function);
}

void OptimizeController::finish(Result r)
{
    // Rows queued by the worker arrive before this: finish() is queued after them on the same thread.
    Outcome outcome = Outcome::Finished;
    QString message;
    if (!r.error.isEmpty()) {
        outcome = Outcome::Failed;
        message = r.error;
    } else {
        m_candidates->settle(r.result.candidates);
        m_plan = r.result.plan;
        m_plan.modelName = m_owner->session() ? m_owner->session()->displayName() : std::string();
        outcome = r.result.cancelled ? Outcome::Cancelled : Outcome::Finished;
        message = summary(r.result);
    }
    Q_EMIT runningChanged(false);
    Q_EMIT finished(outcome, message);
}

} // namespace kforge::ui
