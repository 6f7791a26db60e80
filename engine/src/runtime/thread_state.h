// SPDX-License-Identifier: Apache-2.0
#pragma once
// The per-thread function table and function stacks (R12). The owning thread reads the table on every
// intercepted op without a lock; stacks change under the thread's mutex because deactivate() and the
// snapshot API reach them from other threads.
#include "runtime/provider_function.h"

#include <kforge/capture.h>
#include <kforge/functions.h>

#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace kforge::runtime {

struct TaskSnapshot; // task_context.h
struct HookTable;    // hook_table.h

struct StackEntry {
    ProviderFunctionPtr saved;     // in effect before the push; null = the original
    ProviderFunctionPtr installed; // what the push put in effect
    const char* modulePath;        // interned
    int planEntry;
    std::int64_t timeNs;
    const char* capture;    // interned capture label while a graph capture runs, else null
    const char* savedScope; // the scope whose provider `saved` is (null for the original)
    std::uint64_t sequence; // push order on this thread, across all runtimes (R5)
    std::uint64_t pushedOn; // the ThreadState::id that pushed it: another thread's in a forked task (task_context.h)
};

using FunctionStacks = std::array<std::vector<StackEntry>, kFunctionCount>;

class ThreadState {
public:
    // This thread's state, created on first use. Inline: every interposed call asks, and once created it is one
    // thread-local load (the engine's TLS model is initial-exec: engine/CMakeLists.txt).
    static ThreadState& current()
    {
        if (ThreadState* state = tlsCurrent)
            return *state;
        return createCurrent();
    }
    static void forgetCurrent() { tlsCurrent = nullptr; } // at thread exit, when the state is released
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
    bool anyInEffect() const { return m_inEffectCount.load(std::memory_order_relaxed) > 0; }
    std::uint64_t nextSequence() { return ++m_sequence; }
    std::uint64_t lastSequence() const { return m_sequence; }
    void raiseSequence(std::uint64_t atLeast) { m_sequence = std::max(m_sequence, atLeast); }
    // Puts in effect, per function, what the latest push installed (or the original): after the stacks were
    // replaced wholesale (task_context.cpp).
    void rebuildTable();

    // R12 async tasks (task_context.h): the snapshot of another thread's forward this thread follows while it runs
    // a task forked from that forward or its continuation after a wait; null while it runs its own code. Then its
    // own stacks and observe flag wait in the *Aside members. Changed by the owner with mutex() held.
    const std::shared_ptr<const TaskSnapshot>& following() const { return m_following; }
    void setFollowing(std::shared_ptr<const TaskSnapshot> snapshot) { m_following = std::move(snapshot); }
    std::map<std::uint64_t, FunctionStacks> ownStacksAside;
    bool ownObserveAside = false;
    // The module paths this thread's observed forward is inside, outermost first (interned; kept only while observers
    // watch): a task forked inside a module, or a forward's continuation after a wait, starts inside the modules of
    // the snapshot it follows, so its work is attributed to them (observer.h followModules). Owner thread only.
    std::vector<const char*> observedModules;
    std::vector<const char*> ownModulesAside;
    int taskScopes = 0; // open TaskScopes (engine forwards that publish their stacks); owner thread only

    // R12 lifetime: another thread never edits the stacks or the table of a thread inside an engine forward (it
    // may be calling through them right now). deactivate() leaves the request here instead; the owner applies it
    // at its next intercepted call, module hook or guard exit (applyPendingUnwinds, runtime_core.h).
    struct PendingUnwind {
        std::uint64_t runtimeId;
        std::uint64_t upToSequence; // entries pushed later belong to a later activation
        // The stacks it was meant for: the thread's own, or the copy of a task's snapshot it followed then
        // (followedCopies). A copy replaced since took those entries with it: the request is dropped, never applied
        // to the next copy, whose entries carry another thread's sequence numbers (R12).
        bool ownStacks;
        std::uint64_t copy;
    };
    void deferUnwind(std::uint64_t runtimeId) // mutex() held
    {
        m_pendingUnwinds.push_back({runtimeId, m_sequence, !m_following, m_followedCopies});
        m_hasPending.store(true, std::memory_order_release);
    }
    bool hasPendingUnwinds() const { return m_hasPending.load(std::memory_order_acquire); }
    // The requests for the stacks in place now; a request for the own stacks waits while a copy is in place.
    std::vector<PendingUnwind> takePendingUnwinds() // mutex() held
    {
        std::vector<PendingUnwind> now, later;
        for (const PendingUnwind& p : m_pendingUnwinds) {
            if (p.ownStacks)
                (m_following ? later : now).push_back(p);
            else if (m_following && p.copy == m_followedCopies)
                now.push_back(p);
        }
        m_pendingUnwinds = std::move(later);
        m_hasPending.store(!m_pendingUnwinds.empty(), std::memory_order_relaxed);
        return now;
    }
    // Called when the thread replaces its stacks by a copy of another snapshot (task_context.cpp).
    void noteNewCopy() { ++m_followedCopies; }

    // Engine call guards active on this thread (R10/R11); read by other threads for leftovers(). Changed with
    // mutex() held, so a remote deactivate() sees either a thread outside any forward or one it must not edit.
    std::atomic<int> guardDepth{0};
    // Whether intercepted calls should be observed even when the original runs (events, stepping, profiling).
    bool observe = false;
    const char* capture = nullptr;                       // see StackEntry::capture
    std::vector<CapturedProvider>* captureLog = nullptr; // pre-hooks record their installs here (R15)
    // The module hooks' table for this thread's forward (Hooks::forHook): the one of its first hook. Owner thread
    // only; released when the outermost CallGuard ends, so no idle thread keeps a table (and its runtimes) alive.
    std::shared_ptr<const HookTable> hookTable;

    // Sets or clears the interposition key in this thread's TLS include set. Owner thread only.
    void refreshModeKey();
    // LibTorch's dispatch key sets of this thread, where the interposer excludes its key around every call it runs.
    // Taken once: the engine's sources see LibTorch's declaration through the precompiled header, compiled for the
    // general-dynamic TLS model, so each direct access is a __tls_get_addr call (two per intercepted call, ~15% of
    // the interposer's own instructions: bench_interposer --instructions). Owner thread only.
    c10::impl::PODLocalDispatchKeySet& dispatchKeys() const { return *m_dispatchKeys; }

private:
    static ThreadState& createCurrent();
    static inline thread_local ThreadState* tlsCurrent = nullptr; // constant-initialised: no TLS init wrapper
    std::uint64_t m_id;
    // Created on its own thread (createCurrent), so this is that thread's.
    c10::impl::PODLocalDispatchKeySet* m_dispatchKeys = &c10::impl::raw_local_dispatch_key_set;
    std::array<std::atomic<const ProviderFunction*>, kFunctionCount> m_table{};
    std::array<ProviderFunctionPtr, kFunctionCount> m_owners{}; // keep what is in effect alive
    std::array<std::atomic<const char*>, kFunctionCount> m_scopes{};
    std::atomic<int> m_inEffectCount{0}; // non-null slots of m_table: anyInEffect() in O(1) on the hot path
    std::map<std::uint64_t, FunctionStacks> m_stacks; // per runtime id
    std::shared_ptr<const TaskSnapshot> m_following;  // see following()
    std::uint64_t m_sequence = 0;                     // the last push's StackEntry::sequence
    std::vector<PendingUnwind> m_pendingUnwinds;
    std::uint64_t m_followedCopies = 0; // snapshots followed so far: which copy a pending unwind was meant for
    std::atomic<bool> m_hasPending{false};
    mutable std::mutex m_mutex;
};

} // namespace kforge::runtime
