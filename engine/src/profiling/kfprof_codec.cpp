// SPDX-License-Identifier: Apache-2.0
#include "profiling/kfprof_codec.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace kforge::kfprof {
namespace {

const char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

} // namespace

std::string encodeFloats(const std::vector<float>& values)
{
    std::string bytes;
    bytes.reserve(values.size() * 4);
    for (float f : values) {
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        for (int i = 0; i < 4; ++i)
            bytes.push_back(char((u >> (8 * i)) & 0xff));
    }
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const std::uint32_t b0 = std::uint8_t(bytes[i]);
        const std::uint32_t b1 = i + 1 < bytes.size() ? std::uint8_t(bytes[i + 1]) : 0;
        const std::uint32_t b2 = i + 2 < bytes.size() ? std::uint8_t(bytes[i + 2]) : 0;
        const std::uint32_t v = (b0 << 16) | (b1 << 8) | b2;
        out.push_back(kBase64[(v >> 18) & 63]);
        out.push_back(kBase64[(v >> 12) & 63]);
        out.push_back(i + 1 < bytes.size() ? kBase64[(v >> 6) & 63] : '=');
        out.push_back(i + 2 < bytes.size() ? kBase64[v & 63] : '=');
    }
    return out;
}

bool decodeFloats(const std::string& text, std::vector<float>& values)
{
    int map[256];
    std::fill(std::begin(map), std::end(map), -1);
    for (int i = 0; i < 64; ++i)
        map[std::uint8_t(kBase64[i])] = i;
    if (text.size() % 4 != 0)
        return false;
    std::string bytes;
    bytes.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        std::uint32_t v = 0;
        int pad = 0;
        for (size_t k = 0; k < 4; ++k) {
            const char c = text[i + k];
            if (c == '=' && i + 4 == text.size() && k >= 2) {
                ++pad;
                v <<= 6;
                continue;
            }
            if (pad || map[std::uint8_t(c)] < 0)
                return false;
            v = (v << 6) | std::uint32_t(map[std::uint8_t(c)]);
        }
        bytes.push_back(char((v >> 16) & 0xff));
        if (pad < 2)
            bytes.push_back(char((v >> 8) & 0xff));
        if (pad < 1)
            bytes.push_back(char(v & 0xff));
    }
    if (bytes.size() % 4 != 0)
        return false;
    values.resize(bytes.size() / 4);
    for (size_t i = 0; i < values.size(); ++i) {
        std::uint32_t u = 0;
        for (int k = 0; k < 4; ++k)
            u |= std::uint32_t(std::uint8_t(bytes[4 * i + size_t(k)])) << (8 * k);
        std::memcpy(&values[i], &u, 4);
    }
    return true;
}

} // namespace kforge::kfprof
