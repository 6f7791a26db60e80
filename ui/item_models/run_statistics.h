// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/events.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::ui {

struct ModuleRunStats {
    std::int64_t calls = 0;         // intercepted function calls attributed to the module
    std::int64_t providerCalls = 0; // of which a provider served
    std::int64_t timeNs = 0;        // inside the module (hooked modules only: their enter/exit events)
    std::int64_t entries = 0;       // times the module was entered (hooked modules only)

    bool operator==(const ModuleRunStats&) const = default;
};

// Folds a run's event stream into per-module numbers for the tree. The runtime reports enter/exit only for
// hooked modules (plan scopes), so a call is attributed to the innermost hooked module entered on its thread,
// or to the scope the event names, or to the root.
class RunStatistics {
public:
    void clear();
    // Returns whether anything the tree shows changed.
    bool add(const kforge::Event& event);
    const std::unordered_map<std::string, ModuleRunStats>& modules() const { return m_modules; }
    // The innermost hooked module `thread` is in, as far as the events tell ("" when none).
    std::string currentModule(std::uint64_t thread) const;
    std::int64_t totalCalls() const { return m_totalCalls; }

private:
    struct Frame {
        std::string path;
        std::int64_t enteredNs = 0;
    };
    std::unordered_map<std::string, ModuleRunStats> m_modules;
    std::unordered_map<std::uint64_t, std::vector<Frame>> m_stacks; // per thread
    std::int64_t m_totalCalls = 0;
};

} // namespace kforge::ui
