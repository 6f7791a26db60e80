// SPDX-License-Identifier: Apache-2.0
#pragma once
// Digests of files on disk (a plan records its model file's SHA-256 in "model": {"sha256": ...}).
#include <string>

namespace kforge {

// Lower-case hex SHA-256 of a file's bytes; throws kforge::Error naming the file when it cannot be read.
std::string fileSha256(const std::string& path);

} // namespace kforge
