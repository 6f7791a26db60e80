// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every fuzz entry needs: kforge::Error is the documented answer to bad input; anything else is a bug.
#include <kforge/error.h>

#include <stdexcept>
#include <string>

namespace kforge::fuzz {

// A property of the engine's output that must hold; std::logic_error (not kforge::Error) so that it escapes.
inline void require(bool holds, const std::string& what)
{
    if (!holds)
        throw std::logic_error("fuzz property violated: " + what);
}

template <typename F> void ignoreKforgeErrors(F&& step)
{
    try {
        step();
    } catch (const kforge::Error&) {
    }
}

// A step that must not refuse (reading back what the engine itself wrote): its kforge::Error becomes a bug.
template <typename F> auto mustSucceed(const std::string& what, F&& step)
{
    try {
        return step();
    } catch (const kforge::Error& e) {
        throw std::logic_error("fuzz property violated: " + what + ": " + e.what());
    }
}

} // namespace kforge::fuzz
