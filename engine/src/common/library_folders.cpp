// SPDX-License-Identifier: Apache-2.0
#include "common/library_folders.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace kforge {

void forEachLibraryInFolders(const char* variable, std::vector<std::string>& errors,
                             const std::function<void(const std::string&)>& load)
{
    const char* env = std::getenv(variable);
    if (!env || !*env)
        return;
    std::stringstream folders(env);
    for (std::string folder; std::getline(folders, folder, ':');) {
        if (folder.empty())
            continue;
        std::error_code ec;
        if (!std::filesystem::is_directory(folder, ec)) {
            errors.push_back(std::string(variable) + ": '" + folder + "' is not a folder");
            continue;
        }
        std::vector<std::filesystem::path> libraries;
        for (const auto& file : std::filesystem::directory_iterator(folder, ec))
            if (file.path().extension() == ".so")
                libraries.push_back(file.path());
        std::sort(libraries.begin(), libraries.end());
        for (const auto& library : libraries)
            load(library.string());
    }
}

} // namespace kforge
