// SPDX-License-Identifier: Apache-2.0
#pragma once
// The median of a sample (the mean of the two middle values of an even count; 0 for none): one definition for the
// statistics tables, the comparison and the stall detectors.
#include <algorithm>
#include <vector>

namespace kforge {

inline double medianOf(std::vector<double> values)
{
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

} // namespace kforge
