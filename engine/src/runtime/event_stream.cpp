// SPDX-License-Identifier: Apache-2.0
// A bounded multi-producer ring (Vyukov's bounded queue): producers never block; a full ring drops the
// event and counts it.
#include "runtime/event_sink.h"
#include "runtime/clock.h"
#include "runtime/thread_state.h"

#include <kforge/error.h>

#include <bit>
#include <thread>

namespace kforge {

std::string_view eventKindName(EventKind kind)
{
    switch (kind) {
    case EventKind::Activate:
        return "activate";
    case EventKind::Deactivate:
        return "deactivate";
    case EventKind::ModuleEnter:
        return "module_enter";
    case EventKind::ModuleExit:
        return "module_exit";
    case EventKind::Push:
        return "push";
    case EventKind::Pop:
        return "pop";
    case EventKind::ProviderCall:
        return "provider_call";
    case EventKind::OriginalCall:
        return "original_call";
    case EventKind::Leftover:
        return "leftover";
    case EventKind::Unwind:
        return "unwind";
    }
    return "unknown";
}

namespace {

struct RawEvent {
    std::uint64_t sequence;
    std::int64_t timeNs;
    std::uint64_t thread;
    EventKind kind;
    int depth;
    const char* modulePath;
    const char* function;
    const char* provider;
    const char* detail;
};

struct Cell {
    std::atomic<std::size_t> sequence;
    RawEvent event;
};

std::atomic<std::uint64_t> nextSequence{1};

std::string str(const char* s) { return s ? std::string(s) : std::string(); }

} // namespace

struct EventStream::Impl {
    explicit Impl(std::size_t capacity)
        : cells(std::bit_ceil(std::max<std::size_t>(capacity, 2))), mask(cells.size() - 1)
    {
        for (std::size_t i = 0; i < cells.size(); ++i)
            cells[i].sequence.store(i, std::memory_order_relaxed);
    }

    void push(const RawEvent& event)
    {
        std::size_t pos = enqueuePos.load(std::memory_order_relaxed);
        Cell* cell;
        for (;;) {
            cell = &cells[pos & mask];
            const std::size_t seq = cell->sequence.load(std::memory_order_acquire);
            const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
            if (diff == 0) {
                if (enqueuePos.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed))
                    break;
            } else if (diff < 0) {
                droppedCount.fetch_add(1, std::memory_order_relaxed);
                return;
            } else {
                pos = enqueuePos.load(std::memory_order_relaxed);
            }
        }
        cell->event = event;
        cell->sequence.store(pos + 1, std::memory_order_release);
    }

    bool pop(RawEvent& out)
    {
        const std::size_t pos = dequeuePos;
        Cell& cell = cells[pos & mask];
        if (cell.sequence.load(std::memory_order_acquire) != pos + 1)
            return false;
        out = cell.event;
        cell.sequence.store(pos + mask + 1, std::memory_order_release);
        ++dequeuePos;
        return true;
    }

    std::vector<Cell> cells;
    const std::size_t mask;
    std::atomic<std::size_t> enqueuePos{0};
    std::size_t dequeuePos = 0; // single consumer
    std::atomic<std::uint64_t> droppedCount{0};
};

namespace runtime::events {

std::atomic<bool> gRecording{false};
std::atomic<bool> gEveryModule{false};
std::atomic<EventStream::Impl*> gStream{nullptr};
// Producers between taking the stream pointer and their last use of it. Global, not a member of the stream:
// a producer must announce itself before it reads the pointer, or the detaching observer could free the
// stream between that read and the announcement. seq_cst on both sides (announce, then read; clear, then
// wait) means a producer that still sees the stream is seen by the detach.
std::atomic<int> gInFlight{0};

void emitFor(std::uint64_t thread, EventKind kind, const char* modulePath, const char* function, const char* provider,
             int depth, const char* detail)
{
    if (!gStream.load(std::memory_order_relaxed))
        return;
    gInFlight.fetch_add(1);
    if (EventStream::Impl* stream = gStream.load()) {
        stream->push({nextSequence.fetch_add(1, std::memory_order_relaxed), nowNs(), thread, kind, depth, modulePath,
                      function, provider, detail});
    }
    gInFlight.fetch_sub(1, std::memory_order_release);
}

void emit(EventKind kind, const char* modulePath, const char* function, const char* provider, int depth,
          const char* detail)
{
    if (gStream.load(std::memory_order_relaxed))
        emitFor(ThreadState::current().id(), kind, modulePath, function, provider, depth, detail);
}

} // namespace runtime::events

std::shared_ptr<EventStream> EventStream::attach(std::size_t capacity, Modules modules)
{
    auto impl = std::make_unique<Impl>(capacity);
    Impl* expected = nullptr;
    if (!runtime::events::gStream.compare_exchange_strong(expected, impl.get()))
        throw Error("event stream", "another observer is already attached");
    runtime::events::gEveryModule.store(modules == Modules::Every);
    runtime::events::gRecording.store(true);
    return std::shared_ptr<EventStream>(new EventStream(std::move(impl)));
}

EventStream::EventStream(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

EventStream::~EventStream()
{
    runtime::events::gRecording.store(false);
    runtime::events::gEveryModule.store(false);
    runtime::events::gStream.store(nullptr);
    while (runtime::events::gInFlight.load() != 0)
        std::this_thread::yield();
}

std::size_t EventStream::drain(std::vector<Event>& out, std::size_t max)
{
    std::size_t n = 0;
    RawEvent raw;
    while (n < max && m_impl->pop(raw)) {
        out.push_back({raw.sequence, raw.timeNs, raw.thread, raw.kind, str(raw.modulePath), str(raw.function),
                       str(raw.provider), raw.depth, str(raw.detail)});
        ++n;
    }
    return n;
}

std::uint64_t EventStream::dropped() const { return m_impl->droppedCount.load(); }
std::size_t EventStream::capacity() const { return m_impl->cells.size(); }

} // namespace kforge
