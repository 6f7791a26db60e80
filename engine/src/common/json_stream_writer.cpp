// SPDX-License-Identifier: Apache-2.0
// The escaping half of JsonStreamWriter: strings and fixed-point microseconds.
#include "common/json_stream_writer.h"

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

} // namespace

void JsonStreamWriter::micros(std::int64_t ns)
{
    if (ns < 0) {
        m_buf.push_back('-');
        ns = -ns;
    }
    number(ns / 1000);
    const auto frac = static_cast<int>(ns % 1000);
    m_buf.push_back('.');
    m_buf.push_back(char('0' + frac / 100));
    m_buf.push_back(char('0' + frac / 10 % 10));
    m_buf.push_back(char('0' + frac % 10));
}

void JsonStreamWriter::string(std::string_view s)
{
    m_buf.push_back('"');
    static constexpr char kHex[] = "0123456789abcdef";
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
            case '"':
                m_buf.append("\\\"");
                break;
            case '\\':
                m_buf.append("\\\\");
                break;
            case '\n':
                m_buf.append("\\n");
                break;
            case '\r':
                m_buf.append("\\r");
                break;
            case '\t':
                m_buf.append("\\t");
                break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    m_buf.append("\\u00");
                    m_buf.push_back(kHex[c >> 4]);
                    m_buf.push_back(kHex[c & 15]);
                } else {
                    m_buf.push_back(char(c));
                }
            }
            ++i;
            continue;
        }
        const size_t n = utf8Length(s, i);
        if (n == 0) {
            m_buf.append("\\ufffd");
            ++i;
        } else {
            m_buf.append(s.substr(i, n));
            i += n;
        }
    }
    m_buf.push_back('"');
    maybeFlush();
}

void JsonStreamWriter::flush()
{
    if (!m_buf.empty()) {
        m_out.write(m_buf.data(), std::streamsize(m_buf.size()));
        m_buf.clear();
    }
}

} // namespace kforge
