// SPDX-License-Identifier: Apache-2.0
// Loads op libraries with dlopen; what each registered is read from the dispatcher before and after.
#include <kforge/error.h>
#include <kforge/op_libraries.h>

#include "common/library_folders.h"

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
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

// The library loaded in a child process first: its static initialisers run there, and one that throws (a second
// TORCH_LIBRARY for a namespace already registered: two builds of one library) ends that process, not this one, whose
// dlopen could not catch it (the exception crosses the dynamic loader: std::terminate). Returns why it cannot be
// loaded ("" when the child loaded it, or could not tell: dlopen's own errors are reported by the real load).
std::string probeLoad(const std::string& canonical)
{
    int out[2];
    if (pipe(out) != 0)
        return {};
    const pid_t child = fork();
    if (child < 0) {
        close(out[0]);
        close(out[1]);
        return {};
    }
    if (child == 0) { // dlopen here, then _exit: nothing of the parent's runs on (no destructor, no caller)
        dup2(out[1], STDERR_FILENO);
        close(out[0]);
        try {
            if (!dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL)) {
                const char* why = dlerror();
                if (why && std::strstr(why, "libtorch_python.so") && loadPythonRuntimeFor(canonical).empty())
                    dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
            }
        } catch (const std::exception& e) { // a static initialiser threw, and the loader let it through
            const std::string said = std::string("what():  ") + e.what() + "\n";
            [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, said.data(), said.size());
            _exit(1);
        } catch (...) {
            _exit(1);
        }
        _exit(0);
    }
    close(out[1]);
    std::string said;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int status = 0;
    for (;;) {
        pollfd readable{out[0], POLLIN, 0};
        if (poll(&readable, 1, 100) > 0) {
            char buffer[4096];
            const ssize_t n = read(out[0], buffer, sizeof buffer);
            if (n > 0 && said.size() < (std::size_t(1) << 16))
                said.append(buffer, size_t(n));
        }
        const pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child)
            break;
        if (std::chrono::steady_clock::now() > deadline) { // a loader lock another thread held at fork: no verdict
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            close(out[0]);
            return {};
        }
    }
    close(out[0]);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return {};
    // The c10::Error's message, as std::terminate printed it: "what():  Only a single TORCH_LIBRARY ..."
    std::string why = said;
    if (const auto what = why.find("what():"); what != std::string::npos)
        why = why.substr(what + 7);
    if (const auto end = why.find("\nException raised from"); end != std::string::npos)
        why = why.substr(0, end);
    const auto first = why.find_first_not_of(" \n");
    why = first == std::string::npos ? std::string() : why.substr(first);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' '))
        why.pop_back();
    const std::string how = WIFSIGNALED(status) ? "ended with signal " + std::to_string(WTERMSIG(status))
                                                : "exited with status " + std::to_string(WEXITSTATUS(status));
    return "loading it " + how + (why.empty() ? "" : ": " + why);
}

// Which op library already loaded registers a namespace the refused one names in its error ("... the namespace
// kforge_test ..."), for the message.
std::string sameNamespaceLibrary(const std::string& why)
{
    for (const OpLibraryInfo& info : loaded())
        for (const std::string& op : info.ops) {
            const std::string ns = op.substr(0, op.find("::"));
            if (why.find("namespace " + ns) != std::string::npos)
                return info.path;
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
    if (const std::string refused = probeLoad(canonical); !refused.empty()) {
        const std::string other = sameNamespaceLibrary(refused);
        throw Error(where, "refused: " + refused +
                               (other.empty() ? std::string()
                                              : " (its ops' namespace is registered already, by '" + other +
                                                    "': two builds of one library cannot both be loaded; keep one)"));
    }
    const std::set<std::string> before = registeredOps();
    // Kept for the process's life: the ops' kernels live in the library. Local symbols: it needs only LibTorch's.
    void* handle = nullptr;
    try { // what the probe could not tell (it timed out): a static initialiser's throw, if the loader lets it through
        handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
    } catch (const std::exception& e) {
        throw Error(where, std::string("cannot be loaded: a static initialiser threw: ") + e.what());
    }
    if (!handle) {
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
