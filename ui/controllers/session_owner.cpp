// SPDX-License-Identifier: Apache-2.0
#include "controllers/session_owner.h"

#include <kforge/model_session.h>

#include <utility>

namespace kforge::ui {

SessionOwner::SessionOwner(QObject* parent) : QObject(parent)
{
    m_worker.setMaxThreadCount(1);
    m_worker.setExpiryTimeout(-1);
    m_worker.setObjectName(QStringLiteral("kforge-session"));
}

SessionOwner::~SessionOwner() { m_worker.waitForDone(); }

void SessionOwner::setSession(const QString& source, std::shared_ptr<kforge::ModelSession> session)
{
    stopWork();
    m_session = std::move(session);
    m_source = source;
    m_runtimeHeld = false; // the controllers dropped the old session's runtime
    Q_EMIT sessionChanged();
}

void SessionOwner::stopWork() { Q_EMIT aboutToChangeSession(); }

bool SessionOwner::isMeasuring() const
{
    return m_activity == Activity::Profile || m_activity == Activity::Benchmark || m_activity == Activity::Verify ||
           m_activity == Activity::Optimize;
}

QString SessionOwner::refusal(Activity activity) const
{
    if (!m_session)
        return tr("No model is loaded.");
    switch (m_activity) {
    case Activity::Idle:
        break;
    case Activity::Forward:
        return tr("A forward is already running: finish or abort it first.");
    case Activity::Capture:
        return tr("A graph capture is already running: wait for it.");
    case Activity::Profile:
        return tr("A profile is already running: wait for it or cancel it.");
    case Activity::Benchmark:
        return tr("A benchmark (a profile without the profiler) is already running: wait for it or cancel it.");
    case Activity::Verify:
        return tr("A plan is being verified: wait for it or cancel it.");
    case Activity::Optimize:
        return tr("An optimisation is already running: wait for it or cancel it.");
    }
    const bool replacesRuntime = activity == Activity::Forward || activity == Activity::Capture;
    if (m_runtimeHeld && !replacesRuntime)
        return tr("The last forward left its plan runtime active (leftovers): unwind it first.");
    return {};
}

bool SessionOwner::claim(Activity activity, QString* error)
{
    const QString why = refusal(activity);
    if (!why.isEmpty()) {
        if (error)
            *error = why;
        return false;
    }
    m_activity = activity;
    Q_EMIT activityChanged(activity);
    return true;
}

void SessionOwner::release(Activity activity)
{
    if (m_activity != activity)
        return;
    m_activity = Activity::Idle;
    Q_EMIT activityChanged(Activity::Idle);
}

void SessionOwner::setRuntimeHeld(bool held) { m_runtimeHeld = held; }

} // namespace kforge::ui
