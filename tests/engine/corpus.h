// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bad-input corpus (tests/data/bad-inputs, made by make_corpus.py): each folder's files and the
// expectation that tests/data/bad-inputs/<folder>/expected.json records for each of them.
#include "build_path.h"
#include <nlohmann/json.hpp>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace kforge::test {

inline std::filesystem::path corpusFolder(const std::string& folder)
{
    return std::filesystem::path(KFORGE_TEST_DATA) / "bad-inputs" / folder;
}

inline nlohmann::json corpusExpectations(const std::string& folder)
{
    std::ifstream in(corpusFolder(folder) / "expected.json");
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// The corpus files of `folder` (sorted; expected.json and hidden files left out).
inline std::vector<std::string> corpusFiles(const std::string& folder)
{
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& item : std::filesystem::directory_iterator(corpusFolder(folder), ec))
        if (item.is_regular_file() && item.path().filename() != "expected.json" &&
            item.path().filename().string()[0] != '.')
            names.push_back(item.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A message a user can read: one line of valid UTF-8 (it goes into JSON output and the GUI), no C++ backtrace
// ("Exception raised from", "frame #").
inline bool looksClean(const std::string& message)
{
    try {
        (void)nlohmann::json(message).dump(); // throws on invalid UTF-8
    } catch (const nlohmann::json::exception&) {
        return false;
    }
    return !message.empty() && message.find('\n') == std::string::npos &&
           message.find("Exception raised from") == std::string::npos && message.find("frame #") == std::string::npos;
}

} // namespace kforge::test
