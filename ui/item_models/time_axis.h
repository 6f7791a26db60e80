// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QString>

#include <vector>

namespace kforge::ui {

// A labelled tick of the timeline's time axis.
struct TimeTick {
    double ns = 0;
    QString label; // "1.5 ms"
};

// Ticks at a "nice" step (1, 2 or 5 × 10^k ns) so that about `targetCount` fit in [startNs, endNs], labelled
// in the unit of the range's larger end (ns, µs, ms, s) with just enough decimals to tell neighbours apart.
std::vector<TimeTick> timeTicks(double startNs, double endNs, int targetCount);

} // namespace kforge::ui
