// SPDX-License-Identifier: Apache-2.0
// JSON text to a DOM with errors that name the file, line and column, and a nesting limit.
#include "common/json_text.h"

#include <kforge/error.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

namespace kforge {

namespace {

// A DOM builder on nlohmann's public SAX interface that refuses nesting deeper than kMaxJsonDepth as it reads:
// writing, copying and comparing JSON values recurse once per level, so a hostile file nested 100,000 deep would
// overflow the stack long after it was read. Plans and profiles are a few levels deep. (nlohmann's parse callback
// could check the depth too, but it costs quadratic time on long arrays: minutes for a 100,000-entry plan.)
class DepthLimitedDomBuilder final : public nlohmann::json_sax<nlohmann::json> {
public:
    using json = nlohmann::json;
    DepthLimitedDomBuilder(json& root, const std::string& where, const JsonContainerSink& sink)
        : m_root(root), m_where(where), m_sink(sink)
    {
    }

    bool null() override { return place(nullptr) != nullptr; }
    bool boolean(bool value) override { return place(value) != nullptr; }
    bool number_integer(number_integer_t value) override { return place(value) != nullptr; }
    bool number_unsigned(number_unsigned_t value) override { return place(value) != nullptr; }
    bool number_float(number_float_t value, const string_t&) override { return place(value) != nullptr; }
    bool string(string_t& value) override { return place(std::move(value)) != nullptr; }
    bool binary(binary_t& value) override { return place(json::binary(std::move(value))) != nullptr; }
    bool start_object(std::size_t) override { return open(json::object()); }
    bool key(string_t& name) override
    {
        // Like nlohmann's own DOM parser: a repeated key keeps its last value.
        m_key = name;
        m_slot = &(*m_open.back())[name];
        return true;
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(json::array()); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string&, const json::exception& error) override
    {
        // Rethrown as the concrete kind, which parseJsonText reports with its position.
        if (const auto* syntax = dynamic_cast<const json::parse_error*>(&error))
            throw *syntax;
        if (const auto* range = dynamic_cast<const json::out_of_range*>(&error))
            throw *range;
        throw Error(m_where, std::string("malformed JSON: ") + error.what());
    }

private:
    // Stores a value where the document is at: the root, the next array element, or the last key's slot.
    template <class Value> json* place(Value&& value)
    {
        if (m_open.empty()) {
            m_root = json(std::forward<Value>(value));
            return &m_root;
        }
        json& parent = *m_open.back();
        ++m_counts.back();
        if (parent.is_array()) {
            parent.emplace_back(std::forward<Value>(value));
            return &parent.back();
        }
        *m_slot = json(std::forward<Value>(value));
        return m_slot;
    }
    bool open(json&& container)
    {
        if (int(m_open.size()) >= kMaxJsonDepth)
            throw Error(m_where, "JSON nesting deeper than " + std::to_string(kMaxJsonDepth) +
                                     " levels; kforge files need a few");
        if (m_sink && !m_open.empty()) {
            const bool inArray = m_open.back()->is_array();
            m_keys.push_back(inArray ? std::string() : m_key);
            m_path.push_back({{}, inArray ? m_counts.back() : 0});
        }
        json* placed = place(std::move(container));
        m_open.push_back(placed);
        m_counts.push_back(0);
        return true;
    }
    bool close()
    {
        json* closed = m_open.back();
        m_open.pop_back();
        m_counts.pop_back();
        if (m_sink && !m_open.empty()) {
            for (std::size_t i = 0; i < m_path.size(); ++i)
                m_path[i].key = m_keys[i]; // the strings may have moved as m_keys grew
            if (m_sink({m_path, m_open, *closed}))
                drop(closed);
            m_path.pop_back();
            m_keys.pop_back();
        }
        return true;
    }
    // Leaves a value the sink took out of the document (its position still counts for the next one's path).
    void drop(json* taken)
    {
        json& parent = *m_open.back();
        if (parent.is_array())
            parent.erase(parent.size() - 1);
        else
            *taken = nullptr;
    }

    json& m_root;
    const std::string& m_where;
    const JsonContainerSink& m_sink;
    std::vector<json*> m_open;         // the containers being filled, outermost first
    std::vector<std::size_t> m_counts; // values placed in each so far
    std::vector<JsonStep> m_path;      // with a sink: the steps to each open container but the root
    std::vector<std::string> m_keys;   // the keys m_path points into
    std::string m_key;                 // the object key read last
    json* m_slot = nullptr;            // its value
};

// nlohmann's message without its "[json.exception.KIND.N] " prefix.
// nlohmann quotes the whole token it was reading ("last read: '...'"): a cut or corrupted string of base64 values
// is tens of kilobytes. Its end, where the reading stopped, is what locates the fault.
std::string shortenLastRead(std::string detail)
{
    constexpr std::string_view kLastRead = "last read: '";
    constexpr size_t kKept = 40;
    const size_t start = detail.find(kLastRead);
    if (start == std::string::npos)
        return detail;
    const size_t tokenStart = start + kLastRead.size();
    const size_t tokenEnd = detail.size() - (detail.back() == '\'' ? 1 : 0);
    if (tokenEnd < tokenStart + kKept + 8)
        return detail;
    size_t keepFrom = tokenEnd - kKept;
    while (keepFrom < tokenEnd && (static_cast<unsigned char>(detail[keepFrom]) & 0xC0) == 0x80)
        ++keepFrom; // not inside a UTF-8 character
    const size_t dropped = keepFrom - tokenStart;
    return detail.substr(0, tokenStart) + "[" + std::to_string(dropped) + " characters]..." + detail.substr(keepFrom);
}

std::string jsonErrorDetail(const nlohmann::json::exception& e)
{
    const std::string what = e.what();
    const auto bracket = what.find("] ");
    return shortenLastRead(bracket == std::string::npos ? what : what.substr(bracket + 2));
}

} // namespace

nlohmann::json parseJsonText(const std::string& text, const std::string& where)
{
    return parseJsonText(text, where, JsonContainerSink());
}

nlohmann::json parseJsonText(const std::string& text, const std::string& where, const JsonContainerSink& sink)
{
    // nlohmann's lexer takes a NUL byte for the end of the input and would ignore whatever follows it.
    if (const size_t nul = text.find('\0'); nul != std::string::npos) {
        const size_t lineStart = text.rfind('\n', nul) == std::string::npos ? 0 : text.rfind('\n', nul) + 1;
        const size_t line = size_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(nul), '\n')) + 1;
        throw Error(where, "malformed JSON at line " + std::to_string(line) + ", column " +
                               std::to_string(nul - lineStart + 1) + ": a NUL byte (JSON is text; the file holds " +
                               std::to_string(text.size() - nul - 1) + " more byte(s) after it)");
    }
    try {
        nlohmann::json root;
        DepthLimitedDomBuilder builder(root, where, sink);
        nlohmann::json::sax_parse(text, &builder);
        return root;
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is 1-based: the position of the last character read (size + 1 at an unexpected end).
        size_t index = std::min(e.byte == 0 ? size_t(0) : size_t(e.byte - 1), text.size());
        // An unexpected string is read whole before it is refused: point at its opening quote instead.
        if (index < text.size() && text[index] == '"' &&
            std::string_view(e.what()).find("unexpected string") != std::string_view::npos) {
            for (size_t i = index; i-- > 0;) {
                size_t backslashes = 0;
                while (backslashes < i && text[i - 1 - backslashes] == '\\')
                    ++backslashes;
                if (text[i] == '"' && backslashes % 2 == 0) {
                    index = i;
                    break;
                }
            }
        }
        size_t line = 1, lineStart = 0;
        for (size_t i = 0; i < index; ++i)
            if (text[i] == '\n') {
                ++line;
                lineStart = i + 1;
            }
        const size_t column = index - lineStart + 1;
        // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 2: <detail>".
        std::string detail = e.what();
        const auto column_at = detail.find("column ");
        const auto colon = column_at == std::string::npos ? std::string::npos : detail.find(": ", column_at);
        if (colon != std::string::npos)
            detail = detail.substr(colon + 2);
        else if (const auto bracket = detail.find("] "); bracket != std::string::npos)
            detail = detail.substr(bracket + 2);
        detail = shortenLastRead(std::move(detail));
        // The detail quotes the bytes last read, which may be invalid UTF-8: replace those (U+FFFD), so that the
        // message itself can go into JSON output and the GUI.
        detail =
            nlohmann::json::parse(nlohmann::json(detail).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                .get<std::string>();
        throw Error(where, "malformed JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
                               ": " + detail);
    } catch (const nlohmann::json::out_of_range& e) {
        // A number beyond a double ("1e999") is refused as out_of_range, not as a parse error.
        throw Error(where, "malformed JSON: " + jsonErrorDetail(e));
    }
}

std::string jsonTypeName(const nlohmann::json& value)
{
    switch (value.type()) {
    case nlohmann::json::value_t::null:
        return "null";
    case nlohmann::json::value_t::object:
        return "an object";
    case nlohmann::json::value_t::array:
        return "an array";
    case nlohmann::json::value_t::string:
        return "a string";
    case nlohmann::json::value_t::boolean:
        return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
        return "an integer";
    case nlohmann::json::value_t::number_float:
        return "a number";
    default:
        return "binary data";
    }
}

} // namespace kforge
