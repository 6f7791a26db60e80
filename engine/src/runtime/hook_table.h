// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which modules are hooked, by object identity (R2). Sessions register their module objects; active
// runtimes add their bindings. Readers take an immutable snapshot; writers copy and swap.
#include "runtime/provider_function.h"

#include <atomic>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace c10::ivalue {
struct Object; // ATen/core/ivalue.h: the module objects are keys here, never dereferenced
} // namespace c10::ivalue

namespace kforge::runtime {

class RuntimeCore; // the runtime's state that hooks call into (runtime_core.h)
class ThreadState; // thread_state.h

struct ResolvedEntry {
    Function function;
    ProviderFunctionPtr provider;
    int planIndex;
};

struct RuntimeBinding {
    std::shared_ptr<RuntimeCore> runtime;
    std::vector<ResolvedEntry> entries; // this scope's entries, plan order
    std::uint64_t activation = 0;       // RuntimeCore::activation() when bound
};

struct ModuleHooks {
    const char* path = "";                // interned
    std::vector<RuntimeBinding> bindings; // activation order
};

using ObjectKey = const c10::ivalue::Object*;

struct HookTable {
    std::unordered_map<ObjectKey, ModuleHooks> modules;
    // The modules with at least one binding, in no order: what a hook looks through while nobody records, steps or
    // observes, a few entries where `modules` holds every module of every session. Rebuilt by every update.
    std::vector<std::pair<ObjectKey, const ModuleHooks*>> bound;

    const ModuleHooks* find(ObjectKey object) const
    {
        const auto it = modules.find(object);
        return it == modules.end() ? nullptr : &it->second;
    }
    const ModuleHooks* findBound(ObjectKey object) const
    {
        for (const auto& [key, hooks] : bound)
            if (key == object)
                return hooks;
        return nullptr;
    }
};

class Hooks {
public:
    static std::shared_ptr<const HookTable> snapshot();
    // The table a module hook on `thread` reads. Inside an engine forward the thread keeps the snapshot of the
    // forward's first hook until its outermost CallGuard ends: one load per hook instead of snapshot()'s lock and
    // reference count, and a runtime activated by another thread mid-forward applies from the next forward (R2; a
    // deactivated one's pre-hooks check their activation, R7). Outside a forward, `hold` gets a snapshot.
    static const HookTable& forHook(ThreadState& thread, std::shared_ptr<const HookTable>& hold);
    static void registerModules(const std::vector<std::pair<ObjectKey, std::string>>& modules);
    static void unregisterModules(const std::vector<ObjectKey>& objects);
    // Adds one binding per scope object; all or nothing.
    static void bind(const std::shared_ptr<RuntimeCore>& runtime,
                     const std::vector<std::pair<ObjectKey, std::vector<ResolvedEntry>>>& scopes);
    static void unbind(const RuntimeCore* runtime);
    static bool isBound(const RuntimeCore* runtime); // scans the table: not for the hot path

    // True while some runtime is bound: the enter/exit ops do nothing else otherwise (cheap when inactive).
    static bool anyBound() { return s_bound.load(std::memory_order_relaxed) > 0; }

private:
    // Copies the table, edits the copy and swaps it in (writers serialised; readers keep their snapshots).
    template <class Edit> static void update(Edit edit);
    static std::atomic<int> s_bound;
};

} // namespace kforge::runtime
