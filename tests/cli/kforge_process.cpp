// SPDX-License-Identifier: Apache-2.0
#include "build_path.h"
#include "kforge_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <future>
#include <optional>
#include <stdexcept>
#include <random>
#include <thread>

namespace kforge::clitest {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// In the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void execChild(char* const* argv, const char* outPath, const char* errPath, Limits limits)
{
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(limits.fileSizeBytes ? "/dev/null" : outPath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = limits.stderrTerminal ? ::open(errPath, O_RDWR | O_NOCTTY)
                                          : ::open(errPath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0)
        ::_exit(127);
    ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    if (limits.fileSizeBytes) {
        ::signal(SIGXFSZ, SIG_IGN); // kept across exec: write() fails with EFBIG instead
        const rlimit limit{limits.fileSizeBytes, limits.fileSizeBytes};
        ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ::execv(argv[0], argv);
    ::_exit(127);
}

} // namespace

std::ostream& operator<<(std::ostream& os, const Result& r)
{
    return os << "exit code " << r.exitCode << "\n--- stdout ---\n" << r.out << "--- stderr ---\n" << r.err;
}

// stdout and stderr go to temporary files (no pipe can fill up and block).
Result runKforge(const std::vector<std::string>& args, Limits limits)
{
    const fs::path dir = fs::temp_directory_path() / ("kforge-cli-test-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    const std::string outPath = (dir / "stdout").string();
    std::string errPath = (dir / "stderr").string();
    std::optional<TerminalCapture> terminal;
    if (limits.stderrTerminal) {
        terminal.emplace();
        errPath = terminal->path();
    }
    std::vector<std::string> argv{KFORGE_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);

    Result result;
    const pid_t pid = ::fork();
    if (pid == 0)
        execChild(cargv.data(), outPath.c_str(), errPath.c_str(), limits);
    if (pid < 0) {
        result.err = std::string("fork failed: ") + std::strerror(errno);
    } else {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFEXITED(status))
            result.exitCode = WEXITSTATUS(status);
        result.out = readFile(outPath);
        if (!limits.stderrTerminal)
            result.err = readFile(errPath);
    }
    if (terminal)
        result.err = terminal->finish();
    std::error_code ec;
    fs::remove_all(dir, ec);
    return result;
}

TerminalCapture::TerminalCapture()
{
    m_terminal = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (m_terminal < 0 || ::grantpt(m_terminal) != 0 || ::unlockpt(m_terminal) != 0)
        throw std::runtime_error(std::string("no pseudo-terminal: ") + std::strerror(errno));
    m_path = ::ptsname(m_terminal);
    // Held open here until finish(): with no process on the terminal's side, reads would fail at once.
    m_held = ::open(m_path.c_str(), O_RDWR | O_NOCTTY);
    m_reader = std::thread([this] {
        char buffer[4096];
        for (ssize_t n; (n = ::read(m_terminal, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR);)
            if (n > 0) {
                std::lock_guard lock(m_mutex);
                m_text.append(buffer, size_t(n));
            }
    });
}

TerminalCapture::~TerminalCapture() { finish(); }

std::string TerminalCapture::text() const
{
    std::lock_guard lock(m_mutex);
    return m_text;
}

std::string TerminalCapture::finish()
{
    if (m_reader.joinable()) {
        // The child has exited: closing the last holder of the terminal's side ends the reads (EIO) once the
        // buffered text is drained.
        ::close(m_held);
        m_reader.join();
        ::close(m_terminal);
    }
    return text();
}

std::vector<Result> runKforgeMany(const std::vector<std::vector<std::string>>& argLists)
{
    // The child runs only async-signal-safe calls between fork and exec, so starting it from several
    // threads at once is safe.
    const size_t parallel = std::max(2u, std::thread::hardware_concurrency());
    std::vector<Result> results(argLists.size());
    for (size_t start = 0; start < argLists.size(); start += parallel) {
        std::vector<std::future<Result>> running;
        for (size_t i = start; i < std::min(argLists.size(), start + parallel); ++i)
            running.push_back(std::async(std::launch::async, [&argLists, i] { return runKforge(argLists[i]); }));
        for (size_t i = 0; i < running.size(); ++i)
            results[start + i] = running[i].get();
    }
    return results;
}

} // namespace kforge::clitest
