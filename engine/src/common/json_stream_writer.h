// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writing large JSON documents (.kfprof files, Chrome traces) token by token through a small buffer, so that
// memory does not grow with the document.
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace kforge {

class JsonStreamWriter {
public:
    explicit JsonStreamWriter(std::ostream& out) : m_out(out), m_buf(new char[kCapacity]) {}
    JsonStreamWriter(const JsonStreamWriter&) = delete;
    JsonStreamWriter& operator=(const JsonStreamWriter&) = delete;

    // Text written as is: punctuation, whitespace, or JSON already formatted. A literal's length is known where it
    // is written, so the copy is a few moves (a million-record trace writes about 60 pieces per record).
    template <size_t N> [[gnu::always_inline]] void raw(const char (&text)[N]) { put(text, N - 1); }
    void raw(std::string_view text) { put(text.data(), text.size()); }
    template <typename Integer> [[gnu::always_inline]] void number(Integer value)
    {
        if (kCapacity - m_size < kMaxDigits)
            flush();
        m_size = size_t(std::to_chars(m_buf.get() + m_size, m_buf.get() + kCapacity, value).ptr - m_buf.get());
    }
    // Nanoseconds as microseconds with exactly three decimals: 1234567 -> "1234.567" (no floating point).
    void micros(std::int64_t ns);
    // A JSON string: quotes, backslashes and control characters escaped (a stray control character makes a
    // whole trace unloadable, pytorch #130622); invalid UTF-8 replaced by U+FFFD.
    void string(std::string_view text);
    void flush();

private:
    // Written to the stream whenever full: writes of 64 KiB at most.
    static constexpr size_t kCapacity = size_t(1) << 16;
    static constexpr size_t kMaxDigits = 24; // of any integer, a sign, and micros' point and decimals

    // Inlined (GCC outlined it, and every memcpy of a literal became a call).
    [[gnu::always_inline]] void put(const char* text, size_t n)
    {
        if (kCapacity - m_size < n)
            return spill(text, n);
        std::memcpy(m_buf.get() + m_size, text, n);
        m_size += n;
    }
    [[gnu::always_inline]] void putChar(char c)
    {
        if (m_size == kCapacity)
            flush();
        m_buf[m_size++] = c;
    }
    void spill(const char* text, size_t n); // `text` does not fit in what is left

    std::ostream& m_out;
    std::unique_ptr<char[]> m_buf;
    size_t m_size = 0;
};

} // namespace kforge
