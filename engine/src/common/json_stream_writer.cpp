// SPDX-License-Identifier: Apache-2.0
// The escaping half of JsonStreamWriter: strings and fixed-point microseconds.
#include "common/json_stream_writer.h"

#include <array>

namespace kforge {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (lead byte >= 0x80), 0 when ill-formed.
size_t utf8Length(std::string_view s, size_t i)
{
    const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
    const unsigned lead = b(0);
    const auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return b(k) >= lo && b(k) <= hi; };
    if (lead >= 0xc2 && lead <= 0xdf)
        return cont(1) ? 2 : 0;
    if (lead >= 0xe0 && lead <= 0xef) {
        const unsigned lo = lead == 0xe0 ? 0xa0 : 0x80, hi = lead == 0xed ? 0x9f : 0xbf;
        return cont(1, lo, hi) && cont(2) ? 3 : 0;
    }
    if (lead >= 0xf0 && lead <= 0xf4) {
        const unsigned lo = lead == 0xf0 ? 0x90 : 0x80, hi = lead == 0xf4 ? 0x8f : 0xbf;
        return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
    }
    return 0;
}

// Bytes a string cannot copy as they are: control characters, '"', '\\', DEL, and bytes from 0x80 (the UTF-8
// sequence they start is checked, and replaced by U+FFFD where ill-formed).
constexpr auto kEscaped = [] {
    std::array<bool, 256> escaped{};
    for (int c = 0; c < 256; ++c)
        escaped[size_t(c)] = c < 0x20 || c == '"' || c == '\\' || c >= 0x7f;
    return escaped;
}();

} // namespace

void JsonStreamWriter::micros(std::int64_t ns)
{
    if (kCapacity - m_size < kMaxDigits)
        flush();
    char* p = m_buf.get() + m_size;
    if (ns < 0) {
        *p++ = '-';
        ns = -ns;
    }
    p = std::to_chars(p, m_buf.get() + kCapacity, ns / 1000).ptr;
    const auto frac = static_cast<int>(ns % 1000);
    p[0] = '.';
    p[1] = char('0' + frac / 100);
    p[2] = char('0' + frac / 10 % 10);
    p[3] = char('0' + frac % 10);
    m_size = size_t(p + 4 - m_buf.get());
}

void JsonStreamWriter::string(std::string_view s)
{
    putChar('"');
    static constexpr char kHex[] = "0123456789abcdef";
    for (size_t i = 0; i < s.size();) {
        // Names are mostly printable ASCII: such a run is copied whole.
        size_t clean = i;
        while (clean < s.size() && !kEscaped[static_cast<unsigned char>(s[clean])])
            ++clean;
        if (clean > i) {
            put(s.data() + i, clean - i);
            i = clean;
            continue;
        }
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
            case '"':
                raw("\\\"");
                break;
            case '\\':
                raw("\\\\");
                break;
            case '\n':
                raw("\\n");
                break;
            case '\r':
                raw("\\r");
                break;
            case '\t':
                raw("\\t");
                break;
            default: // the other control characters and DEL
                const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
                put(escaped, sizeof escaped);
            }
            ++i;
            continue;
        }
        const size_t n = utf8Length(s, i);
        if (n == 0) {
            raw("\\ufffd");
            ++i;
        } else {
            put(s.data() + i, n);
            i += n;
        }
    }
    putChar('"');
}

void JsonStreamWriter::spill(const char* text, size_t n)
{
    flush();
    if (n >= kCapacity) {
        m_out.write(text, std::streamsize(n));
        return;
    }
    std::memcpy(m_buf.get(), text, n);
    m_size = n;
}

void JsonStreamWriter::flush()
{
    if (m_size > 0) {
        m_out.write(m_buf.get(), std::streamsize(m_size));
        m_size = 0;
    }
}

} // namespace kforge
