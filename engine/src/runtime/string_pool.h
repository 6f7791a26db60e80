// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string_view>

namespace kforge::runtime {

// Interned, never freed: events carry these pointers so that recording one allocates nothing (R13), and
// they stay valid after the session or runtime that named them is gone.
const char* intern(std::string_view text);

} // namespace kforge::runtime
