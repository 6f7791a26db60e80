// SPDX-License-Identifier: Apache-2.0
#include "controllers/benchmark_controller.h"

#include "controllers/session_owner.h"
#include "item_models/format.h"

#include <kforge/model_session.h>

namespace kforge::ui {

BenchmarkController::BenchmarkController(SessionOwner* owner, std::shared_ptr<const MeasureSettings> settings,
                                         QObject* parent)
    : MeasureController(owner, std::move(settings), parent),
      m_job(owner, this, [this](const Result& result) { finish(result); })
{
}

void BenchmarkController::forgetResults()
{
    m_result.reset();
    m_declines.clear();
    Q_EMIT resultsChanged();
}

BenchmarkController::~BenchmarkController() { stop(); }

bool BenchmarkController::benchmark(const kforge::Plan& plan, QString* error)
{
    if (!planCanRun(plan, tr("benchmark"), error) || !m_job.claim(SessionOwner::Activity::Benchmark, error))
        return false;
    m_startedPlan = plan;
    Q_EMIT runningChanged(true);
    const QString stage = QStringLiteral("benchmark");
    Q_EMIT progress(0, settings().warmup + settings().iterations, stage);
    auto work = [session = owner()->session(), plan, device = device().toStdString(),
                 rounds = kforge::BenchmarkOptions{settings().warmup, settings().iterations, 0},
                 progress = progressReporter(m_job.cancelFlag(), stage)]() {
        Result result;
        result.error = errorOf([&] {
            if (session->device() != device)
                session->setDevice(device);
            result.benchmark =
                std::make_shared<kforge::BenchmarkResult>(kforge::benchmarkPlan(*session, plan, rounds, progress));
        });
        return result;
    };
    m_job.run(std::move(work));
    return true;
}

void BenchmarkController::finish(const Result& result)
{
    if (result.benchmark && !result.benchmark->baselineMs.empty()) {
        m_result = *result.benchmark;
        m_measuredPlan = m_startedPlan;
        m_declines = result.benchmark->declines;
        Q_EMIT resultsChanged();
    }
    Q_EMIT runningChanged(false);
    if (!result.error.isEmpty())
        Q_EMIT finished(Outcome::Failed, tr("Profile failed: %1").arg(result.error));
    else
        Q_EMIT finished(result.benchmark->stopped ? Outcome::Cancelled : Outcome::Finished,
                        formatBenchmark(*result.benchmark));
}

} // namespace kforge::ui
