// JSON text to a DOM with errors that name the file, line and column, and a nesting limit.
#include "common/json_text.h"

#include <kforge/error.h>

#include <algorithm>
#include <string_view>

namespace kforge {

namespace {

// nlohmann's DOM builder refusing nesting deeper than kMaxJsonDepth as it reads: writing, copying and comparing
// JSON values recurse once per level, so a hostile file nested 100,000 deep would overflow the stack long after
// it was read. Plans and profiles are a few levels deep. (nlohmann's parse callback could check the depth too, but it
// costs quadratic time on long arrays: minutes for a 100,000-entry plan.)
class DepthLimitedDomParser : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
public:
    DepthLimitedDomParser(nlohmann::json& root, const std::string& where) : json_sax_dom_parser(root), m_where(where) {}
    bool start_object(std::size_t size)
    {
        enter();
        return json_sax_dom_parser::start_object(size);
    }
    bool end_object()
    {
        --m_depth;
        return json_sax_dom_parser::end_object();
    }
    bool start_array(std::size_t size)
    {
        enter();
        return json_sax_dom_parser::start_array(size);
    }
    bool end_array()
    {
        --m_depth;
        return json_sax_dom_parser::end_array();
    }

private:
    void enter()
    {
        if (++m_depth > kMaxJsonDepth)
            throw Error(m_where, "JSON nesting deeper than " + std::to_string(kMaxJsonDepth) +
                                     " levels; kforge files need a few");
    }
    const std::string& m_where;
    int m_depth = 0;
};

} // namespace

namespace {

// nlohmann's message without its "[json.exception.KIND.N] " prefix.
std::string jsonErrorDetail(const nlohmann::json::exception& e)
{
    const std::string what = e.what();
    const auto bracket = what.find("] ");
    return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

} // namespace

nlohmann::json parseJsonText(const std::string& text, const std::string& where)
{
    try {
        nlohmann::json root;
        DepthLimitedDomParser builder(root, where);
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

} // namespace kforge
