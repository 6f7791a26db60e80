// SPDX-License-Identifier: Apache-2.0
#include "runtime/thread_state.h"

#include "runtime/mode_key.h"

#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>

namespace kforge::runtime {
namespace {

std::mutex& registryMutex()
{
    static auto* m = new std::mutex();
    return *m;
}
std::vector<std::weak_ptr<ThreadState>>& registry()
{
    static auto* r = new std::vector<std::weak_ptr<ThreadState>>();
    return *r;
}
std::atomic<std::uint64_t> nextThreadId{1};

// Owns the state for the thread's lifetime and takes it out of the registry when the thread ends.
struct ThreadStateHolder {
    std::shared_ptr<ThreadState> state = std::make_shared<ThreadState>();
    ThreadStateHolder()
    {
        std::lock_guard lock(registryMutex());
        registry().push_back(state);
    }
    ~ThreadStateHolder()
    {
        ThreadState::forgetCurrent();
        std::lock_guard lock(registryMutex());
        auto& r = registry();
        r.erase(std::remove_if(r.begin(), r.end(), [&](const auto& w) { return w.expired() || w.lock() == state; }),
                r.end());
    }
};

} // namespace

ThreadState::ThreadState() : m_id(nextThreadId.fetch_add(1)) {}

ThreadState& ThreadState::createCurrent()
{
    thread_local ThreadStateHolder holder;
    tlsCurrent = holder.state.get();
    return *tlsCurrent;
}

std::vector<std::shared_ptr<ThreadState>> ThreadState::all()
{
    std::lock_guard lock(registryMutex());
    std::vector<std::shared_ptr<ThreadState>> out;
    for (const auto& w : registry())
        if (auto s = w.lock())
            out.push_back(std::move(s));
    return out;
}

void ThreadState::setInEffect(Function f, ProviderFunctionPtr fn, const char* scope)
{
    const int i = static_cast<int>(f);
    const bool had = m_table[i].load(std::memory_order_relaxed) != nullptr;
    if (had != bool(fn))
        m_inEffectCount.fetch_add(fn ? 1 : -1, std::memory_order_relaxed);
    m_scopes[i].store(fn ? scope : nullptr, std::memory_order_relaxed);
    m_table[i].store(fn.get(), std::memory_order_release);
    m_owners[i] = std::move(fn);
}

void ThreadState::rebuildTable()
{
    for (int i = 0; i < kFunctionCount; ++i) {
        const StackEntry* latest = nullptr;
        for (const auto& [runtimeId, stacks] : m_stacks)
            for (const StackEntry& e : stacks[i])
                if (!latest || e.sequence > latest->sequence)
                    latest = &e;
        setInEffect(static_cast<Function>(i), latest ? latest->installed : nullptr,
                    latest ? latest->modulePath : nullptr);
    }
}

void ThreadState::refreshModeKey() { c10::impl::tls_set_dispatch_key_included(kModeKey, observe || anyInEffect()); }

} // namespace kforge::runtime
