// SPDX-License-Identifier: Apache-2.0
#include "controllers/verify_controller.h"

#include "controllers/session_owner.h"
#include "item_models/format.h"

#include <kforge/model_session.h>

namespace kforge::ui {

VerifyController::VerifyController(SessionOwner* owner, std::shared_ptr<const MeasureSettings> settings,
                                   QObject* parent)
    : MeasureController(owner, std::move(settings), parent),
      m_job(owner, this, [this](const Result& result) { finish(result); })
{
}

void VerifyController::forgetResults()
{
    m_report.reset();
    Q_EMIT resultsChanged();
}

VerifyController::~VerifyController() { stop(); }

bool VerifyController::verify(const kforge::Plan& plan, QString* error)
{
    if (!planCanRun(plan, tr("verify"), error) || !m_job.claim(SessionOwner::Activity::Verify, error))
        return false;
    Q_EMIT runningChanged(true);
    const QString stage = QStringLiteral("verify");
    Q_EMIT progress(0, settings().warmup + settings().iterations, stage); // verifyPlan reports its own total
    kforge::VerifyOptions options;
    options.thresholds = plan.verifyThresholds.value_or(kforge::VerifyThresholds{});
    options.progress = progressReporter(m_job.cancelFlag(), stage);
    options.compareModules = true; // the module tree's Error column, also when the outputs agree
    auto work = [session = owner()->session(), plan, device = device().toStdString(), options]() {
        Result result;
        result.error = errorOf([&] {
            if (session->device() != device)
                session->setDevice(device);
            result.report = std::make_shared<kforge::VerifyReport>(kforge::verifyPlan(*session, plan, options));
        });
        return result;
    };
    m_job.run(std::move(work));
    return true;
}

void VerifyController::finish(const Result& result)
{
    if (result.report)
        m_report = *result.report;
    Q_EMIT resultsChanged();
    Q_EMIT runningChanged(false);
    if (m_job.cancelled())
        Q_EMIT finished(Outcome::Cancelled, tr("Verify cancelled: no verdict"));
    else if (!result.error.isEmpty())
        Q_EMIT finished(Outcome::Failed, tr("Verify failed: %1").arg(result.error));
    else
        Q_EMIT finished(Outcome::Finished, formatVerify(*result.report));
}

} // namespace kforge::ui
