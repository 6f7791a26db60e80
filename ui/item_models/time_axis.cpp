// SPDX-License-Identifier: Apache-2.0
#include "item_models/time_axis.h"

#include <algorithm>
#include <cmath>

namespace kforge::ui {
namespace {

struct Unit {
    double scale;
    const char* name;
};

Unit unitFor(double ns)
{
    const double magnitude = std::abs(ns);
    if (magnitude >= 1e9)
        return {1e9, "s"};
    if (magnitude >= 1e6)
        return {1e6, "ms"};
    if (magnitude >= 1e3)
        return {1e3, "µs"};
    return {1, "ns"};
}

double niceStep(double roughNs)
{
    const double power = std::pow(10.0, std::floor(std::log10(roughNs)));
    for (double multiple : {1.0, 2.0, 5.0})
        if (multiple * power >= roughNs)
            return multiple * power;
    return 10.0 * power;
}

} // namespace

std::vector<TimeTick> timeTicks(double startNs, double endNs, int targetCount)
{
    std::vector<TimeTick> ticks;
    if (!(endNs > startNs) || targetCount < 1)
        return ticks;
    // Below 1 ns the profile has no resolution, so the axis does not pretend to.
    const double step = std::max(1.0, niceStep((endNs - startNs) / targetCount));
    // The unit of the larger end, so that labels read as times ("1.5 ms", "2.0 ms") rather than counts of
    // a small unit ("1500 µs").
    const Unit unit = unitFor(std::max(std::abs(startNs), std::abs(endNs)));
    const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step / unit.scale) + 1e-9)));
    const double first = std::ceil(startNs / step);
    for (double k = first, ns = k * step; ns <= endNs; ++k, ns = k * step) {  // multiples: no drift from adding
        const double value = std::abs(ns) < step / 2 ? 0.0 : ns / unit.scale; // no "-0"
        ticks.push_back({ns, QStringLiteral("%1 %2").arg(value, 0, 'f', decimals).arg(QString::fromUtf8(unit.name))});
    }
    return ticks;
}

} // namespace kforge::ui
