// SPDX-License-Identifier: Apache-2.0
#include "duration_format.h"

#include <QLocale>

namespace kforge::ui {

QString formatMicroseconds(double us)
{
    // Enough digits to tell short kernels apart, without noise on long ones.
    const int decimals = us < 10 ? 2 : us < 1000 ? 1 : 0;
    return QLocale().toString(us, 'f', decimals);
}

QString formatDuration(double us)
{
    const QLocale locale;
    if (us < 1)
        return locale.toString(us * 1000, 'f', 0) + QStringLiteral(" ns");
    if (us < 1000)
        return locale.toString(us, 'f', us < 10 ? 2 : 1) + QStringLiteral(" µs");
    if (us < 1e6)
        return locale.toString(us / 1e3, 'f', us < 1e4 ? 2 : 1) + QStringLiteral(" ms");
    return locale.toString(us / 1e6, 'f', 2) + QStringLiteral(" s");
}

TimeUnit timeUnitFor(double largestUs)
{
    if (largestUs >= 1e8)
        return {QStringLiteral("s"), 1e6};
    if (largestUs >= 1e5)
        return {QStringLiteral("ms"), 1e3};
    return {};
}

QString formatIn(double us, const TimeUnit& unit) { return formatMicroseconds(us / unit.us); }

QString formatShare(double fraction) { return QLocale().toString(fraction * 100, 'f', 1) + QStringLiteral(" %"); }

QString formatSpeedup(double speedup) { return QLocale().toString(speedup, 'f', 2) + QStringLiteral("×"); }

} // namespace kforge::ui
