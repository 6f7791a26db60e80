// SPDX-License-Identifier: Apache-2.0
#include "controllers/profile_controller.h"

#include "application/system_info.h"
#include "controllers/profile_results_source.h"
#include "controllers/progress_throttle.h"
#include "controllers/queue_call.h"
#include "controllers/session_owner.h"
#include "item_models/duration_format.h"
#include "item_models/format.h"

#include <kforge/model_session.h>
#include <kforge/study.h>

#include <algorithm>

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
      m_source(new ProfileResultsSource(this)), m_job(owner, this, [this](const Result& result) { finish(result); })
{
    if (cudaAvailable())
        m_settings->device = QStringLiteral("cuda");
}

ProfileController::~ProfileController() { stop(); }

void ProfileController::forgetResults()
{
    m_declines.clear();
    m_before.reset();
    m_source->setResults(nullptr);
    Q_EMIT resultsChanged();
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
    m_before = m_source->results();
    m_source->setMeasuring(true);
    m_kind = kind;
    Q_EMIT runningChanged(true);

    kforge::StudyOptions options;
    options.kind = studyKind(kind);
    options.device = m_settings->device.toStdString();
    options.warmupIterations = m_settings->warmup;
    options.iterations = m_settings->iterations;
    options.recordShapes = m_settings->recordShapes;
    options.recordMemory = m_settings->recordMemory;
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
            queueCall(static_cast<MeasureController*>(this), &MeasureController::progress, stage->first + done, all,
                      stage->second);
        return !cancel->load();
    };
    // Every view's data is made here, on the worker, for the runs finish() will show: each run's flame graph and
    // module times, its kernel tables, the comparison and the frame verdicts (ProfileResults).
    const TableKey shownTable = m_source->shownTable();
    if (kind == Kind::Baseline || kind == Kind::Plan)
        options.partial = [this, kind, before = m_before,
                           tables = tablesToCompute(false, shownTable)](const kforge::ProfileRun& run) {
            const auto soFar = std::make_shared<const kforge::ProfileRun>(run);
            queueCall(this, &ProfileController::showPartial,
                      kind == Kind::Plan ? makeProfileResults(before->baseline.run, soFar, tables, before.get())
                                         : makeProfileResults(soFar, before->plan.run, tables, before.get()));
        };
    auto work = [session = owner()->session(), options = std::move(options), kind, before = m_before,
                 tables = tablesToCompute(m_settings->recordShapes, shownTable)]() {
        Result result;
        result.error = errorOf([&] {
            const kforge::StudyResult study = kforge::runStudy(*session, options);
            result.baseline = study.baseline;
            result.plan = study.plan;
            const auto [shownBaseline, shownPlan] =
                heldAfter(kind, study.baseline, study.plan, before->baseline.run, before->plan.run);
            const bool studysPair = study.comparison && shownBaseline == study.baseline && shownPlan == study.plan;
            result.results = makeProfileResults(
                shownBaseline, shownPlan, tables, before.get(),
                studysPair ? std::make_shared<const kforge::Comparison>(*study.comparison) : nullptr);
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
    m_source->setMeasuring(false);
    m_source->setResults(result.results ? result.results : m_before);
    m_before.reset();
    if (result.plan)
        m_declines = result.plan->declines;
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
    case Kind::Compare: {
        const kforge::Comparison& comparison = *m_source->results()->comparison;
        message = tr("Compared, profiled: %1 → %2 per iteration (medians): %3")
                      .arg(formatDuration(comparison.baselineTotalUs), formatDuration(comparison.planTotalUs),
                           formatSpeedComparison(comparison.speed));
        if (const QString stalls = stallsOf(comparison); !stalls.isEmpty())
            message += QStringLiteral(" — ") + stalls;
        break;
    }
    }
    // Declined calls ran the original, and the plan's times include them: say so.
    if (const QString declined = formatDeclines(m_declines); !declined.isEmpty())
        message += QStringLiteral(" — ") + declined;
    Q_EMIT finished(Outcome::Finished, message);
}

void ProfileController::showPartial(ResultsPtr results)
{
    if (!m_job.isRunning()) // queued before the run ended, delivered after finish()
        return;
    m_source->setResults(std::move(results));
    Q_EMIT resultsChanged();
}

} // namespace kforge::ui
