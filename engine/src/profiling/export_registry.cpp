// The export formats behind one interface, and atomic streamed file writes for exports and .kfprof files.
#include <kforge/profile_export.h>

#include <kforge/error.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ostream>
#include <random>
#include <streambuf>

namespace kforge {
namespace {

class ChromeTraceExporter final : public ProfileExporter {
public:
    std::string name() const override { return "chrome-trace"; }
    std::string extension() const override { return ".json"; }
    std::string description() const override
    {
        return "Chrome trace JSON (Perfetto, chrome://tracing): module and function ranges, kernels per stream, "
               "flows";
    }
    void write(const ProfileRun& run, std::ostream& out) const override { writeChromeTrace(run, out); }
};

class CsvExporter final : public ProfileExporter {
public:
    std::string name() const override { return "csv"; }
    std::string extension() const override { return ".csv"; }
    std::string description() const override { return "CSV, one row per kernel execution with its attribution"; }
    void write(const ProfileRun& run, std::ostream& out) const override { writeCsv(run, out); }
};

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

const std::vector<const ProfileExporter*>& profileExporters()
{
    static const ChromeTraceExporter chrome;
    static const CsvExporter csv;
    static const std::vector<const ProfileExporter*> all{&chrome, &csv};
    return all;
}

const ProfileExporter& profileExporter(const std::string& name)
{
    std::string known;
    for (const ProfileExporter* e : profileExporters()) {
        if (e->name() == name)
            return *e;
        known += (known.empty() ? "" : ", ") + e->name();
    }
    throw Error("export", "unknown format '" + name + "' (known: " + known + ")");
}

void exportProfile(const ProfileRun& run, const std::string& format, const std::string& path)
{
    const ProfileExporter& exporter = profileExporter(format);
    writeFileStreaming(path, [&](std::ostream& out) { exporter.write(run, out); });
}

void writeFileStreaming(const std::string& path, const std::function<void(std::ostream&)>& write)
{
    const auto fail = [&](const std::string& why) { return Error(path, "cannot write: " + why); };
    if (path.empty())
        throw Error("output file", "no file name given");
    const size_t slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base.empty())
        throw fail("it names a folder, not a file");
    struct stat st {};
    bool exists = false;
    mode_t mode = 0;
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            throw fail("it is a folder");
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
            throw fail(buffer.error() ? std::strerror(buffer.error()) : "the stream failed");
    } catch (...) {
        abandon();
        throw;
    }
    if (exists)
        (void)::fchmod(fd, mode); // keep the replaced file's permissions
    if (::fsync(fd) != 0) {
        const int err = errno;
        abandon();
        throw fail(std::string("cannot flush to disk: ") + std::strerror(err));
    }
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0) {
        const int err = errno;
        abandon();
        throw fail(std::string("cannot close: ") + std::strerror(err));
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        abandon();
        throw fail(std::string("cannot replace the file: ") + std::strerror(err));
    }
    const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        (void)::fsync(dirFd);
        ::close(dirFd);
    }
}

} // namespace kforge
