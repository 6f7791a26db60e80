#pragma once
// The runtime's shared state: what the module hooks, the call guard and deactivate() act on.
#include "runtime/hook_table.h"
#include "runtime/thread_state.h"

#include <kforge/runtime_types.h>

#include <mutex>

namespace kforge::runtime {

class RuntimeCore {
public:
    explicit RuntimeCore(std::uint64_t id);
    std::uint64_t id() const { return m_id; }

    // R3: push and install this scope's entries in plan order; on failure undo this call's steps, rethrow.
    void preHook(ThreadState& thread, const char* modulePath, const std::vector<ResolvedEntry>& entries);
    // R4: in reverse plan order, pop each non-empty stack and put the popped callable back.
    void postHook(ThreadState& thread, const char* modulePath, const std::vector<ResolvedEntry>& entries);
    // R7: restore every function this runtime patched, on every thread, to the bottom of its stack.
    void unwindAllThreads(); // lastUnwound() tells how many entries it removed
    size_t lastUnwound() const { return m_lastUnwound; }

    std::vector<LeftoverPatch> leftovers() const; // R11
    void addReport(LeftoverPatch patch);          // R10
    std::vector<LeftoverPatch> reports() const;
    void clearReports();

    static std::shared_ptr<RuntimeCore> create();
    static std::shared_ptr<RuntimeCore> find(std::uint64_t id);

private:
    std::uint64_t m_id;
    size_t m_lastUnwound = 0;
    mutable std::mutex m_reportsMutex;
    std::vector<LeftoverPatch> m_reports;
};

// Pops one entry: the saved callable goes back in effect. Caller holds thread.mutex().
void restoreEntry(ThreadState& thread, Function f, const StackEntry& entry);
LeftoverPatch describeEntry(const ThreadState& thread, std::uint64_t runtimeId, Function f, const StackEntry& entry);

} // namespace kforge::runtime
