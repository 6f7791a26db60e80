// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writing large JSON documents (.kfprof files, Chrome traces) token by token through a small buffer, so that
// memory does not grow with the document.
#include <charconv>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace kforge {

class JsonStreamWriter {
public:
    explicit JsonStreamWriter(std::ostream& out) : m_out(out) { m_buf.reserve(kFlushAt + 4096); }
    JsonStreamWriter(const JsonStreamWriter&) = delete;
    JsonStreamWriter& operator=(const JsonStreamWriter&) = delete;

    // Text written as is: punctuation, whitespace, or JSON already formatted.
    void raw(std::string_view text)
    {
        m_buf.append(text);
        maybeFlush();
    }
    template <typename Integer> void number(Integer value)
    {
        char digits[24];
        m_buf.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
    }
    // Nanoseconds as microseconds with exactly three decimals: 1234567 -> "1234.567" (no floating point).
    void micros(std::int64_t ns);
    // A JSON string: quotes, backslashes and control characters escaped (a stray control character makes a
    // whole trace unloadable, pytorch #130622); invalid UTF-8 replaced by U+FFFD.
    void string(std::string_view text);
    void flush();

private:
    static constexpr size_t kFlushAt = 1 << 16;
    void maybeFlush()
    {
        if (m_buf.size() >= kFlushAt)
            flush();
    }

    std::ostream& m_out;
    std::string m_buf;
};

} // namespace kforge
