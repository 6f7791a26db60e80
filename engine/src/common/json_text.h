#pragma once
// Reading JSON files (plans, profiles): one parser, so every file reports syntax errors the same way.
#include <nlohmann/json.hpp>

#include <string>

namespace kforge {

inline constexpr int kMaxJsonDepth = 512; // deeper nesting is refused (see parseJsonText)

// Parses JSON text. kforge::Error(where, ...) on a syntax error ("malformed JSON at line L, column C: ..."), a
// number beyond a double, or nesting deeper than kMaxJsonDepth.
nlohmann::json parseJsonText(const std::string& text, const std::string& where);

} // namespace kforge
