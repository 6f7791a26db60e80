// SPDX-License-Identifier: Apache-2.0
#include "profiling/cpu_allocator_tap.h"

#include <c10/util/ThreadLocalDebugInfo.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

namespace kforge::profiling {
namespace {

// A few listeners at once: profiles of two models on two threads of the desktop, an optimizer measuring a call.
constexpr std::size_t kMaxListeners = 8;
std::array<std::atomic<const c10::DebugInfoBase*>, kMaxListeners> g_listeners{};
std::atomic<int> g_attached{0};
std::mutex g_attaching; // attach and detach, and with them the allocator's replacement

// The allocator the tap wraps, and its blocks' deleter. Kept once set: a block allocated under the tap carries the
// tap's deleter and may be freed long after the tap is gone.
std::atomic<c10::Allocator*> g_wrapped{nullptr};
std::atomic<c10::DeleterFnPtr> g_wrappedDeleter{nullptr};

// The listener attached on this thread: found without asking c10 for the thread's debug info (a call into c10 and a
// general-dynamic TLS lookup, twice per block); the intra-op pool's threads, which only inherit the debug info, ask.
thread_local CpuTapListener* tAttachedHere = nullptr;

CpuTapListener* listenerOfThisThread()
{
    if (CpuTapListener* here = tAttachedHere)
        return here;
    if (g_attached.load(std::memory_order_relaxed) == 0)
        return nullptr;
    c10::DebugInfoBase* info = c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE);
    if (!info)
        return nullptr;
    // The thread's debug info keeps it alive while it is looked at, attached or not.
    for (const auto& slot : g_listeners)
        if (slot.load(std::memory_order_acquire) == info)
            return static_cast<CpuTapListener*>(static_cast<c10::MemoryReportingInfoBase*>(info));
    return nullptr;
}

void tappedDelete(void* data)
{
    if (CpuTapListener* listener = listenerOfThisThread())
        listener->cpuFreed(data); // before the block can be handed out again, so the free is heard first
    g_wrappedDeleter.load(std::memory_order_relaxed)(data);
}

class TappedCpuAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(std::size_t bytes) override
    {
        c10::DataPtr block = g_wrapped.load(std::memory_order_relaxed)->allocate(bytes);
        if (bytes == 0) // c10 reports none either
            return block;
        if (CpuTapListener* listener = listenerOfThisThread())
            if (block.compare_exchange_deleter(g_wrappedDeleter.load(std::memory_order_relaxed), &tappedDelete))
                listener->cpuAllocated(block.get(), bytes);
        return block;
    }
    // raw_allocate's blocks are freed through it: the tap's deleter frees any of the wrapped allocator's blocks.
    c10::DeleterFnPtr raw_deleter() const override { return &tappedDelete; }
    void copy_data(void* dest, const void* src, std::size_t count) const override
    {
        g_wrapped.load(std::memory_order_relaxed)->copy_data(dest, src, count);
    }
};

TappedCpuAllocator g_tap;

// The CPU allocator's blocks can be tapped: data and context are one pointer and the raw deleter frees them.
bool isPlain(c10::Allocator& allocator)
{
    const c10::DeleterFnPtr deleter = allocator.raw_deleter();
    if (!deleter)
        return false;
    const c10::DataPtr probe = allocator.allocate(1);
    return probe.get() == probe.get_context() && probe.get_deleter() == deleter;
}

bool install()
{
    c10::Allocator* current = c10::GetAllocator(c10::DeviceType::CPU);
    if (current == &g_tap)
        return true;
    if (!isPlain(*current))
        return false;
    const c10::DeleterFnPtr known = g_wrappedDeleter.load();
    if (known && known != current->raw_deleter()) // blocks of the allocator wrapped before still carry our deleter
        return false;
    g_wrapped.store(current);
    g_wrappedDeleter.store(current->raw_deleter());
    c10::SetAllocator(c10::DeviceType::CPU, &g_tap); // the default priority: an allocator set above it stays
    return c10::GetAllocator(c10::DeviceType::CPU) == &g_tap;
}

void uninstall()
{
    if (c10::GetAllocator(c10::DeviceType::CPU) == &g_tap) // another may have replaced it since: left as it is
        c10::SetAllocator(c10::DeviceType::CPU, g_wrapped.load());
}

} // namespace

bool attachCpuTap(CpuTapListener& listener)
{
    const std::lock_guard lock(g_attaching);
    auto* freeSlot = std::find_if(g_listeners.begin(), g_listeners.end(), [](const auto& s) { return !s.load(); });
    if (freeSlot == g_listeners.end())
        return false;
    if (g_attached.load() == 0 && !install())
        return false;
    freeSlot->store(&listener, std::memory_order_release);
    g_attached.fetch_add(1);
    listener.m_outerOnItsThread = tAttachedHere;
    tAttachedHere = &listener;
    return true;
}

void detachCpuTap(CpuTapListener& listener)
{
    const std::lock_guard lock(g_attaching);
    if (tAttachedHere == &listener)
        tAttachedHere = listener.m_outerOnItsThread;
    for (auto& slot : g_listeners)
        if (slot.load() == &listener) {
            slot.store(nullptr, std::memory_order_release);
            if (g_attached.fetch_sub(1) == 1)
                uninstall();
        }
}

} // namespace kforge::profiling
