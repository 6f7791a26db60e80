// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the built kforge (KFORGE_CLI) as a child process and collects its exit code, stdout and stderr.
#include <ostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kforge::clitest {

struct Result {
    int exitCode = -1; // -1 when the process did not exit normally (a crash)
    std::string out;
    std::string err;
};
std::ostream& operator<<(std::ostream& os, const Result& r);

struct Limits {
    // RLIMIT_FSIZE for the child (0 = none), with SIGXFSZ ignored: writes beyond it fail with EFBIG, as on a
    // full disk. Its stdout goes to /dev/null then (a file would hit the limit too); stderr stays short.
    unsigned long fileSizeBytes = 0;
    // stderr is a pseudo-terminal, as in an interactive shell (isatty is true); what it shows comes back in err.
    bool stderrTerminal = false;
};

Result runKforge(const std::vector<std::string>& args, Limits limits = {});

// A pseudo-terminal for a child's stderr (isatty is true there), read here while the child runs: text() is what it
// showed so far, finish() (after the child exited) all of it.
class TerminalCapture {
public:
    TerminalCapture(); // throws std::runtime_error when the system has no pseudo-terminal to give
    ~TerminalCapture();
    TerminalCapture(const TerminalCapture&) = delete;
    TerminalCapture& operator=(const TerminalCapture&) = delete;

    const std::string& path() const { return m_path; } // open this as the child's stderr
    std::string text() const;
    std::string finish();

private:
    int m_terminal = -1, m_held = -1;
    std::string m_path;
    mutable std::mutex m_mutex;
    std::string m_text;
    std::thread m_reader;
};
// One kforge per argument list, as many at a time as there are cores; results in the same order.
std::vector<Result> runKforgeMany(const std::vector<std::vector<std::string>>& argLists);

} // namespace kforge::clitest
