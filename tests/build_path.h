// SPDX-License-Identifier: Apache-2.0
#pragma once
// Paths the tests and benchmarks need (test data, the kforge binary, plugins) are compiled in relative to the build
// folder and made absolute when they run: an absolute path in a compile definition would make every object differ
// between two clones, and ccache could not reuse one clone's objects for the other (KForgeTestPaths.cmake).
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>

#include <unistd.h>

// The absolute path of `relative`, a path relative to the build folder: the parent of the folder holding the
// running program (build/bin). The returned string lives as long as the program.
inline const char* kforgeBuildPath(const char* relative)
{
    static const std::string build = [] {
        char exe[PATH_MAX];
        const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) {
            std::fprintf(stderr, "kforgeBuildPath: cannot read /proc/self/exe\n");
            std::abort();
        }
        std::string path(exe, size_t(n));
        path.erase(path.rfind('/')); // build/bin
        path.erase(path.rfind('/')); // build
        return path;
    }();
    static std::mutex mutex;
    static std::deque<std::string> paths; // stable addresses
    std::lock_guard lock(mutex);
    paths.push_back(build + "/" + relative);
    return paths.back().c_str();
}
