// SPDX-License-Identifier: Apache-2.0
#pragma once
// Module paths as named_modules() spells them: "" is the root, "encoder.layers.0" is child "0" of "encoder.layers".
// The one place that knows the spelling: parents, leaves, containment and the name shown for the root.

#include <string>
#include <string_view>
#include <vector>

namespace kforge::module_path {

// What the root is called where a path is shown to a user.
inline constexpr std::string_view kRootName = "(root)";

// "encoder.layers.0" -> "encoder.layers"; a top-level module's parent and the root's are the root ("").
inline std::string_view parentOf(std::string_view path)
{
    const auto dot = path.rfind('.');
    return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

// "encoder.layers.0" -> "0"; the root's leaf is "".
inline std::string_view leafOf(std::string_view path)
{
    const auto dot = path.rfind('.');
    return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

// 0 for the root, 1 for its children, ...
inline int depthOf(std::string_view path)
{
    if (path.empty())
        return 0;
    int depth = 1;
    for (const char c : path)
        depth += c == '.';
    return depth;
}

// Strictly below `scope`: "a.b" is below "a" and below the root, "ab" is not below "a", nothing is below itself.
inline bool isBelow(std::string_view path, std::string_view scope)
{
    if (scope.empty())
        return !path.empty();
    return path.size() > scope.size() && path.substr(0, scope.size()) == scope && path[scope.size()] == '.';
}

// `scope` itself or below it: what a plan entry scoped to `scope` covers.
inline bool isWithin(std::string_view path, std::string_view scope) { return path == scope || isBelow(path, scope); }

// The modules above `path`, nearest first, ending with the root: "a.b.c" -> "a.b", "a", "". None for the root.
inline std::vector<std::string_view> ancestorsOf(std::string_view path)
{
    std::vector<std::string_view> above;
    while (!path.empty()) {
        path = parentOf(path);
        above.push_back(path);
    }
    return above;
}

// The path as shown to a user: kRootName for the root.
inline std::string displayName(std::string_view path) { return std::string(path.empty() ? kRootName : path); }

} // namespace kforge::module_path
