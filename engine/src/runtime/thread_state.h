#pragma once
// The per-thread function table and function stacks (R12). The owning thread reads the table on every
// intercepted op without a lock; stacks change under the thread's mutex because deactivate() and the
// snapshot API reach them from other threads.
#include "runtime/provider_function.h"

#include <kforge/capture.h>
#include <kforge/functions.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kforge::runtime {

struct StackEntry {
    ProviderFunctionPtr saved;     // in effect before the push; null = the original
    ProviderFunctionPtr installed; // what the push put in effect
    const char* modulePath;        // interned
    int planEntry;
    std::int64_t timeNs;
    const char* capture;    // interned capture label while a graph capture runs, else null
    const char* savedScope; // the scope whose provider `saved` is (null for the original)
};

using FunctionStacks = std::array<std::vector<StackEntry>, kFunctionCount>;

class ThreadState {
public:
    static ThreadState& current();
    // Every live thread's state; the pointers stay valid while the returned vector lives.
    static std::vector<std::shared_ptr<ThreadState>> all();

    ThreadState();
    std::uint64_t id() const { return m_id; }

    // Owner-thread fast path: the callable in effect, null = the original.
    const ProviderFunction* inEffect(Function f) const
    {
        return m_table[static_cast<int>(f)].load(std::memory_order_acquire);
    }

    // All below: call with mutex() held.
    std::mutex& mutex() { return m_mutex; }
    FunctionStacks& stacksOf(std::uint64_t runtimeId) { return m_stacks[runtimeId]; }
    std::map<std::uint64_t, FunctionStacks>& allStacks() { return m_stacks; }
    void setInEffect(Function f, ProviderFunctionPtr fn, const char* scope);
    // The module path whose pre-hook installed what is in effect (owner thread, for events and errors).
    const char* scopeOf(Function f) const { return m_scopes[static_cast<int>(f)].load(std::memory_order_relaxed); }
    const ProviderFunctionPtr& inEffectOwner(Function f) const { return m_owners[static_cast<int>(f)]; }
    bool anyInEffect() const;

    // Engine call guards active on this thread (R10/R11); read by other threads for leftovers().
    std::atomic<int> guardDepth{0};
    // Whether intercepted calls should be observed even when the original runs (events, stepping, profiling).
    bool observe = false;
    const char* capture = nullptr;                       // see StackEntry::capture
    std::vector<CapturedProvider>* captureLog = nullptr; // pre-hooks record their installs here (R15)

    // Sets or clears the interposition key in this thread's TLS include set. Owner thread only.
    void refreshModeKey();

private:
    std::uint64_t m_id;
    std::array<std::atomic<const ProviderFunction*>, kFunctionCount> m_table{};
    std::array<ProviderFunctionPtr, kFunctionCount> m_owners{}; // keep what is in effect alive
    std::array<std::atomic<const char*>, kFunctionCount> m_scopes{};
    std::map<std::uint64_t, FunctionStacks> m_stacks; // per runtime id
    mutable std::mutex m_mutex;
};

} // namespace kforge::runtime
