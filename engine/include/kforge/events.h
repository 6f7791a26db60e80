// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

enum class EventKind : std::uint8_t {
    Activate,
    Deactivate,
    ModuleEnter,
    ModuleExit,
    Push,
    Pop,
    ProviderCall,
    OriginalCall,
    Leftover,
    Unwind,
};
std::string_view eventKindName(EventKind kind);

// R13: {sequence number, time in ns, thread, kind, module path, function, provider, stack depth}.
struct Event {
    std::uint64_t sequence = 0;
    std::int64_t timeNs = 0;
    std::uint64_t thread = 0;
    EventKind kind = EventKind::Activate;
    std::string modulePath;
    std::string function;
    std::string provider;
    int depth = 0;
    std::string detail; // error text of a leftover, runtime id of activate/deactivate
};

// The bounded event buffer an observer drains. While one is attached, the runtime records events; the
// producer never blocks: when the buffer is full the event is dropped and counted.
class EventStream {
public:
    // Which modules' entries and exits are recorded: those a plan hooks (R13), or every module a forward enters, so
    // that each call can be attributed to the module it ran in without a plan (the desktop's module tree).
    enum class Modules { Hooked, Every };
    // Throws kforge::Error if another stream is attached (one observer at a time).
    static std::shared_ptr<EventStream> attach(std::size_t capacity = 65536, Modules modules = Modules::Hooked);
    ~EventStream(); // detaches

    std::size_t drain(std::vector<Event>& out, std::size_t max = SIZE_MAX);
    std::uint64_t dropped() const;
    std::size_t capacity() const;

    struct Impl;

private:
    explicit EventStream(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace kforge
