// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

namespace kforge {

// Now, in UTC, as ISO 8601 to the second: "2026-12-06T09:30:00Z" (the "created" and "measured at" of files).
std::string utcNow();

} // namespace kforge
