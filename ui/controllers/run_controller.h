// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/run_statistics.h"

#include <kforge/plan.h>
#include <kforge/runtime_types.h>
#include <kforge/stepping.h>

#include "controllers/session_job.h"
#include <QObject>
#include <QSet>
#include <QString>

#include <memory>
#include <optional>

class QTimer;

namespace kforge {
class EventStream;
class KernelProviderRuntime;
class ModelSession;
} // namespace kforge

namespace kforge::ui {

class EventLogModel;
class FunctionStacksModel;
class SessionOwner;

// Runs forwards of one session with a plan's runtime active, off the UI thread, and keeps the UI's picture
// of it current: a timer (~30 Hz) drains the event stream into the event log and the run statistics, takes
// function-stack snapshots while a forward runs or is paused, and notices pauses at breakpoints.
//
// Forwards run on the session owner's worker thread, which never expires, so patches a failed forward leaves
// behind (keep-leftovers mode) stay on a live thread where the stacks view and unwinding can reach them. A new
// session of the owner stops a forward in progress first (see stop()).
class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(SessionOwner* owner, QObject* parent = nullptr);
    ~RunController() override; // aborts a paused forward, waits for the worker, removes its breakpoints

    kforge::ModelSession* session() const;

    EventLogModel* eventLog() const;
    FunctionStacksModel* stacksModel() const;
    const RunStatistics& statistics() const;

    // One forward with the enabled entries of `plan` in effect (no runtime for a plan without any). Returns
    // false with `error` set when nothing started: no session, already running, plan rejected by the runtime.
    bool run(const kforge::Plan& plan, QString* error = nullptr);
    // Paused: single step. Idle: starts a forward that pauses at its first pause point.
    bool step(const kforge::Plan& plan, QString* error = nullptr);
    // R15: warms up, then captures one forward into a CUDA graph with the enabled entries of `plan` active,
    // on the forward thread (kept leftovers of a failed capture stay reachable there). captureFinished()
    // follows; the record is the session's last capture. False with `error` when nothing started.
    bool capture(const kforge::Plan& plan, int warmupIterations, QString* error = nullptr);
    void continueRun();
    void abort();
    // Aborts a paused forward and waits for the worker (blocking; used when the session goes away).
    void stop();

    bool isRunning() const; // a forward or a capture
    bool isCapturing() const;
    bool isPaused() const;
    // Whether the user aborted the last forward (Abort at a pause): its failure was asked for, not one to warn about.
    bool wasAborted() const { return m_aborted; }
    // While a profile, benchmark or optimisation uses the session (SessionOwner::isMeasuring), the breakpoints
    // are lifted from the stepper so that no measured forward pauses; they come back when it ends.
    bool breakpointsSuspended() const { return m_breakpointsSuspended; }
    std::optional<kforge::PausePoint> pausePoint() const;
    // Where the paused forward is: the pause point's module, or the innermost hooked module of its thread.
    QString pausedModulePath() const;
    QString statusText() const; // "paused at blocks.0.mlp (module enter)", "running", ""

    void toggleModuleBreakpoint(const QString& path);
    void toggleFunctionBreakpoint(const QString& function);
    void clearBreakpoints();
    QSet<QString> moduleBreakpoints() const { return m_moduleBreakpoints; }
    QSet<QString> functionBreakpoints() const { return m_functionBreakpoints; }

    void setKeepLeftovers(bool keep); // applied to the session when a forward starts
    bool keepLeftovers() const { return m_keepLeftovers; }

    bool runtimeActive() const;
    std::vector<kforge::LeftoverPatch> leftovers() const;
    // Calls the plan's providers declined in the last forward or capture (warm-up included), entries numbered as
    // in the plan it ran with; empty while one runs, and after a run without a plan or without declines.
    const std::vector<kforge::EntryDeclines>& declines() const { return m_declines; }
    // Deactivates the runtime, which restores every function a leftover patch left replaced (R7).
    void unwind();

    // Drains events and refreshes snapshots now (the timer does it ~30 times a second).
    void refresh();
    QString eventStreamError() const { return m_streamError; }

Q_SIGNALS:
    void runningChanged(bool running);
    void pausedChanged(bool paused);
    void runFinished(bool ok, const QString& message);
    void captureFinished(bool ok, const QString& message); // instead of runFinished, after capture()
    void statisticsChanged();
    void breakpointsChanged();
    void leftoversChanged(int count);
    void runtimeActiveChanged(bool active);

private:
    bool start(const kforge::Plan& plan, bool pauseAtStart, QString* error, int captureWarmup = -1);
    void finish(const QString& error);
    void tick();
    void drainEvents();
    void refreshStacks();
    void updatePause();
    void attachStream();
    void sessionChanged();
    void suspendBreakpoints(bool suspend);
    void setRuntimeActive(bool active);

    SessionOwner* m_owner;
    std::unique_ptr<kforge::KernelProviderRuntime> m_runtime; // of the owner's session
    std::shared_ptr<kforge::EventStream> m_stream;
    QString m_streamError;
    EventLogModel* m_eventLog;
    FunctionStacksModel* m_stacks;
    RunStatistics m_statistics;
    QTimer* m_timer;
    SessionJob<QString> m_job; // the forward or capture: its error, "" when it ended well

    bool m_counting = false; // the run's events count for its statistics: from its start to its last drain
    bool m_aborted = false;
    bool m_capturing = false;
    bool m_breakpointsSuspended = false;
    bool m_keepLeftovers = false;
    bool m_pauseAtStartPending = false; // the temporary root breakpoint of step() from idle
    std::optional<kforge::PausePoint> m_paused;
    std::optional<kforge::PausePoint> m_resumedFrom;
    QSet<QString> m_moduleBreakpoints;
    QSet<QString> m_functionBreakpoints;
    int m_leftoverCount = 0;
    std::vector<kforge::EntryDeclines> m_declines;
    bool m_runtimeActive = false;
    std::uint64_t m_forwardThread = 0;
    bool m_haveTimeBase = false;
};

} // namespace kforge::ui
