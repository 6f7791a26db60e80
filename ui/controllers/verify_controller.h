// SPDX-License-Identifier: Apache-2.0
#pragma once
// Verifies the plan on the model's outputs (kforge::verifyPlan(), as `kforge verify`): the plan's outputs against
// the baseline's within the plan's thresholds, and the first diverging module when they differ, with every module
// compared (the module tree's Error column). Keeps the last finished verification of the model; a new session
// clears it.
#include "controllers/measure_controller.h"
#include "controllers/session_job.h"

#include <kforge/plan.h>
#include <kforge/verify.h>

#include <memory>
#include <optional>

namespace kforge::ui {

class VerifyController : public MeasureController {
    Q_OBJECT
public:
    VerifyController(SessionOwner* owner, std::shared_ptr<const MeasureSettings> settings, QObject* parent = nullptr);
    ~VerifyController() override; // cancels and waits

    // False with a one-line `error` when nothing started: no model, the session is taken, the plan has no enabled
    // entry. finished() follows a start.
    bool verify(const kforge::Plan& plan, QString* error = nullptr);
    bool isRunning() const override { return m_job.isRunning(); }
    void cancel() override { m_job.cancel(); }
    void stop() override { m_job.stop(); }

    // The last finished verification; none before the first.
    const std::optional<kforge::VerifyReport>& report() const { return m_report; }

private:
    void forgetResults() override;
    struct Result {
        std::shared_ptr<kforge::VerifyReport> report;
        QString error;
    };
    void finish(const Result& result);

    SessionJob<Result> m_job;
    std::optional<kforge::VerifyReport> m_report;
};

} // namespace kforge::ui
