// SPDX-License-Identifier: Apache-2.0
// Loads op libraries with dlopen; what each registered is read from the dispatcher before and after.
#include <kforge/error.h>
#include <kforge/op_libraries.h>

#include "common/library_folders.h"

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>

namespace kforge {
namespace {

std::mutex& loaderMutex()
{
    static auto* m = new std::mutex();
    return *m;
}

std::vector<OpLibraryInfo>& loaded()
{
    static auto* l = new std::vector<OpLibraryInfo>();
    return *l;
}

std::set<std::string> registeredOps()
{
    std::set<std::string> ops;
    for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames())
        ops.insert(name.name);
    return ops;
}

// A library built as a Python extension (torchvision's _C.so) needs libtorch_python.so, which needs the Python
// runtime's symbols that a Python process provides and kforge does not: load both, globally, from where this
// process's LibTorch and the library's Python live. Returns what failed, "" when both are loaded.
std::string loadPythonRuntimeFor(const std::string& library)
{
    Dl_info torchLibrary{};
    // A function of libtorch_cpu.so (not inline: its address is in the library, not in ours).
    if (!dladdr(reinterpret_cast<const void*>(&at::get_num_threads), &torchLibrary) || !torchLibrary.dli_fname)
        return "cannot find this process's LibTorch";
    const std::filesystem::path torchLib = std::filesystem::path(torchLibrary.dli_fname).parent_path();
    // The library's Python version from its site-packages path ("lib/python3.11/site-packages"), else the usual ones.
    std::vector<std::string> versions;
    if (const auto at = library.find("/python3."); at != std::string::npos) {
        const auto end = library.find('/', at + 1);
        versions.push_back(library.substr(at + 1, end - at - 1));
    }
    for (const char* version : {"python3.13", "python3.12", "python3.11", "python3.10", "python3.9"})
        versions.emplace_back(version);
    bool python = false;
    for (const std::string& version : versions)
        if (dlopen(("lib" + version + ".so.1.0").c_str(), RTLD_NOW | RTLD_GLOBAL)) {
            python = true;
            break;
        }
    if (!python)
        return "no Python runtime library (lib" + versions.front() + ".so.1.0) to load";
    const std::string torchPython = (torchLib / "libtorch_python.so").string();
    if (!dlopen(torchPython.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
        const char* why = dlerror();
        return torchPython + ": " + (why ? why : "unknown dlopen error");
    }
    return {};
}

} // namespace

OpLibraryInfo loadOpLibrary(const std::string& path)
{
    const std::string where = "ops library '" + path + "'";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw Error(where, "file not found");
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error(where, "is not a regular file");
    const std::string canonical = std::filesystem::canonical(path, ec).string();
    std::lock_guard lock(loaderMutex());
    for (const OpLibraryInfo& info : loaded())
        if (info.path == canonical)
            return info;
    const std::set<std::string> before = registeredOps();
    // Kept for the process's life: the ops' kernels live in the library. Local symbols: it needs only LibTorch's.
    if (!dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        const char* error = dlerror();
        const std::string why = error ? error : "unknown dlopen error";
        if (why.find("libtorch_python.so") == std::string::npos)
            throw Error(where, "cannot be loaded: " + why);
        if (const std::string failed = loadPythonRuntimeFor(canonical); !failed.empty())
            throw Error(where,
                        "cannot be loaded: it is a Python extension that needs libtorch_python.so, and " + failed);
        if (!dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            const char* again = dlerror();
            throw Error(where, std::string("cannot be loaded: ") + (again ? again : "unknown dlopen error"));
        }
    }
    OpLibraryInfo info;
    info.path = canonical;
    for (const std::string& op : registeredOps())
        if (!before.count(op))
            info.ops.push_back(op);
    std::sort(info.ops.begin(), info.ops.end());
    info.ops.erase(std::unique(info.ops.begin(), info.ops.end()), info.ops.end());
    loaded().push_back(info);
    return info;
}

std::vector<OpLibraryInfo> loadOpLibrariesFromEnvironment(std::vector<std::string>& errors)
{
    std::vector<OpLibraryInfo> out;
    forEachLibraryInFolders("KFORGE_OPS_PATH", errors, [&](const std::string& library) {
        try {
            out.push_back(loadOpLibrary(library));
        } catch (const Error& e) {
            errors.emplace_back(e.what());
        }
    });
    return out;
}

std::vector<OpLibraryInfo> loadedOpLibraries()
{
    std::lock_guard lock(loaderMutex());
    return loaded();
}

} // namespace kforge
