// SPDX-License-Identifier: Apache-2.0
#pragma once
// Re-validates a plan measured elsewhere on the owner's session (kforge::revalidatePlan, as the CLI does when a plan
// file lands): the entries whose provenance differs from this machine are checked again on the worker thread, and
// the plan comes back with those that failed disabled. It claims the session like a verification.
#include <kforge/plan.h>
#include <kforge/plan_landing.h>
#include <kforge/revalidate.h>

#include "controllers/session_job.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>

namespace kforge::ui {

class RevalidateController : public QObject {
    Q_OBJECT
public:
    explicit RevalidateController(SessionOwner* owner, QObject* parent = nullptr);
    ~RevalidateController() override; // cancels and waits

    // The entries of `plan` that differ from this machine on `device` ("cpu", "cuda"). The machine is read once per
    // device: the plan editor asks after every edit.
    std::vector<kforge::ProvenanceChange> changes(const kforge::Plan& plan, const QString& device);

    // Starts on a copy of `plan`; the user's click accepts a changed plugin. False with a one-line `error` when the
    // session is taken or there is none.
    bool start(const kforge::Plan& plan, QString* error = nullptr);
    void cancel(); // the entries not yet checked are disabled
    void stop();   // cancels and waits
    bool isRunning() const { return m_job.isRunning(); }

Q_SIGNALS:
    void runningChanged(bool running);
    void progress(const QString& line);
    // `revised` is the plan with the failing entries disabled (empty on failure); `message` one line.
    void finished(bool ok, const QString& message, const kforge::Plan& revised,
                  const kforge::RevalidationReport& report);

private:
    struct Result {
        kforge::Plan plan;
        kforge::RevalidationReport report;
        QString error;
    };
    void finish(const Result& r);

    SessionOwner* m_owner;
    SessionJob<Result> m_job;
    std::optional<kforge::MachineFingerprint> m_here; // of m_hereDevice
    QString m_hereDevice;
};

// "Re-validated 3 entries here: 1 kept, 2 disabled (entry 1: incorrect here: ...)".
QString formatRevalidation(const kforge::RevalidationReport& report);

} // namespace kforge::ui
