// SPDX-License-Identifier: Apache-2.0
#include "progress.h"

#include <unistd.h>

#include <atomic>
#include <iostream>

namespace kforge::cli {
namespace {

std::atomic<bool> g_interrupted{false};

void onInterrupt(int) { g_interrupted.store(true); }

} // namespace

bool interrupted() { return g_interrupted.load(); }

InterruptGuard::InterruptGuard()
{
    g_interrupted = false;
    struct sigaction action {};
    action.sa_handler = &onInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &m_previous);
}

InterruptGuard::~InterruptGuard() { sigaction(SIGINT, &m_previous, nullptr); }

Progress::Progress(bool quiet, std::string prefix)
    : m_quiet(quiet), m_tty(::isatty(STDERR_FILENO) == 1), m_prefix(std::move(prefix))
{
}

kforge::ProgressCallback Progress::callback(int warmup, std::string unit)
{
    return [this, warmup, unit = std::move(unit)](int done, int total) {
        if (!m_quiet) {
            const std::string text =
                done <= warmup ? "warm-up " + std::to_string(done) + "/" + std::to_string(warmup)
                               : unit + " " + std::to_string(done - warmup) + "/" + std::to_string(total - warmup);
            // Only a terminal shows progress: in a log or a pipe, one line per forward is noise.
            if (m_tty) {
                std::cerr << '\r' << m_prefix << text << "\x1b[K" << std::flush;
                m_lineOpen = true;
            }
        }
        return !interrupted();
    };
}

void Progress::done()
{
    if (m_lineOpen)
        std::cerr << '\n';
    m_lineOpen = false;
}

} // namespace kforge::cli
