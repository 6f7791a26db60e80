// SPDX-License-Identifier: Apache-2.0
#include "controllers/profile_controller.h"

#include "controllers/progress_throttle.h"

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

// "Baseline: 10 iterations on CPU, 1.92 ms per iteration (median)", and the stalls it waited, where it did: the
// forward's cost as the CLI's header gives it, not the mean of the wall time. Made on the worker (stalls.h reads every
// record).
QString summary(const QString& what, const kforge::ProfileRun& run)
{
    const kforge::StallFreeRun stallFree = kforge::removeStalls(run);
    const double perIteration = stallFree.medianIterationUs() > 0
                                    ? stallFree.medianIterationUs()
                                    : double(run.wallNs) / 1000.0 / std::max(1, run.iterations);
    QString text =
        ProfileController::tr("%1: %n iteration(s) on %2, %3 per iteration (median)", nullptr, run.iterations)
            .arg(what, QString::fromStdString(run.deviceName), formatDuration(perIteration));
    if (stallFree.stalls.any())
        text += QStringLiteral(" — ") + QString::fromStdString(kforge::describe(stallFree.stalls));
    return text;
}

// The stalls each side of a comparison waited, as `kforge compare` prints them; empty when none.
QString stallsOf(const kforge::Comparison& c)
{
    QStringList lines;
    if (c.baselineStalls.any())
        lines << ProfileController::tr("baseline %1").arg(QString::fromStdString(kforge::describe(c.baselineStalls)));
    if (c.planStalls.any())
        lines << ProfileController::tr("plan %1").arg(QString::fromStdString(kforge::describe(c.planStalls)));
    return lines.join(QStringLiteral("; "));
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

} // namespace

ProfileController::ProfileController(SessionOwner* owner, QObject* parent)
    : ProfileController(owner, std::make_shared<MeasureSettings>(), parent)
{
}

ProfileController::ProfileController(SessionOwner* owner, std::shared_ptr<MeasureSettings> settings, QObject* parent)
    : MeasureController(owner, settings, parent), m_settings(std::move(settings)),
      m_job(owner, this, [this](const Result& result) { finish(result); })
{
    if (cudaAvailable())
        m_settings->device = QStringLiteral("cuda");
}

ProfileController::~ProfileController() { stop(); }

void ProfileController::forgetResults()
{
    m_declines.clear();
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
    m_settings->device = device == QLatin1String("cuda") && cudaAvailable() ? device : QStringLiteral("cpu");
}

bool ProfileController::runBaseline(QString* error) { return start(Kind::Baseline, {}, error); }

bool ProfileController::runWithPlan(const kforge::Plan& plan, QString* error) { return start(Kind::Plan, plan, error); }

bool ProfileController::compare(const kforge::Plan& plan, QString* error) { return start(Kind::Compare, plan, error); }

bool ProfileController::start(Kind kind, const kforge::Plan& plan, QString* error)
{
    if ((kind != Kind::Baseline && !planCanRun(plan, tr("profile"), error)) ||
        !m_job.claim(SessionOwner::Activity::Profile, error))
        return false;

    m_declines.clear();
    m_baselineBefore = m_baseline;
    m_planBefore = m_plan;
    m_kind = kind;
    Q_EMIT runningChanged(true);

    kforge::StudyOptions options;
    options.kind = studyKind(kind);
    options.device = m_settings->device.toStdString();
    options.warmupIterations = m_settings->warmup;
    options.iterations = m_settings->iterations;
    options.recordShapes = m_settings->recordShapes;
    options.plan = plan; // whole: the runtime skips disabled entries, so declines name the plan's rows
    const int perRun = m_settings->warmup + m_settings->iterations;
    const int total = kind == Kind::Compare ? 2 * perRun : perRun;
    const QString firstStage = kind == Kind::Plan      ? QStringLiteral("plan")
                               : kind == Kind::Compare ? QStringLiteral("baseline and plan") // in rounds
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
    options.progress = [this, cancel = m_job.cancelFlag(), total, stage,
                        throttle = std::make_shared<ProgressThrottle>()](int done, int of) {
        // An interleaved compare says how many forwards it makes.
        const int all = stage->second == QLatin1String("baseline and plan") ? of : total;
        if (throttle->due(stage->first + done, all))
            QMetaObject::invokeMethod(
                this,
                [this, done = stage->first + done, all, name = stage->second] { Q_EMIT progress(done, all, name); },
                Qt::QueuedConnection);
        return !cancel->load();
    };
    if (kind == Kind::Baseline || kind == Kind::Plan)
        options.partial = [this](const kforge::ProfileRun& run) {
            QMetaObject::invokeMethod(
                this, [this, run = std::make_shared<const kforge::ProfileRun>(run)] { showPartial(run); },
                Qt::QueuedConnection);
        };
    auto work = [session = owner()->session(), options = std::move(options), kind, previousBaseline = m_baseline,
                 previousPlan = m_plan, groupBy = m_groupBy, scope = m_tableScope,
                 recordShapes = m_settings->recordShapes]() {
        Result result;
        result.error = errorOf([&] {
            const kforge::StudyResult study = kforge::runStudy(*session, options);
            result.baseline = study.baseline;
            result.plan = study.plan;
            // What the views will show, computed here once rather than on the UI thread: each run's flame graph
            // and module times, and the comparison (and frame verdicts) of the pair finish() will hold.
            const auto [shownBaseline, shownPlan] =
                heldAfter(kind, result.baseline, result.plan, previousBaseline, previousPlan);
            for (const auto& run : {result.baseline, result.plan}) {
                viewsOf(run);
                // The kernel table's rows in every grouping it offers (by input shape where shapes were recorded),
                // and in the module scope selected when the run started.
                for (const kforge::GroupBy each : {kforge::GroupBy::Kernel, kforge::GroupBy::KernelGeometry,
                                                   kforge::GroupBy::Function, kforge::GroupBy::Module})
                    statisticsOf(run, each);
                if (recordShapes)
                    statisticsOf(run, kforge::GroupBy::OpInputShapes);
                if (!scope.empty())
                    statisticsOf(run, groupBy, scope);
            }
            if (shownBaseline && shownPlan) {
                result.comparison = std::make_shared<const kforge::Comparison>(
                    study.comparison && shownBaseline == study.baseline && shownPlan == study.plan
                        ? *study.comparison
                        : kforge::compare(*shownBaseline, *shownPlan));
                result.compared = {shownBaseline.get(), shownPlan.get()};
                flameSpeedsOf(shownBaseline, shownPlan);
            }
            if (kind == Kind::Baseline && measuredSomething(study.baseline))
                result.runSummary = summary(tr("Baseline"), *study.baseline);
            else if (kind == Kind::Plan && measuredSomething(study.plan))
                result.runSummary = summary(tr("With plan"), *study.plan);
        });
        return result;
    };
    m_job.run(std::move(work));
    return true;
}

void ProfileController::cancel() { m_job.cancel(); }

void ProfileController::stop() { m_job.stop(); }

void ProfileController::finish(const Result& result)
{
    const bool cancelled = (result.baseline && result.baseline->cancelled) || (result.plan && result.plan->cancelled);
    // The runs so far (partial) give way to the finished runs, or to what was shown before when none came.
    std::tie(m_baseline, m_plan) = heldAfter(m_kind, result.baseline, result.plan, m_baselineBefore, m_planBefore);
    const bool measured = measuredSomething(result.baseline) || measuredSomething(result.plan);
    if (result.comparison && result.compared == std::pair{m_baseline.get(), m_plan.get()})
        m_comparison = *result.comparison; // the worker's, of the runs now held
    else
        updateComparison();
    if (result.plan)
        m_declines = result.plan->declines;
    if (measured)
        Q_EMIT runsReplaced();
    Q_EMIT resultsChanged();
    Q_EMIT runningChanged(false);

    if (!result.error.isEmpty()) {
        Q_EMIT finished(Outcome::Failed, tr("Profile failed: %1").arg(result.error));
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
    case Kind::Plan:
        message = result.runSummary;
        break;
    case Kind::Compare:
        message = tr("Compared, profiled: %1 → %2 per iteration (medians): %3")
                      .arg(formatDuration(m_comparison->baselineTotalUs), formatDuration(m_comparison->planTotalUs),
                           formatSpeedComparison(m_comparison->speed));
        if (const QString stalls = stallsOf(*m_comparison); !stalls.isEmpty())
            message += QStringLiteral(" — ") + stalls;
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
    updateComparison();
    Q_EMIT runsReplaced();
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
