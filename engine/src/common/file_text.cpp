// SPDX-License-Identifier: Apache-2.0
#include "common/file_text.h"

#include <kforge/error.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kforge {

std::string readTextFile(const std::string& path, const std::string& directoryWhy)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        throw Error(path, err == ENOENT ? std::string("not found") : std::string("cannot open: ") + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw Error(path, directoryWhy);
    }
    std::string text;
    if (st.st_size > 0)
        text.reserve(size_t(st.st_size));
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw Error(path, std::string("cannot read: ") + std::strerror(err));
        }
        if (n == 0)
            break;
        text.append(buffer, size_t(n));
    }
    ::close(fd);
    return text;
}

} // namespace kforge
