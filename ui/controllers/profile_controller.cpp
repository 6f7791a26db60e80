// SPDX-License-Identifier: Apache-2.0
#include "controllers/profile_controller.h"

#include "item_models/duration_format.h"
#include "item_models/format.h"
#include "controllers/session_owner.h"
#include "item_models/run_views.h"
#include "application/system_info.h"

#include <kforge/model_session.h>
#include <kforge/study.h>

#include <algorithm>
#include <tuple>
#include <exception>

namespace kforge::ui {
namespace {

// A run cancelled during its warm-up measured nothing: there is nothing to show or keep.
bool measuredSomething(const std::shared_ptr<const kforge::ProfileRun>& run)
{
    return run && !kforge::measuredNothing(*run);
}

kforge::StudyKind studyKind(ProfileController::Kind kind)
{
    return kind == ProfileController::Kind::Plan      ? kforge::StudyKind::Plan
           : kind == ProfileController::Kind::Compare ? kforge::StudyKind::Compare
                                                      : kforge::StudyKind::Baseline;
}

QString summary(const QString& what, const kforge::ProfileRun& run)
{
    const double perIteration = double(run.wallNs) / 1000.0 / std::max(1, run.iterations);
    return ProfileController::tr("%1: %n iteration(s) on %2, %3 per iteration", nullptr, run.iterations)
        .arg(what, QString::fromStdString(run.deviceName), formatDuration(perIteration));
}

// The baseline and plan runs the controller holds after an action of `kind`: the runs it measured, else those held
// before; a compare that measured no plan run holds none (another plan's run must not pass for its comparison).
std::pair<ProfileController::RunPtr, ProfileController::RunPtr>
heldAfter(ProfileController::Kind kind, const ProfileController::RunPtr& baseline,
          const ProfileController::RunPtr& plan, const ProfileController::RunPtr& baselineBefore,
          const ProfileController::RunPtr& planBefore)
{
    return {measuredSomething(baseline) ? baseline : baselineBefore, measuredSomething(plan) ? plan
                                                                     : kind == ProfileController::Kind::Compare
                                                                         ? nullptr
                                                                         : planBefore};
}

SessionOwner::Activity activityOf(ProfileController::Kind kind)
{
    return kind == ProfileController::Kind::Benchmark ? SessionOwner::Activity::Benchmark
           : kind == ProfileController::Kind::Verify  ? SessionOwner::Activity::Verify
                                                      : SessionOwner::Activity::Profile;
}

} // namespace

ProfileController::ProfileController(SessionOwner* owner, QObject* parent)
    : QObject(parent), m_owner(owner), m_job(owner, this, [this](const Result& result) { finish(result); })
{
    connect(m_owner, &SessionOwner::aboutToChangeSession, this, &ProfileController::stop);
    connect(m_owner, &SessionOwner::sessionChanged, this, &ProfileController::sessionChanged);
    if (cudaAvailable())
        m_device = QStringLiteral("cuda");
}

ProfileController::~ProfileController() { stop(); }

void ProfileController::sessionChanged()
{
    m_declines.clear();
    m_benchmark.reset();
    m_verify.reset();
    m_baselineBefore.reset();
    m_planBefore.reset();
    setRuns(nullptr, nullptr);
}

bool ProfileController::cudaAvailable(QString* why)
{
    const kforge::SystemReport& report = cachedSystemReport();
    if (report.cudaDevices.empty()) {
        if (why)
            *why = tr("no CUDA device is visible on this machine");
        return false;
    }
    if (why)
        *why = QString::fromStdString(report.traceStatus);
    return report.canTrace;
}

void ProfileController::setDevice(const QString& device)
{
    m_device = device == QLatin1String("cuda") && cudaAvailable() ? device : QStringLiteral("cpu");
}

bool ProfileController::runBaseline(QString* error) { return start(Kind::Baseline, {}, error); }

bool ProfileController::runWithPlan(const kforge::Plan& plan, QString* error) { return start(Kind::Plan, plan, error); }

bool ProfileController::compare(const kforge::Plan& plan, QString* error) { return start(Kind::Compare, plan, error); }

bool ProfileController::benchmark(const kforge::Plan& plan, QString* error)
{
    return start(Kind::Benchmark, plan, error);
}

bool ProfileController::verify(const kforge::Plan& plan, QString* error) { return start(Kind::Verify, plan, error); }

bool ProfileController::start(Kind kind, const kforge::Plan& plan, QString* error)
{
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    if (m_owner->session() && kind != Kind::Baseline && !plan.hasEnabledEntry())
        return fail(tr("The plan has no enabled entry to profile."));
    if (!m_job.claim(activityOf(kind), error))
        return false;

    m_declines.clear();
    m_baselineBefore = m_baseline;
    m_planBefore = m_plan;
    m_kind = kind;
    m_startedPlan = plan;
    Q_EMIT runningChanged(true);

    kforge::StudyOptions options;
    options.kind = studyKind(kind);
    options.device = m_device.toStdString();
    options.warmupIterations = m_warmup;
    options.iterations = m_iterations;
    options.recordShapes = m_recordShapes;
    options.plan = plan; // whole: the runtime skips disabled entries, so declines name the plan's rows
    const int perRun = m_warmup + m_iterations;
    const int total = kind == Kind::Compare ? 2 * perRun : perRun;
    const QString firstStage = kind == Kind::Plan        ? QStringLiteral("plan")
                               : kind == Kind::Compare   ? QStringLiteral("baseline and plan") // in rounds
                               : kind == Kind::Benchmark ? QStringLiteral("benchmark")
                               : kind == Kind::Verify    ? QStringLiteral("verify")
                                                         : QStringLiteral("baseline");
    Q_EMIT progress(0, total, firstStage);

    // Called on the worker thread: progress travels to the UI thread queued, the answer is the cancel flag. A
    // compare's plan run counts on from its baseline.
    auto stage = std::make_shared<std::pair<int, QString>>(0, firstStage); // (offset, name), the worker's only
    options.onStage = [stage, perRun, kind](kforge::StudyStage s) {
        const bool plan = s == kforge::StudyStage::Plan;
        *stage = s == kforge::StudyStage::Rounds
                     ? std::pair{0, QStringLiteral("baseline and plan")}
                     : std::pair{plan && kind == Kind::Compare ? perRun : 0,
                                 plan ? QStringLiteral("plan") : QStringLiteral("baseline")};
    };
    options.progress = [this, cancel = m_job.cancelFlag(), total, stage, kind](int done, int of) {
        // Verify and an interleaved compare say how many forwards they make.
        const bool ownTotal = kind == Kind::Verify || stage->second == QLatin1String("baseline and plan");
        const int all = ownTotal ? of : total;
        QMetaObject::invokeMethod(
            this, [this, done = stage->first + done, all, name = stage->second] { Q_EMIT progress(done, all, name); },
            Qt::QueuedConnection);
        return !cancel->load();
    };
    if (kind == Kind::Baseline || kind == Kind::Plan)
        options.partial = [this](const kforge::ProfileRun& run) {
            QMetaObject::invokeMethod(
                this, [this, run = std::make_shared<const kforge::ProfileRun>(run)] { showPartial(run); },
                Qt::QueuedConnection);
        };
    auto work = [session = m_owner->session(), options = std::move(options), kind, previousBaseline = m_baseline,
                 previousPlan = m_plan, groupBy = m_groupBy]() {
        Result result;
        try {
            if (kind == Kind::Verify) {
                if (session->device() != options.device)
                    session->setDevice(options.device);
                kforge::VerifyOptions verify;
                verify.thresholds = options.plan.verifyThresholds.value_or(kforge::VerifyThresholds{});
                verify.progress = options.progress;
                verify.compareModules = true; // the module tree's Error column, also when the outputs agree
                result.verify =
                    std::make_shared<kforge::VerifyReport>(kforge::verifyPlan(*session, options.plan, verify));
                return result;
            }
            if (kind == Kind::Benchmark) {
                if (session->device() != options.device)
                    session->setDevice(options.device);
                const kforge::BenchmarkOptions rounds{options.warmupIterations, options.iterations, 0};
                result.benchmark = std::make_shared<kforge::BenchmarkResult>(
                    kforge::benchmarkPlan(*session, options.plan, rounds, options.progress));
                return result;
            }
            const kforge::StudyResult study = kforge::runStudy(*session, options);
            result.baseline = study.baseline;
            result.plan = study.plan;
            // What the views will show, computed here once rather than on the UI thread: each run's flame graph
            // and module times, and the comparison (and frame verdicts) of the pair finish() will hold.
            const auto [shownBaseline, shownPlan] =
                heldAfter(kind, result.baseline, result.plan, previousBaseline, previousPlan);
            for (const auto& run : {result.baseline, result.plan}) {
                viewsOf(run);
                statisticsOf(run, groupBy); // the kernel table's grouping when the run started
            }
            if (shownBaseline && shownPlan) {
                result.comparison = std::make_shared<const kforge::Comparison>(
                    study.comparison && shownBaseline == study.baseline && shownPlan == study.plan
                        ? *study.comparison
                        : kforge::compare(*shownBaseline, *shownPlan));
                result.compared = {shownBaseline.get(), shownPlan.get()};
                flameSpeedsOf(shownBaseline, shownPlan);
            }
        } catch (const std::exception& e) {
            result.error = oneLine(e.what());
        } catch (...) {
            result.error = tr("unknown error");
        }
        return result;
    };
    m_job.run(std::move(work));
    return true;
}

void ProfileController::cancel() { m_job.cancel(); }

void ProfileController::stop() { m_job.stop(); }

void ProfileController::finish(const Result& result)
{
    const bool cancelled = (result.baseline && result.baseline->cancelled) || (result.plan && result.plan->cancelled) ||
                           (result.benchmark && result.benchmark->stopped);
    if (result.benchmark && !result.benchmark->baselineMs.empty()) {
        m_benchmark = *result.benchmark;
        m_benchmarkPlan = m_startedPlan;
        m_newer = NewerResult::Benchmark;
    }
    if (result.verify)
        m_verify = *result.verify;
    // The runs so far (partial) give way to the finished runs, or to what was shown before when none came.
    std::tie(m_baseline, m_plan) = heldAfter(m_kind, result.baseline, result.plan, m_baselineBefore, m_planBefore);
    if (measuredSomething(result.baseline) || measuredSomething(result.plan))
        m_newer = NewerResult::Comparison;
    if (result.comparison && result.compared == std::pair{m_baseline.get(), m_plan.get()})
        m_comparison = *result.comparison; // the worker's, of the runs now held
    else
        updateComparison();
    if (const auto* declines = result.plan        ? &result.plan->declines
                               : result.benchmark ? &result.benchmark->declines
                                                  : nullptr)
        m_declines = *declines;
    Q_EMIT resultsChanged();
    Q_EMIT runningChanged(false);

    if (m_kind == Kind::Verify && m_job.cancelled()) {
        Q_EMIT finished(Outcome::Cancelled, tr("Verify cancelled: no verdict"));
        return;
    }
    if (!result.error.isEmpty()) {
        Q_EMIT finished(Outcome::Failed, m_kind == Kind::Verify ? tr("Verify failed: %1").arg(result.error)
                                                                : tr("Profile failed: %1").arg(result.error));
        return;
    }
    if (m_kind == Kind::Verify) {
        Q_EMIT finished(Outcome::Finished, formatVerify(*result.verify));
        return;
    }
    if (m_kind == Kind::Benchmark) {
        Q_EMIT finished(cancelled ? Outcome::Cancelled : Outcome::Finished, formatBenchmark(*result.benchmark));
        return;
    }
    if (cancelled) {
        const auto& run = result.plan ? result.plan : result.baseline;
        Q_EMIT finished(Outcome::Cancelled,
                        measuredSomething(run)
                            ? tr("Profile cancelled after %n measured iteration(s)", nullptr, run->iterations)
                            : tr("Profile cancelled during the warm-up: nothing was measured"));
        return;
    }
    QString message;
    switch (m_kind) {
    case Kind::Baseline:
        message = summary(tr("Baseline"), *m_baseline);
        break;
    case Kind::Plan:
        message = summary(tr("With plan"), *m_plan);
        break;
    case Kind::Compare:
        message = tr("Compared, profiled: %1 → %2 per iteration (medians): %3")
                      .arg(formatDuration(m_comparison->baselineTotalUs), formatDuration(m_comparison->planTotalUs),
                           formatSpeedComparison(m_comparison->speed));
        break;
    }
    // Declined calls ran the original, and the plan's times include them: say so.
    if (const QString declined = formatDeclines(m_declines); !declined.isEmpty())
        message += QStringLiteral(" — ") + declined;
    Q_EMIT finished(Outcome::Finished, message);
}

void ProfileController::setRuns(RunPtr baseline, RunPtr plan)
{
    m_baseline = std::move(baseline);
    m_plan = std::move(plan);
    m_newer = NewerResult::Comparison;
    updateComparison();
    Q_EMIT resultsChanged();
}

void ProfileController::showPartial(RunPtr run)
{
    if (!m_job.isRunning()) // queued before the run ended, delivered after finish()
        return;
    (m_kind == Kind::Plan ? m_plan : m_baseline) = std::move(run);
    updateComparison();
    Q_EMIT resultsChanged();
}

void ProfileController::updateComparison()
{
    if (m_baseline && m_plan)
        m_comparison = kforge::compare(*m_baseline, *m_plan);
    else
        m_comparison.reset();
}

} // namespace kforge::ui
