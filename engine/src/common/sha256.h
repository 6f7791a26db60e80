// SPDX-License-Identifier: Apache-2.0
#pragma once
// SHA-256 through OpenSSL, as lower-case hex.
#include <cstddef>
#include <string>
#include <string_view>

namespace kforge {

std::string sha256Hex(std::string_view bytes);

// `size` digest bytes as lower-case hex.
std::string hexDigest(const unsigned char* digest, std::size_t size);

} // namespace kforge
