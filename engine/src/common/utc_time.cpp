// SPDX-License-Identifier: Apache-2.0
#include "common/utc_time.h"

#include <ctime>

namespace kforge {

std::string utcNow()
{
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

} // namespace kforge
