// SPDX-License-Identifier: Apache-2.0
#pragma once
// Ctrl+C and progress for the commands that run forwards (run, profile, compare, bench, optimize): the first Ctrl+C
// stops after the current forward with a partial result, progress goes to stderr when it is a terminal.
#include <kforge/progress.h>

#include <signal.h>

#include <functional>
#include <string>

namespace kforge::cli {

inline constexpr int kInterruptedExitCode = 130; // 128 + SIGINT, as shells report it

// Whether Ctrl+C was pressed while an InterruptGuard was alive.
bool interrupted();

// While alive, the first Ctrl+C asks the run to stop after the current forward; a second one kills as usual.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
    struct sigaction m_previous {};
};

// "warm-up 2/3", "iteration 5/10" on stderr: one line rewritten in place, and only when stderr is a terminal.
class Progress {
public:
    Progress(bool quiet, std::string prefix);
    ~Progress() { done(); }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // A (done, total) callback for the engine: reports, and answers false once Ctrl+C was pressed.
    kforge::ProgressCallback callback(int warmup, std::string unit = "iteration");
    void done();

private:
    bool m_quiet, m_tty;
    std::string m_prefix;
    bool m_lineOpen = false;
};

} // namespace kforge::cli
