// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

namespace kforge {

// The whole file as text. kforge::Error naming the path when it is missing ("not found"), a directory
// (`directoryWhy`, e.g. "is a directory, not a plan file") or unreadable.
std::string readTextFile(const std::string& path, const std::string& directoryWhy);

} // namespace kforge
