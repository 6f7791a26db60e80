// SPDX-License-Identifier: Apache-2.0
#pragma once
// Folders of shared libraries named by an environment variable (KFORGE_PROVIDER_PATH, KFORGE_OPS_PATH).
#include <functional>
#include <string>
#include <vector>

namespace kforge {

// Calls `load` on each *.so file in the ':'-separated folders of environment variable `variable`, folders in order,
// files sorted in each; a name that is not a folder adds a message to `errors` ("VARIABLE: 'x' is not a folder")
// where it comes.
void forEachLibraryInFolders(const char* variable, std::vector<std::string>& errors,
                             const std::function<void(const std::string&)>& load);

} // namespace kforge
