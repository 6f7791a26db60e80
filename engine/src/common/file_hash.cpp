// SPDX-License-Identifier: Apache-2.0
// SHA-256 through OpenSSL's EVP interface: it picks the CPU's SHA extensions, several times faster on
// multi-gigabyte model files than a portable implementation.
#include "common/sha256.h"

#include <kforge/error.h>
#include <kforge/file_hash.h>

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace kforge {

std::string fileSha256(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(path, errno == ENOENT ? std::string("not found")
                                          : "cannot be read: " + std::string(std::strerror(errno)));
    const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1)
        throw Error(path, "cannot be hashed: OpenSSL's SHA-256 is unavailable");
    std::vector<char> buffer(std::size_t(1) << 20);
    while (in) {
        in.read(buffer.data(), std::streamsize(buffer.size()));
        if (EVP_DigestUpdate(context.get(), buffer.data(), std::size_t(in.gcount())) != 1)
            throw Error(path, "cannot be hashed");
    }
    if (in.bad())
        throw Error(path, "cannot be read");
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(context.get(), digest, &size) != 1)
        throw Error(path, "cannot be hashed");
    return hexDigest(digest, size);
}

} // namespace kforge
