// SPDX-License-Identifier: Apache-2.0
#include "runtime/event_sink.h"
#include "runtime/interposer.h"
#include "runtime/observer.h"
#include "runtime/step_points.h"
#include "runtime/thread_state.h"

#include <kforge/error.h>

#include <condition_variable>
#include <mutex>
#include <set>

namespace kforge {

struct Stepper::Impl {
    mutable std::mutex mutex;
    std::condition_variable pausedChanged;
    std::condition_variable resumed;
    std::set<std::string> modules;
    std::set<std::string> functions;
    bool stepPending = false;     // pause at the next pause point of stepThread's forward, whatever it is
    std::uint64_t stepThread = 0; // the thread whose forward was stepped (ThreadState::id)
    std::optional<PausePoint> paused;
    std::optional<Resume> resumeWith; // set by resume(), taken by the paused thread when it wakes

    void updateLive() { runtime::stepping::gLive.store(stepPending || !modules.empty() || !functions.empty()); }
};

namespace runtime::stepping {
std::atomic<bool> gLive{false};

void pauseIfHit(PausePoint::Kind kind, const char* modulePath, const char* function)
{
    Stepper::Impl& s = Stepper::instance().impl();
    const std::uint64_t self = ThreadState::current().id();
    std::unique_lock lock(s.mutex);
    const bool hit = (s.stepPending && s.stepThread == self) ||
                     (kind == PausePoint::Kind::ModuleEnter && modulePath && s.modules.count(modulePath)) ||
                     (kind == PausePoint::Kind::FunctionCall && function && s.functions.count(function));
    if (!hit)
        return;
    // One paused forward at a time: a second thread that hits waits until the first is resumed and has taken
    // its resume command.
    s.resumed.wait(lock, [&] { return !s.paused && !s.resumeWith; });
    s.paused = PausePoint{kind, modulePath ? modulePath : "", function ? function : "", self};
    s.pausedChanged.notify_all();
    s.resumed.wait(lock, [&] { return s.resumeWith.has_value(); });
    const Stepper::Resume how = *s.resumeWith;
    s.paused.reset();
    s.resumeWith.reset();
    s.stepPending = how == Stepper::Resume::Step;
    s.stepThread = self;
    s.updateLive();
    s.resumed.notify_all();
    if (how == Stepper::Resume::Abort) {
        setLastEngineError("aborted by the user at a breakpoint");
        throw Error("forward", lastEngineError());
    }
}

void forwardEnded()
{
    if (!gLive.load(std::memory_order_relaxed))
        return;
    Stepper::Impl& s = Stepper::instance().impl();
    const std::uint64_t self = ThreadState::current().id();
    std::lock_guard lock(s.mutex);
    if (s.stepPending && s.stepThread == self) {
        s.stepPending = false;
        s.updateLive();
    }
}
} // namespace runtime::stepping

bool runtime::events::observationWanted()
{
    return gRecording.load(std::memory_order_relaxed) || stepping::gLive.load(std::memory_order_relaxed) ||
           (anyObserving() && !observersOnThisThread().empty());
}

Stepper::Stepper() : m_impl(new Impl()) {}

Stepper& Stepper::instance()
{
    static auto* stepper = new Stepper(); // never destroyed: forward threads may still wait on it at exit
    return *stepper;
}

void Stepper::addModuleBreakpoint(const std::string& modulePath)
{
    std::lock_guard lock(m_impl->mutex);
    m_impl->modules.insert(modulePath);
    m_impl->updateLive();
}

void Stepper::addFunctionBreakpoint(const std::string& function)
{
    std::lock_guard lock(m_impl->mutex);
    m_impl->functions.insert(function);
    m_impl->updateLive();
}

void Stepper::removeModuleBreakpoint(const std::string& modulePath)
{
    std::lock_guard lock(m_impl->mutex);
    m_impl->modules.erase(modulePath);
    m_impl->updateLive();
}

void Stepper::removeFunctionBreakpoint(const std::string& function)
{
    std::lock_guard lock(m_impl->mutex);
    m_impl->functions.erase(function);
    m_impl->updateLive();
}

void Stepper::clearBreakpoints()
{
    std::lock_guard lock(m_impl->mutex);
    m_impl->modules.clear();
    m_impl->functions.clear();
    m_impl->stepPending = false;
    if (m_impl->paused) {
        m_impl->resumeWith = Resume::Continue;
        m_impl->paused.reset();
    }
    m_impl->updateLive();
    m_impl->resumed.notify_all();
}

void Stepper::resume(Resume how)
{
    std::lock_guard lock(m_impl->mutex);
    if (!m_impl->paused)
        return;
    m_impl->resumeWith = how;
    m_impl->paused.reset(); // paused() and waitForPause() now wait for the next pause, not this one
    m_impl->resumed.notify_all();
}

std::optional<PausePoint> Stepper::paused() const
{
    std::lock_guard lock(m_impl->mutex);
    return m_impl->paused;
}

std::optional<PausePoint> Stepper::waitForPause(std::chrono::milliseconds timeout)
{
    std::unique_lock lock(m_impl->mutex);
    m_impl->pausedChanged.wait_for(lock, timeout, [&] { return m_impl->paused.has_value(); });
    return m_impl->paused;
}

} // namespace kforge
