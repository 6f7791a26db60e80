// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kforge {

// R14: breakpoints on module entry or on a function call. The forward thread waits at a breakpoint until
// the observer resumes it; Abort makes the forward throw, and the call guard unwinds.
struct PausePoint {
    enum class Kind { ModuleEnter, FunctionCall } kind = Kind::ModuleEnter;
    std::string modulePath; // the module entered, or the innermost hooked scope of a call
    std::string function;   // for FunctionCall
    std::uint64_t thread = 0;
};

class Stepper {
public:
    static Stepper& instance();

    void addModuleBreakpoint(const std::string& modulePath);
    void addFunctionBreakpoint(const std::string& function);
    void removeModuleBreakpoint(const std::string& modulePath);
    void removeFunctionBreakpoint(const std::string& function);
    void clearBreakpoints(); // also resumes a paused forward

    enum class Resume { Step, Continue, Abort };
    void resume(Resume how);
    std::optional<PausePoint> paused() const;
    // Waits until some forward pauses; nullopt on timeout.
    std::optional<PausePoint> waitForPause(std::chrono::milliseconds timeout);

    struct Impl;
    Impl& impl() { return *m_impl; }

private:
    Stepper();
    Impl* m_impl;
};

} // namespace kforge
