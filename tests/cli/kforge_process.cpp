#include "kforge_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <future>
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
    const int err = ::open(errPath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
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
    const std::string errPath = (dir / "stderr").string();
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
        result.err = readFile(errPath);
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return result;
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
