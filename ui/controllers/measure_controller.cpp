// SPDX-License-Identifier: Apache-2.0
#include "controllers/measure_controller.h"

#include "controllers/progress_throttle.h"
#include "controllers/queue_call.h"

#include "controllers/session_owner.h"
#include "item_models/format.h"

#include <kforge/plan.h>

#include <exception>

namespace kforge::ui {

MeasureController::MeasureController(SessionOwner* owner, std::shared_ptr<const MeasureSettings> settings,
                                     QObject* parent)
    : QObject(parent), m_owner(owner), m_settings(std::move(settings))
{
    connect(owner, &SessionOwner::aboutToChangeSession, this, [this] { stop(); });
    connect(owner, &SessionOwner::sessionChanged, this, [this] { forgetResults(); });
}

bool MeasureController::planCanRun(const kforge::Plan& plan, const QString& what, QString* error) const
{
    if (!m_owner->session() || plan.hasEnabledEntry())
        return true;
    if (error)
        *error = tr("The plan has no enabled entry to %1.").arg(what);
    return false;
}

QString MeasureController::errorOf(const std::function<void()>& work)
{
    try {
        work();
        return {};
    } catch (const std::exception& e) {
        return oneLine(e.what());
    } catch (...) {
        return tr("unknown error");
    }
}

std::function<bool(int, int)> MeasureController::progressReporter(std::shared_ptr<const std::atomic<bool>> cancel,
                                                                  const QString& stage)
{
    return [this, cancel = std::move(cancel), stage, throttle = std::make_shared<ProgressThrottle>()](int done,
                                                                                                      int total) {
        if (throttle->due(done, total))
            queueCall(this, &MeasureController::progress, done, total, stage);
        return !cancel->load();
    };
}

} // namespace kforge::ui
