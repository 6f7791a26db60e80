// SPDX-License-Identifier: Apache-2.0
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>

#include "runtime/entry_resolver.h"
#include "runtime/event_sink.h"
#include "runtime/fault_injection.h"
#include "runtime/fusers.h"
#include "runtime/interposer.h"
#include "runtime/module_directory.h"
#include "runtime/normal_form.h"
#include "runtime/runtime_core.h"
#include "runtime/string_pool.h"
#include "runtime/task_context.h"

#include <kforge/error.h>

#include "common/clipped_text.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>

namespace kforge {

using namespace runtime;

struct KernelProviderRuntime::Impl {
    const ModuleDirectory* modules;
    Plan plan;
    std::shared_ptr<RuntimeCore> core = RuntimeCore::create();
    std::vector<std::pair<ObjectKey, std::vector<ResolvedEntry>>> scopes;
    bool active = false;
    std::mutex mutex; // serialises activate/deactivate
    // R8: applied() blocks open now, on any thread, and whether one of them activated the runtime: the last to
    // close deactivates it then, so that overlapping blocks on two threads never deactivate under each other.
    std::mutex appliedMutex;
    int appliedBlocks = 0;
    bool activatedByApplied = false;
};

namespace {

std::string entryWhere(size_t index, const PlanEntry& e)
{
    return "plan entry " + std::to_string(index) + " (scope '" + clippedText(e.scope) + "', function '" +
           clippedText(e.function) + "')";
}

} // namespace

KernelProviderRuntime::KernelProviderRuntime(const runtime::ModuleDirectory& modules, const std::string& modelName,
                                             Plan plan)
    : m_impl(std::make_shared<Impl>())
{
    const InterposerReport& interposer = ensureInterposer();
    m_impl->modules = &modules;
    m_impl->plan = std::move(plan);
    std::vector<std::string> problems;
    // No silent degradation: without a working interposer no provider would ever be called.
    const bool anyEnabled = m_impl->plan.hasEnabledEntry();
    if (anyEnabled && (!interposer.selfTestPassed || faults::gSelfTestFailed.load()))
        problems.push_back("the interposer's start-up self-test failed (" +
                           (interposer.selfTestPassed ? std::string("forced by a test") : interposer.selfTestMessage) +
                           "), so no provider could be called; see `kforge doctor`");
    EntryResolver resolver(/*makeProviders=*/true);
    for (size_t i = 0; i < m_impl->plan.entries.size(); ++i) {
        const PlanEntry& e = m_impl->plan.entries[i];
        if (!e.enabled)
            continue;
        const std::string where = entryWhere(i, e);
        const ObjectKey object = m_impl->modules->objectOf(e.scope);
        if (!object)
            problems.push_back(where + ": " + unknownScopeMessage(e.scope, modelName));
        EntryResolution resolved = resolver.resolve(e);
        for (const EntryProblem& p : resolved.problems)
            problems.push_back(where + ": " + p.message);
        if (!object || !resolved.ok())
            continue;
        auto fn = makeProviderFunction(std::move(resolved.provider));
        auto scope = std::find_if(m_impl->scopes.begin(), m_impl->scopes.end(),
                                  [&](const auto& s) { return s.first == object; });
        if (scope == m_impl->scopes.end())
            scope = m_impl->scopes.insert(m_impl->scopes.end(), {object, {}});
        scope->second.push_back({*resolved.function, std::move(fn), int(i)});
    }
    if (!problems.empty()) {
        std::string why;
        for (const auto& p : problems)
            why += (why.empty() ? "" : "; ") + p;
        throw Error("plan", why);
    }
}

KernelProviderRuntime::~KernelProviderRuntime()
{
    try {
        deactivate();
    } catch (...) {
        // A destructor must not throw; deactivate only fails on allocation.
    }
}

void KernelProviderRuntime::activate()
{
    std::lock_guard lock(m_impl->mutex);
    // R2: an empty plan installs nothing and stays inactive, as in Python.
    if (m_impl->active || m_impl->scopes.empty())
        return;
    Hooks::bind(m_impl->core, m_impl->scopes); // all or nothing (R6)
    m_impl->active = true;
    // R1: TorchScript fusers would hide ops from the interposer. A .pt2 program runs node by node: nothing fuses.
    if (const torch::jit::Module* module = m_impl->modules->scriptModule()) {
        Fusers::disableWhilePlanActive();
        Fusers::dropFusedPlans(*module); // fused before activation: re-optimised without fusers
    }
    if (events::recording())
        events::emit(EventKind::Activate, nullptr, nullptr, nullptr, 0,
                     intern("runtime " + std::to_string(m_impl->core->id())));
}

void KernelProviderRuntime::deactivate()
{
    std::lock_guard lock(m_impl->mutex);
    const bool wasActive = m_impl->active;
    if (wasActive) {
        Hooks::unbind(m_impl->core.get());
        m_impl->active = false;
        if (m_impl->modules->scriptModule())
            Fusers::restoreAfterPlan();
    }
    // R7: unwind whatever pre-hooks left behind, also when inactive (a hand-called enter op). A module entered with a
    // hook snapshot taken before the unbind pushes nothing once the activation ended.
    m_impl->core->endActivation();
    m_impl->core->unwindAllThreads();
    ThreadState::current().refreshModeKey(); // other threads drop the key lazily (interposer.cpp)
    if (events::recording() && (wasActive || m_impl->core->lastUnwound() > 0))
        events::emit(EventKind::Deactivate, nullptr, nullptr, nullptr, 0,
                     intern("runtime " + std::to_string(m_impl->core->id())));
}

bool KernelProviderRuntime::isActive() const
{
    std::lock_guard lock(m_impl->mutex);
    return m_impl->active;
}

struct KernelProviderRuntime::Applied::GradGuard {
    at::NoGradGuard noGrad;
};

KernelProviderRuntime::Applied::Applied(KernelProviderRuntime* runtime)
    : m_runtime(runtime), m_noGrad(std::make_unique<GradGuard>())
{
}

KernelProviderRuntime::Applied::Applied(Applied&& other) noexcept
    : m_runtime(std::exchange(other.m_runtime, nullptr)), m_noGrad(std::move(other.m_noGrad))
{
}

KernelProviderRuntime::Applied::~Applied()
{
    m_noGrad.reset();
    if (!m_runtime)
        return;
    Impl& impl = *m_runtime->m_impl;
    std::lock_guard lock(impl.appliedMutex);
    if (--impl.appliedBlocks == 0 && std::exchange(impl.activatedByApplied, false))
        m_runtime->deactivate();
}

KernelProviderRuntime::Applied KernelProviderRuntime::applied()
{
    std::lock_guard lock(m_impl->appliedMutex);
    if (m_impl->appliedBlocks == 0 && !isActive()) {
        activate(); // throws before the block counts
        m_impl->activatedByApplied = true;
    }
    ++m_impl->appliedBlocks;
    return Applied(this);
}

std::uint64_t KernelProviderRuntime::id() const { return m_impl->core->id(); }
const Plan& KernelProviderRuntime::plan() const { return m_impl->plan; }
std::vector<LeftoverPatch> KernelProviderRuntime::leftovers() const { return m_impl->core->leftovers(); }
std::vector<LeftoverPatch> KernelProviderRuntime::leftoverReports() const { return m_impl->core->reports(); }
void KernelProviderRuntime::clearLeftoverReports() { m_impl->core->clearReports(); }

std::vector<EntryDeclines> KernelProviderRuntime::declines() const
{
    std::vector<EntryDeclines> out;
    for (const auto& [object, entries] : m_impl->scopes)
        for (const ResolvedEntry& e : entries)
            if (const std::uint64_t n = e.provider->declines.load(std::memory_order_relaxed)) {
                const PlanEntry& p = m_impl->plan.entries[size_t(e.planIndex)];
                const char* reason = e.provider->lastDecline.load(std::memory_order_relaxed);
                out.push_back({e.planIndex, p.scope, p.function, e.provider->providerName, n, reason ? reason : ""});
            }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.entry < b.entry; });
    return out;
}

std::vector<std::string> runtimeNotices()
{
    if (Fusers::disabledForPlan())
        return {Fusers::notice()};
    return {};
}

std::vector<ThreadStacksSnapshot> snapshotFunctionStacks()
{
    std::vector<ThreadStacksSnapshot> out;
    for (const auto& thread : ThreadState::all()) {
        ThreadStacksSnapshot snap;
        snap.thread = thread->id();
        std::lock_guard lock(thread->mutex());
        snap.insideForward = isBusy(*thread);
        if (followsFinishedForward(*thread))
            continue; // a stale copy of a finished forward's stacks (task_context.h)
        for (int i = 0; i < kFunctionCount; ++i) {
            const auto f = static_cast<Function>(i);
            FunctionStackSnapshot fs;
            fs.function = std::string(functionName(f));
            fs.inEffect = nameOf(thread->inEffectOwner(f).get());
            // In push order across runtimes: the chain the function's calls go through (R5).
            std::vector<std::pair<const StackEntry*, std::uint64_t>> entries;
            for (const auto& [runtimeId, stacks] : thread->allStacks())
                for (const StackEntry& e : stacks[i])
                    entries.emplace_back(&e, runtimeId);
            std::sort(entries.begin(), entries.end(),
                      [](const auto& a, const auto& b) { return a.first->sequence < b.first->sequence; });
            for (const auto& [e, runtimeId] : entries)
                fs.entries.push_back({nameOf(e->saved.get()), nameOf(e->installed.get()), e->modulePath, e->planEntry,
                                      runtimeId, e->timeNs});
            if (!fs.entries.empty() || thread->inEffectOwner(f))
                snap.functions.push_back(std::move(fs));
        }
        out.push_back(std::move(snap));
    }
    return out;
}

} // namespace kforge
