// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading JSON files (plans, profiles): one parser, so every file reports syntax errors the same way.
#include <nlohmann/json.hpp>

#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace kforge {

inline constexpr int kMaxJsonDepth = 512; // deeper nesting is refused (see parseJsonText)

// Parses JSON text. kforge::Error(where, ...) on a syntax error ("malformed JSON at line L, column C: ..."), a
// number beyond a double, or nesting deeper than kMaxJsonDepth.
nlohmann::json parseJsonText(const std::string& text, const std::string& where);

// A value's JSON type for messages: "an object", "an array", "a string", "a boolean", "an integer", "a number", "null".
std::string jsonTypeName(const nlohmann::json& value);

// One step from a container to a value in it: the key in an object, or the position in an array.
struct JsonStep {
    std::string_view key; // empty in an array
    std::size_t index = 0;
};
// An array or object the parser has just finished reading.
struct ClosedJsonContainer {
    std::span<const JsonStep> path;              // from the root to the value
    std::span<nlohmann::json* const> containers; // the containers holding it, the root first
    nlohmann::json& value;
};
// Returns true when it has taken the value: the value is then left out of the document. Lets a reader turn the
// rows of a large table into records as they are read, instead of holding a DOM of every cell.
using JsonContainerSink = std::function<bool(const ClosedJsonContainer&)>;

// parseJsonText that hands each array and object to `sink` as soon as it is complete.
nlohmann::json parseJsonText(const std::string& text, const std::string& where, const JsonContainerSink& sink);

} // namespace kforge
