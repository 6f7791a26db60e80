// SPDX-License-Identifier: Apache-2.0
#include "common/sha256.h"

#include <kforge/error.h>

#include <openssl/evp.h>

namespace kforge {

std::string hexDigest(const unsigned char* digest, std::size_t size)
{
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(size * 2);
    for (std::size_t i = 0; i < size; ++i) {
        hex += kHex[digest[i] >> 4];
        hex += kHex[digest[i] & 0xf];
    }
    return hex;
}

std::string sha256Hex(std::string_view bytes)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1)
        throw Error("SHA-256", "OpenSSL's SHA-256 is unavailable");
    return hexDigest(digest, size);
}

} // namespace kforge
