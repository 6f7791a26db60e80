// SPDX-License-Identifier: Apache-2.0
#include <kforge/atomic_file.h>
#include <kforge/error.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <random>
#include <streambuf>

namespace kforge {
namespace {

// An output stream buffer over a file descriptor that remembers the first write error.
class FdBuffer final : public std::streambuf {
public:
    explicit FdBuffer(int fd) : m_fd(fd) { setp(m_buf, m_buf + sizeof m_buf); }
    int error() const { return m_error; }

protected:
    int_type overflow(int_type c) override
    {
        if (!drain())
            return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override { return drain() ? 0 : -1; }

private:
    bool drain()
    {
        const char* p = pbase();
        while (p < pptr()) {
            const ssize_t n = ::write(m_fd, p, size_t(pptr() - p));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                if (!m_error)
                    m_error = errno;
                return false;
            }
            p += n;
        }
        setp(m_buf, m_buf + sizeof m_buf);
        return true;
    }
    int m_fd;
    int m_error = 0;
    char m_buf[1 << 16];
};

} // namespace

void writeFileStreaming(const std::string& path, const std::function<void(std::ostream&)>& write)
{
    const auto fail = [&](const std::string& why) {
        return Error(path, "not saved: " + why + " (the file was left as it was)");
    };
    if (path.empty())
        throw Error("save", "no file name given");
    // A symbolic link stays a link: the file it points to is replaced.
    std::string target = path;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        if (char* resolved = ::realpath(path.c_str(), nullptr)) {
            target = resolved;
            std::free(resolved);
        }
    }
    const auto slash = target.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    if (base.empty() || base == "." || base == "..")
        throw fail("'" + path + "' does not name a file");
    bool exists = false;
    mode_t mode = 0666;
    if (::stat(target.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            throw fail("it is a directory");
        exists = true;
        mode = st.st_mode & 07777;
    }
    struct stat dirStat {};
    if (::stat(dir.c_str(), &dirStat) != 0)
        throw fail("folder '" + dir + "' does not exist");
    if (!S_ISDIR(dirStat.st_mode))
        throw fail("'" + dir + "' is not a folder");

    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    std::string temp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        temp = dir + "/." + base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
               std::to_string(rd() & 0xffffff);
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            throw fail("cannot create a temporary file in '" + dir + "': " + std::strerror(errno));
    }
    if (fd < 0)
        throw fail("cannot create a temporary file in '" + dir + "'");
    const auto abandon = [&]() {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
        ::unlink(temp.c_str());
    };
    try {
        FdBuffer buffer(fd);
        std::ostream out(&buffer);
        write(out);
        out.flush();
        if (buffer.error() || !out)
            throw fail(std::string("cannot write: ") +
                       (buffer.error() ? std::strerror(buffer.error()) : "the stream failed"));
    } catch (...) {
        abandon();
        throw;
    }
    if (exists)
        (void)::fchmod(fd, mode); // keep the replaced file's permissions
    const auto step = [&](bool ok, const char* what) {
        if (ok)
            return;
        const int err = errno;
        abandon();
        throw fail(std::string(what) + ": " + std::strerror(err));
    };
    step(::fsync(fd) == 0, "cannot flush to disk");
    const int closed = ::close(fd);
    fd = -1;
    step(closed == 0, "cannot close");
    step(::rename(temp.c_str(), target.c_str()) == 0, "cannot replace the file");
    // The rename itself is durable once the folder is synced (best effort: not every file system allows it).
    const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        (void)::fsync(dirFd);
        ::close(dirFd);
    }
}

void writeFileAtomically(const std::string& path, const std::string& text)
{
    writeFileStreaming(path, [&](std::ostream& out) { out.write(text.data(), std::streamsize(text.size())); });
}

} // namespace kforge
