// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain value types the runtime hands to the UI and the CLI (snapshots, leftovers).
#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

// One save-and-restore entry of a function stack (docs/design/runtime-semantics.md, "function stack").
struct StackEntrySnapshot {
    std::string saved;     // the callable that was in effect before the push: "original" or a provider
    std::string installed; // what the push put in effect
    std::string modulePath;
    int planEntry = -1;
    std::uint64_t runtimeId = 0;
    std::int64_t timeNs = 0;
};

struct FunctionStackSnapshot {
    std::string function;
    std::string inEffect;                    // "original" or the provider's display name
    std::vector<StackEntrySnapshot> entries; // bottom first
};

struct ThreadStacksSnapshot {
    std::uint64_t thread = 0;
    bool insideForward = false;
    std::vector<FunctionStackSnapshot> functions; // only functions with a provider in effect or entries
};

// Calls a plan entry's provider declined (CallResult): the original served them and they were reported as its.
struct EntryDeclines {
    int entry = -1; // plan entry index
    std::string scope, function, provider;
    std::uint64_t calls = 0;
    std::string lastReason;
};

// A patch that stays in effect after its forward ended (R11), or one that a call guard unwound (R10).
struct LeftoverPatch {
    std::string function;
    std::string provider;
    std::string modulePath; // the module whose exit never ran
    std::uint64_t thread = 0;
    std::uint64_t runtimeId = 0;
    std::int64_t timeNs = 0;
    std::string error; // what stopped the forward, when known
    bool unwound = false;
    // Kept (not unwound), but the thread that held it has ended since (a worker of forwardMany): no longer in effect.
    bool threadEnded = false;
    std::string capture; // the graph capture it belongs to, if any (R15)
};

} // namespace kforge
