// SPDX-License-Identifier: Apache-2.0
#pragma once
// The corpus cache scripts/corpus_export.py writes, for the benchmark programs that run real models: KFORGE_CORPUS_DIR,
// else the newest corpus-* folder under KFORGE_CACHE (default ~/.cache/kforge). Empty when there is none.
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace kforge_bench {

inline std::filesystem::path defaultCorpus()
{
    namespace fs = std::filesystem;
    if (const char* dir = std::getenv("KFORGE_CORPUS_DIR"))
        return dir;
    const char* cache = std::getenv("KFORGE_CACHE");
    const fs::path root =
        cache ? fs::path(cache) : fs::path(std::getenv("HOME") ? std::getenv("HOME") : "") / ".cache/kforge";
    fs::path best;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root, ec))
        if (entry.path().filename().string().rfind("corpus-", 0) == 0 && entry.path() > best)
            best = entry.path();
    return best;
}

} // namespace kforge_bench
