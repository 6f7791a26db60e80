// SPDX-License-Identifier: Apache-2.0
#include "controllers/run_controller.h"

#include "item_models/event_log_model.h"
#include "item_models/format.h"
#include "item_models/function_stacks_model.h"
#include "controllers/session_owner.h"

#include <kforge/events.h>
#include <kforge/model_session.h>
#include <kforge/runtime.h>

#include <QTimer>

#include <exception>

namespace kforge::ui {
namespace {

constexpr int kRefreshIntervalMs = 33;           // ~30 Hz
constexpr std::size_t kStreamCapacity = 1 << 18; // events buffered between two drains
constexpr std::size_t kMaxDrainPerTick = 100'000;

bool samePoint(const std::optional<kforge::PausePoint>& a, const std::optional<kforge::PausePoint>& b)
{
    if (a.has_value() != b.has_value())
        return false;
    if (!a)
        return true;
    return a->kind == b->kind && a->modulePath == b->modulePath && a->function == b->function && a->thread == b->thread;
}

QString describe(const std::exception& e) { return QString::fromUtf8(e.what()).replace(QLatin1Char('\n'), ' '); }

QString captureMessage(const kforge::ModelSession& session, const QString& error, int leftovers)
{
    if (!error.isEmpty()) {
        QString message = RunController::tr("Graph capture failed: %1").arg(error);
        if (leftovers > 0)
            message += RunController::tr(" (%n leftover patch(es) kept)", nullptr, leftovers);
        return message;
    }
    const std::vector<kforge::CaptureRecord> captures = session.captures();
    if (captures.empty())
        return RunController::tr("Graph captured");
    return RunController::tr("Captured %1: %n provider(s) baked into the graph", nullptr,
                             int(captures.back().providers.size()))
        .arg(QString::fromStdString(captures.back().id));
}

} // namespace

RunController::RunController(SessionOwner* owner, QObject* parent)
    : QObject(parent), m_owner(owner), m_eventLog(new EventLogModel(this)), m_stacks(new FunctionStacksModel(this)),
      m_timer(new QTimer(this)), m_job(owner, this, [this](const QString& error) { finish(error); })
{
    m_timer->setInterval(kRefreshIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &RunController::tick);
    connect(m_owner, &SessionOwner::aboutToChangeSession, this, [this] {
        stop();
        m_runtime.reset(); // it patches the old session's functions
    });
    connect(m_owner, &SessionOwner::sessionChanged, this, &RunController::sessionChanged);
    connect(m_owner, &SessionOwner::activityChanged, this, [this] { suspendBreakpoints(m_owner->isMeasuring()); });
    attachStream();
    m_timer->start();
}

RunController::~RunController()
{
    m_timer->stop();
    stop();
    Stepper& stepper = Stepper::instance();
    for (const QString& path : std::as_const(m_moduleBreakpoints))
        stepper.removeModuleBreakpoint(path.toStdString());
    for (const QString& function : std::as_const(m_functionBreakpoints))
        stepper.removeFunctionBreakpoint(function.toStdString());
    m_runtime.reset(); // deactivates: no patch of ours outlives the window
    m_stream.reset();
}

void RunController::attachStream()
{
    if (m_stream)
        return;
    try {
        // Every module's entry: the tree counts each call in the module it ran in, with or without a plan.
        m_stream = kforge::EventStream::attach(kStreamCapacity, kforge::EventStream::Modules::Every);
        m_streamError.clear();
    } catch (const std::exception& e) {
        m_streamError = describe(e); // another observer holds the stream; runs still work, without events
    }
}

void RunController::sessionChanged()
{
    m_statistics.clear();
    m_declines.clear();
    m_stacks->clear();
    m_leftoverCount = 0;
    Q_EMIT statisticsChanged();
    Q_EMIT leftoversChanged(0);
    setRuntimeActive(false);
}

void RunController::setRuntimeActive(bool active)
{
    m_owner->setRuntimeHeld(active);
    if (active == m_runtimeActive)
        return;
    m_runtimeActive = active;
    Q_EMIT runtimeActiveChanged(active);
}

kforge::ModelSession* RunController::session() const { return m_owner->session().get(); }

EventLogModel* RunController::eventLog() const { return m_eventLog; }

FunctionStacksModel* RunController::stacksModel() const { return m_stacks; }

const RunStatistics& RunController::statistics() const { return m_statistics; }

bool RunController::run(const kforge::Plan& plan, QString* error) { return start(plan, false, error); }

bool RunController::capture(const kforge::Plan& plan, int warmupIterations, QString* error)
{
    return start(plan, false, error, std::max(0, warmupIterations));
}

bool RunController::step(const kforge::Plan& plan, QString* error)
{
    if (m_paused) {
        m_resumedFrom = std::exchange(m_paused, std::nullopt);
        Q_EMIT pausedChanged(false);
        Stepper::instance().resume(Stepper::Resume::Step);
        return true;
    }
    return start(plan, true, error);
}

void RunController::continueRun()
{
    if (!m_paused)
        return;
    m_resumedFrom = std::exchange(m_paused, std::nullopt);
    Q_EMIT pausedChanged(false);
    Stepper::instance().resume(Stepper::Resume::Continue);
}

void RunController::abort()
{
    if (!m_paused)
        return;
    m_resumedFrom = std::exchange(m_paused, std::nullopt);
    m_aborted = true;
    Q_EMIT pausedChanged(false);
    Stepper::instance().resume(Stepper::Resume::Abort);
}

bool RunController::start(const kforge::Plan& plan, bool pauseAtStart, QString* error, int captureWarmup)
{
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    const auto activity = captureWarmup >= 0 ? SessionOwner::Activity::Capture : SessionOwner::Activity::Forward;
    if (!m_job.claim(activity, error))
        return false;
    const auto failStarted = [&](const QString& message) {
        m_job.abandon();
        return fail(message);
    };
    kforge::ModelSession* session = m_owner->session().get();

    drainEvents();     // what happened before this run belongs to the log, not to its statistics
    m_runtime.reset(); // deactivating the previous runtime unwinds whatever it left behind
    m_statistics.clear();
    m_declines.clear();
    m_haveTimeBase = false;
    attachStream();
    if (plan.hasEnabledEntry()) {
        try {
            m_runtime = std::make_unique<kforge::KernelProviderRuntime>(*session, plan);
            m_runtime->activate();
        } catch (const std::exception& e) {
            m_runtime.reset();
            refreshStacks();
            setRuntimeActive(false);
            return failStarted(describe(e));
        }
    }
    try {
        session->setKeepLeftovers(m_keepLeftovers);
    } catch (const std::exception& e) {
        return failStarted(describe(e));
    }
    if (pauseAtStart && !m_moduleBreakpoints.contains(QString())) {
        Stepper::instance().addModuleBreakpoint(""); // the root's entry: the first pause point of a forward
        m_pauseAtStartPending = true;
    }

    m_aborted = false;
    m_counting = true;
    m_capturing = captureWarmup >= 0;
    m_paused.reset();
    Q_EMIT runningChanged(true);
    Q_EMIT statisticsChanged();
    setRuntimeActive(m_runtime && m_runtime->isActive());

    m_job.run([session, captureWarmup]() -> QString {
        // Exceptions must not escape into the pool: the UI reads the outcome as a string.
        try {
            if (captureWarmup >= 0) {
                const kforge::CaptureRecord record = session->capture(captureWarmup);
                return record.ok ? QString() : QString::fromStdString(record.error);
            }
            session->forwardDiscardingOutputs();
            return {};
        } catch (const std::exception& e) {
            const QString message = describe(e);
            return message.isEmpty() ? QStringLiteral("forward failed") : message;
        } catch (...) {
            return QStringLiteral("forward failed: unknown error");
        }
    });
    return true;
}

// The session is released already (SessionJob), and nothing else starts before this returns (the UI thread).
void RunController::finish(const QString& error)
{
    drainEvents(); // the run's last events still count for its statistics
    m_counting = false;
    const bool captured = std::exchange(m_capturing, false);
    if (m_pauseAtStartPending) {
        Stepper::instance().removeModuleBreakpoint("");
        m_pauseAtStartPending = false;
    }
    const bool wasPaused = m_paused.has_value();
    m_paused.reset();
    m_resumedFrom.reset();

    // Leftovers a failed forward kept (keep-leftovers mode) are what the user came to look at: the runtime
    // stays as it is until they unwind. Otherwise it is switched off, as applied() would.
    std::vector<kforge::LeftoverPatch> left = leftovers();
    if (m_runtime && left.empty())
        m_runtime->deactivate();
    m_declines = m_runtime ? m_runtime->declines() : std::vector<kforge::EntryDeclines>{};
    drainEvents();
    refreshStacks();
    setRuntimeActive(m_runtime && m_runtime->isActive());
    if (wasPaused)
        Q_EMIT pausedChanged(false);
    Q_EMIT runningChanged(false);

    // Declined calls ran the original: the message says so, or the plan seems to have done more than it did.
    const QString declined = formatDeclines(m_declines);
    auto withDeclines = [&declined](QString message) {
        return declined.isEmpty() ? message : message + QStringLiteral(" — ") + declined;
    };
    if (captured) {
        Q_EMIT captureFinished(error.isEmpty(),
                               withDeclines(captureMessage(*m_owner->session(), error, int(left.size()))));
        return;
    }
    QString message;
    if (error.isEmpty()) {
        message = tr("Forward finished: %n intercepted call(s)", nullptr, int(m_statistics.totalCalls()));
    } else {
        message = tr("Forward failed: %1").arg(error);
        if (!left.empty())
            message += tr(" (%n leftover patch(es) kept)", nullptr, int(left.size()));
    }
    Q_EMIT runFinished(error.isEmpty(), withDeclines(message));
}

void RunController::stop()
{
    // A forward paused at a breakpoint waits for the UI: it is told to abort.
    m_job.stop([] {
        if (Stepper& stepper = Stepper::instance(); stepper.paused())
            stepper.resume(Stepper::Resume::Abort);
    });
}

bool RunController::isRunning() const { return m_job.isRunning(); }

bool RunController::isCapturing() const { return m_capturing; }

bool RunController::isPaused() const { return m_paused.has_value(); }

std::optional<kforge::PausePoint> RunController::pausePoint() const { return m_paused; }

QString RunController::pausedModulePath() const
{
    if (!m_paused)
        return {};
    if (m_paused->kind == PausePoint::Kind::ModuleEnter)
        return QString::fromStdString(m_paused->modulePath);
    // A call: the module it runs in, which the events of every module tell (the pause point names the innermost
    // scope a plan hooks, which may be an ancestor).
    const std::string current = m_statistics.currentModule(m_paused->thread);
    return QString::fromStdString(current.empty() ? m_paused->modulePath : current);
}

QString RunController::statusText() const
{
    if (m_paused) {
        const QString where = formatModulePath(pausedModulePath().toStdString());
        if (m_paused->kind == PausePoint::Kind::ModuleEnter)
            return tr("paused at %1 (module enter)").arg(where);
        return tr("paused at %1 (%2 call)").arg(where, QString::fromStdString(m_paused->function));
    }
    if (m_job.isRunning())
        return tr("running");
    return {};
}

void RunController::suspendBreakpoints(bool suspend)
{
    if (suspend == m_breakpointsSuspended)
        return;
    m_breakpointsSuspended = suspend;
    Stepper& stepper = Stepper::instance();
    for (const QString& path : std::as_const(m_moduleBreakpoints)) {
        if (suspend)
            stepper.removeModuleBreakpoint(path.toStdString());
        else
            stepper.addModuleBreakpoint(path.toStdString());
    }
    for (const QString& function : std::as_const(m_functionBreakpoints)) {
        if (suspend)
            stepper.removeFunctionBreakpoint(function.toStdString());
        else
            stepper.addFunctionBreakpoint(function.toStdString());
    }
}

void RunController::toggleModuleBreakpoint(const QString& path)
{
    Stepper& stepper = Stepper::instance();
    if (m_moduleBreakpoints.remove(path)) {
        if (!(path.isEmpty() && m_pauseAtStartPending) && !m_breakpointsSuspended)
            stepper.removeModuleBreakpoint(path.toStdString());
    } else {
        m_moduleBreakpoints.insert(path);
        if (!m_breakpointsSuspended)
            stepper.addModuleBreakpoint(path.toStdString());
        if (path.isEmpty())
            m_pauseAtStartPending = false; // the user's own now: keep it after the first pause
    }
    Q_EMIT breakpointsChanged();
}

void RunController::toggleFunctionBreakpoint(const QString& function)
{
    Stepper& stepper = Stepper::instance();
    if (m_functionBreakpoints.remove(function)) {
        if (!m_breakpointsSuspended)
            stepper.removeFunctionBreakpoint(function.toStdString());
    } else {
        m_functionBreakpoints.insert(function);
        if (!m_breakpointsSuspended)
            stepper.addFunctionBreakpoint(function.toStdString());
    }
    m_stacks->setFunctionBreakpoints(m_functionBreakpoints);
    Q_EMIT breakpointsChanged();
}

void RunController::clearBreakpoints()
{
    Stepper& stepper = Stepper::instance();
    for (const QString& path : std::as_const(m_moduleBreakpoints))
        stepper.removeModuleBreakpoint(path.toStdString());
    for (const QString& function : std::as_const(m_functionBreakpoints))
        stepper.removeFunctionBreakpoint(function.toStdString());
    m_moduleBreakpoints.clear();
    m_functionBreakpoints.clear();
    m_stacks->setFunctionBreakpoints({});
    Q_EMIT breakpointsChanged();
}

void RunController::setKeepLeftovers(bool keep) { m_keepLeftovers = keep; }

bool RunController::runtimeActive() const { return m_runtimeActive; }

std::vector<kforge::LeftoverPatch> RunController::leftovers() const
{
    if (!m_runtime)
        return {};
    return FunctionStacksModel::withReasons(m_runtime->leftovers(), m_runtime->leftoverReports());
}

void RunController::unwind()
{
    if (!m_runtime || m_job.isRunning())
        return;
    m_runtime->deactivate();
    m_runtime->clearLeftoverReports();
    refresh();
    setRuntimeActive(false);
}

void RunController::refresh()
{
    drainEvents();
    updatePause();
    refreshStacks();
}

void RunController::tick()
{
    drainEvents();
    updatePause();
    if (m_job.isRunning() || m_leftoverCount > 0)
        refreshStacks();
}

void RunController::drainEvents()
{
    if (!m_stream)
        return;
    std::vector<kforge::Event> batch;
    m_stream->drain(batch, kMaxDrainPerTick);
    m_eventLog->setDropped(m_stream->dropped());
    if (batch.empty())
        return;
    bool changed = false;
    for (const kforge::Event& event : batch) {
        if (!m_counting)
            continue; // between runs: the log keeps them, the last run's statistics do not
        if (!m_haveTimeBase) {
            m_stacks->setTimeBase(event.timeNs);
            m_haveTimeBase = true;
        }
        changed |= m_statistics.add(event);
        if (m_forwardThread == 0 && (event.kind == EventKind::ModuleEnter || event.kind == EventKind::ProviderCall ||
                                     event.kind == EventKind::OriginalCall)) {
            m_forwardThread = event.thread;
            m_stacks->setForwardThread(event.thread);
        }
    }
    m_eventLog->append(std::move(batch));
    if (changed)
        Q_EMIT statisticsChanged();
}

void RunController::refreshStacks()
{
    std::vector<kforge::LeftoverPatch> left = leftovers();
    const int count = int(left.size());
    m_stacks->setSnapshot(kforge::snapshotFunctionStacks(), std::move(left));
    if (count != m_leftoverCount) {
        m_leftoverCount = count;
        Q_EMIT leftoversChanged(count);
    }
}

void RunController::updatePause()
{
    if (!m_job.isRunning())
        return;
    std::optional<kforge::PausePoint> now = Stepper::instance().paused();
    // Until the forward thread wakes up, the stepper still reports the pause we resumed from.
    if (m_resumedFrom && samePoint(now, m_resumedFrom))
        return;
    m_resumedFrom.reset();
    if (samePoint(now, m_paused))
        return;
    if (now && m_pauseAtStartPending) {
        Stepper::instance().removeModuleBreakpoint("");
        m_pauseAtStartPending = false;
    }
    if (now && m_forwardThread == 0) {
        m_forwardThread = now->thread;
        m_stacks->setForwardThread(now->thread);
    }
    const bool pausedBefore = m_paused.has_value();
    m_paused = now;
    drainEvents();   // the events up to the pause: the tree's "inside" path depends on them
    refreshStacks(); // the moment of the pause
    if (pausedBefore != m_paused.has_value() || m_paused)
        Q_EMIT pausedChanged(m_paused.has_value());
}

} // namespace kforge::ui
