// SPDX-License-Identifier: Apache-2.0
// NVRTC compilation of the embedded kernels, the on-disk cache of compiled images, and loading through the CUDA
// runtime's library API (cudaLibraryLoadData / cudaLibraryGetKernel: no driver API to link). Built without the
// CUDA toolkit, this file is empty.
#ifdef KFORGE_WITH_CUDA
#include "providers/cuda/runtime_kernels.h"

#include "common/sha256.h"

#include <kforge/atomic_file.h>
#include <kforge/error.h>

#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace kforge::cuda_kernels {
namespace {

constexpr char kCacheMagic[] = "KFKERNEL 1\n";

std::string where(const std::string& nameExpression) { return "NVRTC kernel '" + nameExpression + "'"; }

void checkNvrtc(nvrtcResult result, const std::string& nameExpression, const char* step)
{
    if (result != NVRTC_SUCCESS)
        throw Error(where(nameExpression), std::string(step) + " failed: " + nvrtcGetErrorString(result));
}

std::string nvrtcVersionText()
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return std::to_string(major) + "." + std::to_string(minor);
}

// The NVRTC option that targets `computeCapability`: a cubin for it when this NVRTC knows the architecture,
// else PTX for the newest one it knows below it (the driver compiles PTX for newer GPUs); empty when none.
struct ArchChoice {
    std::string option;
    bool cubin = true;
};

ArchChoice archFor(int computeCapability)
{
    int count = 0;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0)
        return {};
    std::vector<int> archs(static_cast<std::size_t>(count));
    nvrtcGetSupportedArchs(archs.data());
    if (std::find(archs.begin(), archs.end(), computeCapability) != archs.end())
        return {"--gpu-architecture=sm_" + std::to_string(computeCapability), true};
    int best = 0;
    for (int a : archs)
        if (a < computeCapability)
            best = std::max(best, a);
    if (best == 0)
        return {};
    return {"--gpu-architecture=compute_" + std::to_string(best), false};
}

std::string programLog(nvrtcProgram program)
{
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1)
        return {};
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    log.resize(size - 1);
    return log;
}

CompiledKernel compileWithNvrtc(const std::string& nameExpression, const ArchChoice& arch)
{
    nvrtcProgram raw = nullptr;
    checkNvrtc(nvrtcCreateProgram(&raw, kDeviceSource, "row_kernels_device.cuh", 0, nullptr, nullptr), nameExpression,
               "nvrtcCreateProgram");
    const std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> program(
        &raw, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
    checkNvrtc(nvrtcAddNameExpression(raw, nameExpression.c_str()), nameExpression, "nvrtcAddNameExpression");
    const char* options[] = {arch.option.c_str(), "-std=c++17"};
    if (nvrtcCompileProgram(raw, int(std::size(options)), options) != NVRTC_SUCCESS)
        throw Error(where(nameExpression), "compilation failed (" + arch.option + "):\n" + programLog(raw));
    CompiledKernel out;
    const char* lowered = nullptr;
    checkNvrtc(nvrtcGetLoweredName(raw, nameExpression.c_str(), &lowered), nameExpression, "nvrtcGetLoweredName");
    out.loweredName = lowered;
    std::size_t size = 0;
    if (arch.cubin) {
        checkNvrtc(nvrtcGetCUBINSize(raw, &size), nameExpression, "nvrtcGetCUBINSize");
        out.image.resize(size);
        checkNvrtc(nvrtcGetCUBIN(raw, out.image.data()), nameExpression, "nvrtcGetCUBIN");
    } else {
        checkNvrtc(nvrtcGetPTXSize(raw, &size), nameExpression, "nvrtcGetPTXSize");
        out.image.resize(size);
        checkNvrtc(nvrtcGetPTX(raw, out.image.data()), nameExpression, "nvrtcGetPTX");
        if (!out.image.empty() && out.image.back() == '\0')
            out.image.pop_back(); // std::string keeps the terminator PTX loading needs
    }
    return out;
}

// A cache file: the magic line, the lowered name, then the image. False when it is missing or malformed.
bool readCacheEntry(const std::string& path, CompiledKernel& out)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string magic = kCacheMagic;
    if (bytes.compare(0, magic.size(), magic) != 0)
        return false;
    const std::size_t nameEnd = bytes.find('\n', magic.size());
    if (nameEnd == std::string::npos || nameEnd == magic.size() || nameEnd + 1 >= bytes.size())
        return false;
    out.loweredName = bytes.substr(magic.size(), nameEnd - magic.size());
    out.image = bytes.substr(nameEnd + 1);
    return true;
}

void writeCacheEntry(const std::string& path, const CompiledKernel& kernel)
{
    try {
        std::error_code ignored;
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
        writeFileAtomically(path, kCacheMagic + kernel.loweredName + "\n" + kernel.image);
    } catch (const Error&) {
        // A read-only or full cache costs the next run a compilation, nothing else.
    }
}

CompiledKernel compile(const std::string& nameExpression, const TargetDevice& target, const std::string& cacheDir,
                       bool readCache)
{
    const ArchChoice arch = archFor(target.computeCapability);
    if (arch.option.empty())
        throw Error(where(nameExpression), "NVRTC " + nvrtcVersionText() + " targets no architecture at or below sm_" +
                                               std::to_string(target.computeCapability));
    static const std::string sourceDigest = sha256Hex(kDeviceSource);
    const std::string key = "kforge kernel cache 1\n" + sourceDigest + "\n" + nameExpression + "\n" + arch.option +
                            " -std=c++17\nNVRTC " + nvrtcVersionText() + "\n" + target.identity;
    const std::string path = (std::filesystem::path(cacheDir) / (sha256Hex(key) + ".kernel")).string();
    CompiledKernel out;
    if (readCache && readCacheEntry(path, out)) {
        out.fromCache = true;
        out.cachePath = path;
        return out;
    }
    out = compileWithNvrtc(nameExpression, arch);
    writeCacheEntry(path, out);
    out.cachePath = path;
    return out;
}

void checkCuda(cudaError_t status, const std::string& nameExpression, const char* step)
{
    if (status != cudaSuccess)
        throw Error(where(nameExpression), std::string(step) + " failed: " + cudaGetErrorString(status));
}

TargetDevice currentTarget(int device)
{
    cudaDeviceProp properties{};
    checkCuda(cudaGetDeviceProperties(&properties, device), "the current device", "cudaGetDeviceProperties");
    int driver = 0;
    cudaDriverGetVersion(&driver);
    TargetDevice target;
    target.computeCapability = properties.major * 10 + properties.minor;
    target.identity = std::string(properties.name) + ", sm_" + std::to_string(target.computeCapability) + ", driver " +
                      std::to_string(driver);
    return target;
}

cudaKernel_t load(const CompiledKernel& compiled, const std::string& nameExpression, cudaError_t& status)
{
    cudaLibrary_t library = nullptr;
    status = cudaLibraryLoadData(&library, compiled.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (status != cudaSuccess)
        return nullptr;
    cudaKernel_t kernel = nullptr;
    status = cudaLibraryGetKernel(&kernel, library, compiled.loweredName.c_str());
    if (status != cudaSuccess) {
        cudaLibraryUnload(library);
        return nullptr;
    }
    return kernel; // the library stays loaded: kernels are kept for the life of the process
}

} // namespace

std::string kernelCacheDir()
{
    if (const char* dir = std::getenv("KFORGE_KERNEL_CACHE"); dir && *dir)
        return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return (std::filesystem::path(xdg) / "kforge" / "kernels").string();
    const char* home = std::getenv("HOME");
    return (std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "kforge" / "kernels").string();
}

CompiledKernel compileKernel(const std::string& nameExpression, const TargetDevice& target, const std::string& cacheDir)
{
    return compile(nameExpression, target, cacheDir, true);
}

cudaKernel_t runtimeKernel(const std::string& nameExpression)
{
    int device = 0;
    checkCuda(cudaGetDevice(&device), nameExpression, "cudaGetDevice");
    static std::mutex mutex;
    static std::map<std::pair<int, std::string>, cudaKernel_t> loaded;
    {
        const std::lock_guard lock(mutex);
        if (const auto it = loaded.find({device, nameExpression}); it != loaded.end())
            return it->second;
    }
    // Compiled outside the lock: other kernels keep launching meanwhile. Two threads may compile the same
    // variant once each; the second insert is dropped.
    const TargetDevice target = currentTarget(device);
    const std::string dir = kernelCacheDir();
    CompiledKernel compiled = compile(nameExpression, target, dir, true);
    cudaError_t status = cudaSuccess;
    cudaKernel_t kernel = load(compiled, nameExpression, status);
    if (!kernel && compiled.fromCache) { // a damaged or foreign entry: compile afresh and replace it
        compiled = compile(nameExpression, target, dir, false);
        kernel = load(compiled, nameExpression, status);
    }
    checkCuda(status, nameExpression, "loading the compiled kernel");
    const std::lock_guard lock(mutex);
    return loaded.emplace(std::make_pair(device, nameExpression), kernel).first->second;
}

} // namespace kforge::cuda_kernels
#endif
