// SPDX-License-Identifier: Apache-2.0
#include "format.h"

#include "duration_format.h"

#include <kforge/module_path.h>

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>

#include <algorithm>

namespace kforge::ui {

QString oneLine(QString text) { return text.replace(QLatin1Char('\n'), QLatin1Char(' ')); }

QString formatCount(std::int64_t count) { return QLocale().toString(qint64(count)); }

QString formatCompactCount(std::int64_t count)
{
    const QLocale locale;
    if (count >= 1'000'000'000)
        return locale.toString(double(count) / 1e9, 'f', 2) + QStringLiteral(" G");
    if (count >= 1'000'000)
        return locale.toString(double(count) / 1e6, 'f', 2) + QStringLiteral(" M");
    if (count >= 10'000)
        return locale.toString(double(count) / 1e3, 'f', 1) + QStringLiteral(" k");
    return locale.toString(qint64(count));
}

QString formatBytes(std::int64_t bytes) { return QLocale().formattedDataSize(bytes); }

QString formatModulePath(const std::string& path)
{
    return path.empty() ? QCoreApplication::translate("kforge::ui", "(root)") : QString::fromStdString(path);
}

QString formatFunctions(const std::map<std::string, int>& functions)
{
    QStringList parts;
    for (const auto& [name, calls] : functions) {
        if (calls > 0)
            parts << QStringLiteral("%1×%2").arg(QString::fromStdString(name)).arg(calls);
    }
    return parts.join(QStringLiteral(", "));
}

QString formatDeclines(const std::vector<kforge::EntryDeclines>& declines)
{
    std::vector<const kforge::EntryDeclines*> some;
    std::uint64_t total = 0;
    for (const kforge::EntryDeclines& d : declines) {
        if (d.calls > 0)
            some.push_back(&d);
        total += d.calls;
    }
    if (some.empty())
        return {};
    const QString calls = total == 1 ? QStringLiteral("1 call declined")
                                     : QStringLiteral("%1 calls declined").arg(formatCount(std::int64_t(total)));
    const QString served =
        total == 1 ? QStringLiteral("the original served it") : QStringLiteral("the original served them");
    if (some.size() == 1)
        return QStringLiteral("%1 by %2: %3; %4")
            .arg(calls, QString::fromStdString(some.front()->provider),
                 QString::fromStdString(some.front()->lastReason), served);
    QStringList parts;
    for (const kforge::EntryDeclines* d : some)
        parts << QStringLiteral("%1: %2").arg(QString::fromStdString(d->provider), formatCount(std::int64_t(d->calls)));
    return QStringLiteral("%1 (%2; see the plan's Declined column); %3")
        .arg(calls, parts.join(QStringLiteral(", ")), served);
}

QString formatEntryDeclines(const kforge::EntryDeclines& d)
{
    const QString function = QString::fromStdString(d.function);
    const QString what = d.calls == 1
                             ? QStringLiteral("1 call of %1").arg(function)
                             : QStringLiteral("%1 calls of %2").arg(formatCount(std::int64_t(d.calls)), function);
    QString text = QStringLiteral("%1 declined %2 in the last run with this plan; the original served %3 and is "
                                  "credited with %3.")
                       .arg(QString::fromStdString(d.provider), what,
                            d.calls == 1 ? QStringLiteral("it") : QStringLiteral("them"));
    if (!d.lastReason.empty())
        text += QStringLiteral("\nLast reason: %1").arg(QString::fromStdString(d.lastReason));
    return text;
}

QString formatSpeedVerdict(const kforge::SpeedComparison& speed)
{
    if (speed.verdict == kforge::SpeedVerdict::TooNoisy)
        return QCoreApplication::translate("kforge::ui", "too noisy to judge");
    if (!speed.enoughRounds())
        return QCoreApplication::translate("kforge::ui", "not judged (too few rounds)");
    switch (speed.verdict) {
    case kforge::SpeedVerdict::Faster:
        return QCoreApplication::translate("kforge::ui", "faster");
    case kforge::SpeedVerdict::Slower:
        return QCoreApplication::translate("kforge::ui", "slower");
    case kforge::SpeedVerdict::NoDetectableChange:
    case kforge::SpeedVerdict::TooNoisy:
        break;
    }
    return QCoreApplication::translate("kforge::ui", "no detectable change");
}

QString formatSpeedComparison(const kforge::SpeedComparison& speed)
{
    if (speed.verdict == kforge::SpeedVerdict::TooNoisy) // the engine's words: what made it so, and what to do
        return QString::fromStdString(kforge::describe(speed));
    if (!speed.enoughRounds())
        return QCoreApplication::translate("kforge::ui", "%1 %2 (%n paired round(s))", nullptr, speed.rounds)
            .arg(formatSpeedup(speed.speedup), formatSpeedVerdict(speed));
    return QCoreApplication::translate("kforge::ui", "%1 — %2 (95% interval %3 to %4; detects changes of %5% or more)")
        .arg(formatSpeedVerdict(speed), formatSpeedup(speed.speedup), formatSpeedup(speed.low),
             formatSpeedup(speed.high), QLocale().toString(100.0 * speed.minDetectableChange, 'f', 1));
}

QString formatRowVerdict(const kforge::ComparisonRow& row)
{
    if (row.baselineUs <= 0 || row.planUs <= 0)
        return row.baselineUs > 0 ? QCoreApplication::translate("kforge::ui", "Not called with the plan")
                                  : QCoreApplication::translate("kforge::ui", "Called only with the plan");
    const kforge::SpeedComparison& s = row.speed;
    if (s.verdict == kforge::SpeedVerdict::TooNoisy)
        return QString::fromStdString(kforge::describe(s));
    if (!s.enoughRounds())
        return QCoreApplication::translate("kforge::ui",
                                           "No verdict: %n paired iteration(s), at least %1 needed for a 95% interval",
                                           nullptr, s.rounds)
            .arg(kforge::minRoundsForVerdict());
    return QCoreApplication::translate(
               "kforge::ui",
               "%1: median speedup %2 (95% interval %3 to %4; this run detects changes of %5% or more, %n paired "
               "iteration(s))",
               nullptr, s.rounds)
        .arg(formatSpeedVerdict(s), formatSpeedup(s.speedup), formatSpeedup(s.low), formatSpeedup(s.high),
             QLocale().toString(100.0 * s.minDetectableChange, 'f', 1));
}

QString formatBenchmark(const kforge::BenchmarkResult& r)
{
    if (r.baselineMs.empty())
        return QCoreApplication::translate("kforge::ui",
                                           "Benchmark cancelled during the warm-up: nothing was measured");
    // The verdict first (faster, slower, no detectable change), then the spread that decided it.
    QString text =
        QCoreApplication::translate("kforge::ui", "Benchmark: the plan is %1 — %2 (95% interval %3 to %4; detects "
                                                  "changes of %5% or more), median %6 → %7 per forward; %8")
            .arg(formatSpeedVerdict(r.speed), formatSpeedup(r.speed.speedup), formatSpeedup(r.speed.low),
                 formatSpeedup(r.speed.high), QLocale().toString(100.0 * r.speed.minDetectableChange, 'f', 1),
                 formatDuration(r.baseline.medianMs * 1000.0), formatDuration(r.plan.medianMs * 1000.0),
                 r.outputsAgree ? QCoreApplication::translate("kforge::ui", "outputs agree")
                                : QCoreApplication::translate("kforge::ui", "outputs DIFFER: %1")
                                      .arg(QString::fromStdString(r.outputsDifference)));
    if (r.stopped)
        text += QCoreApplication::translate("kforge::ui", " (cancelled after %n round(s))", nullptr,
                                            int(r.baselineMs.size()));
    if (r.speed.verdict == kforge::SpeedVerdict::TooNoisy)
        text += QStringLiteral("\n") + QString::fromStdString(r.speed.noise);
    if (r.stalls.any())
        text += QStringLiteral("\n") + QString::fromStdString(kforge::describe(r.stalls));
    return text;
}

QString formatVerify(const kforge::VerifyReport& r)
{
    const auto tr = [](const char* text) { return QCoreApplication::translate("kforge::ui", text); };
    if (r.passed) {
        double cosine = 1.0, maxAbs = 0.0;
        for (const auto& o : r.outputs) {
            cosine = std::min(cosine, o.cosine);
            maxAbs = std::max(maxAbs, o.maxAbsError);
        }
        return tr("Verify: the plan keeps the model's outputs (cosine %1, max abs error %2)")
            .arg(cosine, 0, 'f', 6)
            .arg(maxAbs, 0, 'g', 3);
    }
    if (r.inconclusive) {
        QString text = tr("Verify: INCONCLUSIVE: the plan is not shown to keep the model's outputs");
        for (const auto& o : r.outputs)
            if (!o.judged) {
                text += tr(", output %1: %2").arg(QString::fromStdString(o.path), QString::fromStdString(o.problem));
                break;
            }
        return text;
    }
    QString text = tr("Verify: FAIL");
    for (const auto& o : r.outputs)
        if (!o.passed) {
            text += tr(", output %1: %2").arg(QString::fromStdString(o.path), QString::fromStdString(o.problem));
            break;
        }
    if (r.divergence)
        text += tr("; first diverging module: %1 (call %2)")
                    .arg(QString::fromStdString(module_path::displayName(r.divergence->module)))
                    .arg(r.divergence->call + 1);
    else if (!r.localisationNote.empty())
        text += QStringLiteral("; ") + QString::fromStdString(r.localisationNote);
    return text;
}

} // namespace kforge::ui
