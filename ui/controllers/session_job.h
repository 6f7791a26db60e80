// SPDX-License-Identifier: Apache-2.0
#pragma once
// One piece of engine work on the session, run as Hotspot's JobTracker runs its jobs: it claims the session owner
// for its activity, runs on the owner's worker thread with a cancel flag, and delivers its result on the UI thread,
// where the session is released first. Profile, Benchmark, Verify, Optimize and Revalidate controllers each run
// their work through one (they repeated the watcher, the flag, claim and release, cancel, stop and finish), and so
// does the Run controller's forward or capture. (Loading a model does not: there is no session to claim yet, and the
// newest of several loads wins; ModelLoader.)
#include "controllers/session_owner.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <functional>
#include <memory>
#include <utility>

namespace kforge::ui {

template <typename Result> class SessionJob {
public:
    // `done` gets each started job's result on the UI thread, after the session was released. `context` owns the
    // watcher: the job lives as long as it (a member of the controller that passes itself).
    SessionJob(SessionOwner* owner, QObject* context, std::function<void(Result)> done)
        : m_owner(owner), m_watcher(new QFutureWatcher<Result>(context)), m_done(std::move(done))
    {
        QObject::connect(m_watcher, &QFutureWatcherBase::finished, context, [this] { finish(); });
    }
    SessionJob(const SessionJob&) = delete;
    SessionJob& operator=(const SessionJob&) = delete;

    // Claims the session for `activity`; false with a one-line `error` when it is taken (SessionOwner::claim). A
    // claimed job has a fresh cancel flag for the work's callbacks; run() starts it.
    bool claim(SessionOwner::Activity activity, QString* error)
    {
        if (!m_owner->claim(activity, error))
            return false;
        m_activity = activity;
        m_cancel = std::make_shared<std::atomic<bool>>(false);
        m_running = true;
        return true;
    }
    // The claimed job's work, on the worker thread.
    void run(std::function<Result()> work)
    {
        m_watcher->setFuture(QtConcurrent::run(m_owner->worker(), std::move(work)));
    }
    // A claimed job that will not run after all (its set-up failed): the session is released, nothing delivered.
    void abandon()
    {
        if (!m_running || m_watcher->isRunning())
            return;
        m_running = false;
        m_owner->release(m_activity);
    }

    // What the work's progress callbacks answer: true once cancel() was called (the work stops at its next check).
    std::shared_ptr<const std::atomic<bool>> cancelFlag() const { return m_cancel; }
    void cancel()
    {
        if (m_running && m_cancel)
            m_cancel->store(true);
    }
    bool cancelled() const { return m_cancel && m_cancel->load(); }
    // Cancels, waits for the work and delivers its result now (the session is about to go, the window to close).
    // `unblock`, when given, is called while waiting, for work that waits on the UI itself (a forward paused at a
    // breakpoint is resumed by it).
    void stop(const std::function<void()>& unblock = {})
    {
        if (!m_running)
            return;
        cancel();
        if (unblock) {
            while (!m_watcher->isFinished()) {
                unblock();
                QThread::msleep(2);
            }
        }
        m_watcher->waitForFinished();
        finish();
    }
    bool isRunning() const { return m_running; }

private:
    void finish()
    {
        if (!m_running) // delivered by stop() before the queued signal came
            return;
        Result result = m_watcher->result();
        m_running = false;
        m_owner->release(m_activity);
        m_done(std::move(result));
    }

    SessionOwner* m_owner;
    QFutureWatcher<Result>* m_watcher;
    std::function<void(Result)> m_done;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    SessionOwner::Activity m_activity = SessionOwner::Activity::Idle;
    bool m_running = false;
};

} // namespace kforge::ui
