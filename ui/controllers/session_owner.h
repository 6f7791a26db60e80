// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one owner of the model session in the desktop app. Forwards, graph captures, profiles, benchmarks and
// optimisations all use the session, never two at a time, and all run on the owner's one worker thread; the
// controllers claim the session before they start and release it when they end, so "is something busy" has one
// answer (activity()) and one wording when the session is taken. A new session reaches every part through
// sessionChanged(), after the controllers stopped their work on the old one (aboutToChangeSession()).
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <memory>

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class SessionOwner : public QObject {
    Q_OBJECT
public:
    enum class Activity { Idle, Forward, Capture, Profile, Benchmark, Verify, Optimize };
    Q_ENUM(Activity)

    explicit SessionOwner(QObject* parent = nullptr);
    ~SessionOwner() override; // waits for the worker thread

    // Stops the work on the old session (aboutToChangeSession), then switches and emits sessionChanged().
    void setSession(const QString& source, std::shared_ptr<kforge::ModelSession> session);
    // Stops the work on the session (aboutToChangeSession) and keeps it: for when the window closes.
    void stopWork();
    const std::shared_ptr<kforge::ModelSession>& session() const { return m_session; }
    QString source() const { return m_source; }

    // The thread every use of the session runs on. It never expires: patches a failed forward leaves behind
    // (keep-leftovers mode) stay on a live thread where the stacks view and unwinding reach them.
    QThreadPool* worker() { return &m_worker; }

    // Takes the session for `activity`; false with a one-line `error` saying what holds it (no model, another
    // activity, or a plan runtime left active by a failed forward, which only a forward or a capture may replace).
    bool claim(Activity activity, QString* error = nullptr);
    void release(Activity activity); // by the claimant, when its work ended
    Activity activity() const { return m_activity; }
    bool isBusy() const { return m_activity != Activity::Idle; }
    // A profile, benchmark or optimisation: forwards wait, and breakpoints are lifted so that none pauses.
    bool isMeasuring() const;
    bool canStart(Activity activity) const { return refusal(activity).isEmpty(); }
    // Why claim(activity) would fail now, in the words it would use; empty when it would not.
    QString refusal(Activity activity) const;

    // Whether a forward left its plan runtime active (leftovers): profiles and optimisations wait for an unwind.
    void setRuntimeHeld(bool held);
    bool runtimeHeld() const { return m_runtimeHeld; }

Q_SIGNALS:
    void aboutToChangeSession(); // stop and wait for your work on session(): it is about to be replaced
    void sessionChanged();
    void activityChanged(kforge::ui::SessionOwner::Activity activity);

private:
    std::shared_ptr<kforge::ModelSession> m_session;
    QString m_source;
    QThreadPool m_worker;
    Activity m_activity = Activity::Idle;
    bool m_runtimeHeld = false;
};

} // namespace kforge::ui
