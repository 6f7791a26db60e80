// SPDX-License-Identifier: Apache-2.0
#include "controllers/revalidate_controller.h"

#include "controllers/queue_call.h"
#include "controllers/session_owner.h"
#include "item_models/format.h"

#include <kforge/model_session.h>

namespace kforge::ui {

RevalidateController::RevalidateController(SessionOwner* owner, QObject* parent)
    : QObject(parent), m_owner(owner), m_job(owner, this, [this](const Result& r) { finish(r); })
{
    connect(m_owner, &SessionOwner::aboutToChangeSession, this, &RevalidateController::stop);
}

RevalidateController::~RevalidateController() { stop(); }

std::vector<kforge::ProvenanceChange> RevalidateController::changes(const kforge::Plan& plan, const QString& device)
{
    if (!m_here || m_hereDevice != device) {
        m_here = kforge::machineFingerprint(device.toStdString());
        m_hereDevice = device;
    }
    return kforge::provenanceChanges(plan, *m_here);
}

bool RevalidateController::start(const kforge::Plan& plan, QString* error)
{
    if (!m_job.claim(SessionOwner::Activity::Verify, error))
        return false;
    Q_EMIT runningChanged(true);
    kforge::PlanLandingOptions landing; // where a plan lands, as in every CLI command that reads one
    landing.revalidate = true;
    kforge::RevalidateOptions& options = landing.revalidation;
    options.acceptChangedPlugins = true; // the user clicked Re-validate with the changed plugin named
    options.progress = [cancel = m_job.cancelFlag()](int, int) { return !cancel->load(); };
    options.log = queuedLines(this, &RevalidateController::progress);
    auto work = [session = m_owner->session(), plan, landing]() mutable {
        Result r;
        r.plan = plan;
        try {
            landing.device = session->device(); // measured where the session is
            r.report = *kforge::landPlan(*session, r.plan, landing).revalidation;
        } catch (const std::exception& e) {
            r.error = oneLine(e.what());
        }
        return r;
    };
    m_job.run(std::move(work));
    return true;
}

void RevalidateController::cancel() { m_job.cancel(); }

void RevalidateController::stop() { m_job.stop(); }

void RevalidateController::finish(const Result& r)
{
    Q_EMIT runningChanged(false);
    if (!r.error.isEmpty())
        Q_EMIT finished(false, tr("Re-validation failed: %1").arg(r.error), {}, r.report);
    else
        Q_EMIT finished(true, formatRevalidation(r.report), r.plan, r.report);
}

QString formatRevalidation(const kforge::RevalidationReport& report)
{
    if (!report.note.empty())
        return QString::fromStdString(report.note);
    int kept = 0;
    QString firstDisabled;
    for (const kforge::EntryRevalidation& e : report.entries) {
        kept += e.kept ? 1 : 0;
        if (!e.kept && firstDisabled.isEmpty())
            firstDisabled = QObject::tr("entry %1: %2").arg(e.entry).arg(QString::fromStdString(e.verdict));
    }
    const int all = int(report.entries.size());
    QString text = QObject::tr("Re-validated %n entries here: ", nullptr, all) +
                   QObject::tr("%1 kept, %2 disabled").arg(kept).arg(all - kept);
    if (!firstDisabled.isEmpty())
        text += QStringLiteral(" (") + firstDisabled + QStringLiteral(")");
    if (report.cancelled)
        text += QObject::tr("; cancelled, the rest disabled");
    return text;
}

} // namespace kforge::ui
