// SPDX-License-Identifier: Apache-2.0
#include "runtime/hook_table.h"

#include "runtime/runtime_core.h"
#include "runtime/string_pool.h"
#include "runtime/thread_state.h"

#include <algorithm>
#include <mutex>

namespace kforge::runtime {
namespace {

std::mutex& writeMutex()
{
    static auto* m = new std::mutex();
    return *m;
}

std::shared_ptr<const HookTable>& tableSlot()
{
    static auto* slot = new std::shared_ptr<const HookTable>(std::make_shared<HookTable>());
    return *slot;
}

} // namespace

template <class Edit> void Hooks::update(Edit edit)
{
    std::lock_guard lock(writeMutex());
    auto next = std::make_shared<HookTable>(*std::atomic_load(&tableSlot()));
    edit(*next);
    next->bound.clear(); // the copy's pointers point into the old table
    for (const auto& [object, hooks] : next->modules)
        if (!hooks.bindings.empty())
            next->bound.emplace_back(object, &hooks);
    std::atomic_store(&tableSlot(), std::shared_ptr<const HookTable>(std::move(next)));
}

std::atomic<int> Hooks::s_bound{0};

std::shared_ptr<const HookTable> Hooks::snapshot() { return std::atomic_load(&tableSlot()); }

const HookTable& Hooks::forHook(ThreadState& thread, std::shared_ptr<const HookTable>& hold)
{
    if (thread.guardDepth.load(std::memory_order_relaxed) == 0) {
        hold = snapshot();
        return *hold;
    }
    // The table of the forward's first hook, for the whole forward: a runtime activated by another thread meanwhile
    // applies from the next forward, observed or not (R2); one deactivated meanwhile pushes nothing more, its
    // pre-hooks checking their activation (R7).
    if (!thread.hookTable)
        thread.hookTable = snapshot();
    return *thread.hookTable;
}

void Hooks::registerModules(const std::vector<std::pair<ObjectKey, std::string>>& modules)
{
    update([&](HookTable& t) {
        for (const auto& [object, path] : modules)
            t.modules[object].path = intern(path);
    });
}

void Hooks::unregisterModules(const std::vector<ObjectKey>& objects)
{
    update([&](HookTable& t) {
        for (ObjectKey object : objects)
            t.modules.erase(object);
    });
}

void Hooks::bind(const std::shared_ptr<RuntimeCore>& runtime,
                 const std::vector<std::pair<ObjectKey, std::vector<ResolvedEntry>>>& scopes)
{
    update([&](HookTable& t) {
        for (const auto& [object, entries] : scopes)
            t.modules[object].bindings.push_back({runtime, entries, runtime->activation()});
    });
    s_bound.fetch_add(1);
}

bool Hooks::isBound(const RuntimeCore* runtime)
{
    const auto table = snapshot();
    for (const auto& [object, hooks] : table->modules)
        for (const RuntimeBinding& b : hooks.bindings)
            if (b.runtime.get() == runtime)
                return true;
    return false;
}

void Hooks::unbind(const RuntimeCore* runtime)
{
    update([&](HookTable& t) {
        for (auto& [object, hooks] : t.modules)
            hooks.bindings.erase(std::remove_if(hooks.bindings.begin(), hooks.bindings.end(),
                                                [&](const RuntimeBinding& b) { return b.runtime.get() == runtime; }),
                                 hooks.bindings.end());
    });
    s_bound.fetch_sub(1);
}

} // namespace kforge::runtime
