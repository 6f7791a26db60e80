// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/plan.h>
#include <kforge/runtime_types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kforge {

class ModelSession;
namespace runtime {
class ModuleDirectory; // engine-internal: the modules a runtime's scopes name
}

// AITune's KernelProviderRuntime in LibTorch (docs/design/runtime-semantics.md R1-R16). Hooks are placed on the plan's
// scope modules of one session; function tables and stacks are per thread.
class KernelProviderRuntime {
public:
    // Resolves every enabled entry (scope in the model, function known, provider type registered and
    // supporting the function); throws kforge::Error listing what is wrong. The session must outlive it.
    KernelProviderRuntime(ModelSession& session, Plan plan);
    // The same on a module directory (what the runtime needs of a session; engine-internal callers), `modelName`
    // naming the model in errors. The directory must outlive it.
    KernelProviderRuntime(const runtime::ModuleDirectory& modules, const std::string& modelName, Plan plan);
    // Deactivates. Safe from any thread, also while a forward of the session runs or is paused at a breakpoint
    // on another thread (see deactivate()).
    ~KernelProviderRuntime();
    KernelProviderRuntime(const KernelProviderRuntime&) = delete;
    KernelProviderRuntime& operator=(const KernelProviderRuntime&) = delete;

    void activate(); // R6: idempotent, transactional
    // R7: idempotent, unwinds every thread this runtime touched. R12: a thread inside an engine forward (running,
    // or paused at a breakpoint) is not edited from here: it drops this runtime's providers itself at its next
    // intercepted call, hooked module entry or exit, or when the forward ends, whichever comes first. Until then
    // the providers it may be calling stay alive, also when this runtime is destroyed. No new scope of this
    // runtime starts once deactivate() returns.
    void deactivate();
    bool isActive() const; // R9

    // R8: activates if needed and disables gradients on this thread for the block. The runtime is deactivated when
    // the last of the applied() blocks open at once (on any thread) closes, if one of them activated it.
    class Applied {
    public:
        ~Applied();
        Applied(Applied&&) noexcept;
        Applied& operator=(Applied&&) = delete;

    private:
        friend class KernelProviderRuntime;
        explicit Applied(KernelProviderRuntime* runtime);
        KernelProviderRuntime* m_runtime;
        struct GradGuard;
        std::unique_ptr<GradGuard> m_noGrad;
    };
    [[nodiscard]] Applied applied();

    std::uint64_t id() const;
    const Plan& plan() const;
    // Patches of this runtime still in effect on threads that are not inside an engine forward (R11).
    std::vector<LeftoverPatch> leftovers() const;
    // Patches that call guards unwound (or kept) after a failed or unbalanced forward (R10), oldest first.
    std::vector<LeftoverPatch> leftoverReports() const;
    void clearLeftoverReports();

    // Calls an entry's provider declined since the runtime was made (unsupported dtype, shape, device, or a form
    // with no normal form): the original served them and they were reported as the original's. Entries with at
    // least one decline, in plan order.
    std::vector<EntryDeclines> declines() const;

    struct Impl;

private:
    std::shared_ptr<Impl> m_impl;
};

// What the runtime changed in LibTorch while plans are active, for the user to know (e.g. fusers off).
std::vector<std::string> runtimeNotices();

// Every live thread's function table and stacks (R12), for the UI.
std::vector<ThreadStacksSnapshot> snapshotFunctionStacks();

// The interposition mechanism's start-up self-test (R1), reported by `kforge doctor`.
struct InterposerReport {
    std::string dispatchKey;
    bool selfTestPassed = false;
    std::string selfTestMessage;
    std::vector<std::string> interceptedOps; // "aten::gelu", "aten::softmax.int", ...
    std::vector<std::string> missingOps;     // overloads this LibTorch lacks (reported, not fatal)
};
InterposerReport interposerReport();

} // namespace kforge
