// SPDX-License-Identifier: Apache-2.0
#include "controllers/optimize_controller.h"

#include "models/candidate_table_model.h"
#include "controllers/profile_controller.h"
#include "controllers/run_controller.h"

#include <kforge/model_session.h>

#include <QtConcurrent/QtConcurrentRun>

namespace kforge::ui {
namespace {

QString oneLine(const char* text) { return QString::fromUtf8(text).replace(QLatin1Char('\n'), QLatin1Char(' ')); }

} // namespace

OptimizeController::OptimizeController(RunController* forwards, ProfileController* profiles, QObject* parent)
    : QObject(parent), m_forwards(forwards), m_profiles(profiles), m_candidates(new CandidateTableModel(this)),
      m_watcher(new QFutureWatcher<Result>(this))
{
    m_pool.setMaxThreadCount(1);
    connect(m_watcher, &QFutureWatcherBase::finished, this, &OptimizeController::finish);
}

OptimizeController::~OptimizeController() { stop(); }

void OptimizeController::setSession(std::shared_ptr<kforge::ModelSession> session)
{
    stop();
    ++m_runId;
    m_session = std::move(session);
    m_candidates->clear();
    m_plan = {};
}

bool OptimizeController::start(QString* error)
{
    const auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    if (!m_session)
        return fail(tr("No model is loaded."));
    if (m_running)
        return fail(tr("An optimisation is already running."));
    if (m_profiles && m_profiles->isRunning())
        return fail(tr("A profile is running: wait for it or cancel it first."));
    if (m_forwards && (m_forwards->isRunning() || m_forwards->isProfiling()))
        return fail(tr("A forward is running: finish or abort it first."));
    if (m_forwards && m_forwards->runtimeActive())
        return fail(tr("The last forward left its plan runtime active (leftovers): unwind it first."));

    m_candidates->clear();
    const quint64 runId = ++m_runId;
    m_running = true;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    if (m_forwards)
        m_forwards->setProfiling(true); // forwards wait, breakpoints are suspended, as during a profile
    Q_EMIT runningChanged(true);

    kforge::OptimizeOptions options = m_options;
    // Called on the worker thread: everything travels to the UI thread queued.
    options.keepGoing = [cancel = m_cancel] { return !cancel->load(); };
    options.log = [this](const std::string& line) {
        QMetaObject::invokeMethod(
            this, [this, text = QString::fromStdString(line)] { Q_EMIT progress(text); }, Qt::QueuedConnection);
    };
    options.onFunction = [this, runId](const kforge::FunctionReport& function,
                                       const std::vector<kforge::CandidateReport>& judged) {
        QMetaObject::invokeMethod(
            this,
            [this, runId, judged, function] {
                if (runId == m_runId)
                    m_candidates->append(judged, function);
            },
            Qt::QueuedConnection);
    };
    auto work = [session = m_session, options] {
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
    m_watcher->setFuture(QtConcurrent::run(&m_pool, std::move(work)));
    return true;
}

void OptimizeController::cancel()
{
    if (m_running && m_cancel)
        m_cancel->store(true);
}

void OptimizeController::stop()
{
    if (!m_running)
        return;
    cancel();
    m_watcher->waitForFinished();
    finish();
}

void OptimizeController::finish()
{
    if (!m_running)
        return;
    const Result r = m_watcher->result();
    m_running = false;
    if (m_forwards)
        m_forwards->setProfiling(false);
    // Rows queued by the worker arrive before this: finish() is queued after them on the same thread.
    Outcome outcome = Outcome::Finished;
    QString message;
    if (!r.error.isEmpty()) {
        outcome = Outcome::Failed;
        message = r.error;
    } else {
        m_plan = r.result.plan;
        m_plan.modelName = m_session ? m_session->displayName() : std::string();
        outcome = r.result.cancelled ? Outcome::Cancelled : Outcome::Finished;
        message = tr("%n function(s) kept in the plan", nullptr, int(m_plan.entries.size()));
    }
    Q_EMIT runningChanged(false);
    Q_EMIT finished(outcome, message);
}

} // namespace kforge::ui
