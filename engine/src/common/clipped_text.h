// SPDX-License-Identifier: Apache-2.0
#pragma once
// User text quoted in a message, cut when long: a plan's 400 KB scope made a 400 KB error.
#include <string>
#include <string_view>

namespace kforge {

// `text` when at most 160 characters; else its first 100 and last 40, and how many were left out between.
inline std::string clippedText(std::string_view text)
{
    constexpr size_t kLongest = 160, kHead = 100, kTail = 40;
    if (text.size() <= kLongest)
        return std::string(text);
    return std::string(text.substr(0, kHead)) + "...[" + std::to_string(text.size() - kHead - kTail) +
           " characters]..." + std::string(text.substr(text.size() - kTail));
}

} // namespace kforge
