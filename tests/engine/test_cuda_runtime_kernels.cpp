// SPDX-License-Identifier: Apache-2.0
// Kernels compiled at run time (engine/src/providers/cuda/runtime_kernels.h): NVRTC needs no GPU, so compilation,
// the on-disk cache and its keys are checked on every machine with the CUDA toolkit; loading and launching are
// covered by the tuned-provider tests in test_cuda_providers.cpp, which need a device.
#include "test_helpers.h"

#include <kforge/error.h>

#include <gtest/gtest.h>

#ifdef KFORGE_WITH_CUDA
#include "providers/cuda/runtime_kernels.h"
#include "providers/cuda/tuned_kernels.h"

#include <elf.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace kforge;
namespace ck = kforge::cuda_kernels;

namespace {

const ck::TargetDevice kHopper{90, "test: an sm_90 device"};

std::string fileBytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool isElf(const std::string& image)
{
    return image.size() > 4 && image.compare(0, 4,
                                             "\x7f"
                                             "ELF") == 0;
}

// The registers per thread a cubin gives `kernel` (its lowered name): the EIATTR_REGCOUNT attribute of the
// cubin's .nv.info section, [format 0x04, attribute 0x2f, size 8: symbol index, registers]; none when not found.
std::optional<unsigned> registersPerThread(const std::string& image, const std::string& kernel)
{
    const auto at = [&](std::size_t offset, auto& value) {
        if (offset + sizeof(value) > image.size())
            return false;
        std::memcpy(&value, image.data() + offset, sizeof(value));
        return true;
    };
    Elf64_Ehdr header{};
    if (!at(0, header))
        return std::nullopt;
    std::vector<Elf64_Shdr> sections(header.e_shnum);
    for (std::size_t i = 0; i < sections.size(); ++i)
        if (!at(header.e_shoff + i * header.e_shentsize, sections[i]))
            return std::nullopt;
    const auto name = [&](const Elf64_Shdr& strings, std::uint32_t offset) {
        return std::string(image.c_str() + strings.sh_offset + offset);
    };
    const Elf64_Shdr* symbols = nullptr;
    const Elf64_Shdr* info = nullptr;
    for (const Elf64_Shdr& section : sections) {
        const std::string n = name(sections.at(header.e_shstrndx), section.sh_name);
        if (section.sh_type == SHT_SYMTAB)
            symbols = &section;
        else if (n == ".nv.info")
            info = &section;
    }
    if (!symbols || !info)
        return std::nullopt;
    std::optional<std::uint32_t> symbol;
    for (std::uint32_t i = 0; i * sizeof(Elf64_Sym) < symbols->sh_size && !symbol; ++i) {
        Elf64_Sym entry{};
        if (at(symbols->sh_offset + i * sizeof(Elf64_Sym), entry) &&
            name(sections.at(symbols->sh_link), entry.st_name) == kernel)
            symbol = i;
    }
    for (std::size_t offset = info->sh_offset; symbol && offset + 4 <= info->sh_offset + info->sh_size;) {
        const auto format = std::uint8_t(image[offset]), attribute = std::uint8_t(image[offset + 1]);
        std::uint16_t size = 0;
        at(offset + 2, size);
        std::uint32_t index = 0, value = 0;
        if (format == 0x04 && attribute == 0x2f && at(offset + 4, index) && at(offset + 8, value) && index == *symbol)
            return value;
        offset += 4 + (format == 0x04 ? size : 0);
    }
    return std::nullopt;
}

// Sets an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : m_name(name)
    {
        if (const char* old = std::getenv(name))
            m_old = old;
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv()
    {
        if (m_old)
            setenv(m_name, m_old->c_str(), 1);
        else
            unsetenv(m_name);
    }

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

} // namespace

TEST(CudaRuntimeKernels, EveryKernelFamilyCompilesForHopperWithoutADevice)
{
    test::TempDir dir;
    const std::vector<std::string> names{
        ck::layerNormKernelName(ck::DType::BFloat16, ck::DType::Float32, 8, 2, 768, 1024),
        ck::layerNormKernelName(ck::DType::Float32, ck::DType::Float32, 4, 1, 0, 512),
        ck::rmsNormKernelName(ck::DType::Float16, 8, 4, 0, 1024),
        ck::softmaxKernelName(ck::DType::BFloat16, ck::DType::Float32, 8, 8, 1024, 256),
        ck::unaryKernelName(ck::DType::Float32, "GeluErf", 4, 256),
        ck::unaryKernelName(ck::DType::BFloat16, "GeluTanh", 16, 256),
        ck::unaryKernelName(ck::DType::Float16, "Silu", 1, 256),
    };
    for (const std::string& name : names) {
        const auto start = std::chrono::steady_clock::now();
        const ck::CompiledKernel compiled = ck::compileKernel(name, kHopper, dir.path("kernels").string());
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_FALSE(compiled.fromCache) << name;
        EXPECT_TRUE(isElf(compiled.image)) << name << ": not a cubin";
        EXPECT_EQ(compiled.loweredName.rfind("_Z", 0), 0u) << name << " lowered to " << compiled.loweredName;
        std::printf("  %s: %zu bytes in %.2f s\n", name.c_str(), compiled.image.size(), seconds);
    }
}

// A block of 1024 threads may use 64 registers per thread (65,536 per SM on every architecture since sm_50). The
// widest variants the autotuner tries (16-element packs, 8 rows per block) needed more when compiled without their
// launch bound, and their launches were refused on the H200 ("too many resources requested for launch").
TEST(CudaRuntimeKernels, FullBlockVariantsFitTheirRegisterBudget)
{
    test::TempDir dir;
    const std::vector<std::pair<std::string, int>> variants{
        {ck::layerNormKernelName(ck::DType::BFloat16, ck::DType::BFloat16, 16, 8, 0, 1024), 1024},
        {ck::layerNormKernelName(ck::DType::Float16, ck::DType::Float16, 16, 8, 0, 1024), 1024},
        {ck::layerNormKernelName(ck::DType::BFloat16, ck::DType::Float32, 8, 8, 0, 1024), 1024},
        {ck::layerNormKernelName(ck::DType::Float32, ck::DType::Float32, 8, 8, 0, 1024), 1024},
        {ck::rmsNormKernelName(ck::DType::Float16, 16, 8, 0, 1024), 1024},
        {ck::softmaxKernelName(ck::DType::Float16, ck::DType::Float16, 16, 8, 0, 1024), 1024},
        {ck::softmaxKernelName(ck::DType::BFloat16, ck::DType::Float32, 16, 8, 0, 1024), 1024},
        {ck::unaryKernelName(ck::DType::BFloat16, "GeluErf", 16, 1024), 1024},
        {ck::layerNormKernelName(ck::DType::Float32, ck::DType::Float32, 4, 1, 0, 512), 512},
    };
    for (const auto& [name, threads] : variants) {
        const ck::CompiledKernel compiled = ck::compileKernel(name, kHopper, dir.path("kernels").string());
        const std::optional<unsigned> registers = registersPerThread(compiled.image, compiled.loweredName);
        ASSERT_TRUE(registers) << name << ": no register count in its cubin";
        EXPECT_LE(*registers * unsigned(threads), 65536u) << name << ": " << *registers << " registers per thread";
        std::printf("  %s: %u registers per thread\n", name.c_str(), *registers);
    }
}

TEST(CudaRuntimeKernels, TheDiskCacheServesTheSecondRequestAndRecompilesADamagedEntry)
{
    test::TempDir dir;
    const std::string name = ck::unaryKernelName(ck::DType::Float32, "Silu", 4, 256);
    const ck::CompiledKernel first = ck::compileKernel(name, kHopper, dir.path("kernels").string());
    ASSERT_FALSE(first.fromCache);
    ASSERT_TRUE(std::filesystem::exists(first.cachePath)) << first.cachePath;
    EXPECT_EQ(std::filesystem::path(first.cachePath).parent_path(), dir.path("kernels"));

    const ck::CompiledKernel second = ck::compileKernel(name, kHopper, dir.path("kernels").string());
    EXPECT_TRUE(second.fromCache);
    EXPECT_EQ(second.cachePath, first.cachePath);
    EXPECT_TRUE(second.image == first.image) << "the cache returned other bytes";
    EXPECT_EQ(second.loweredName, first.loweredName);

    // Another machine (device or driver), another instantiation: other entries.
    const ck::CompiledKernel otherDevice =
        ck::compileKernel(name, {90, "test: another driver"}, dir.path("kernels").string());
    EXPECT_FALSE(otherDevice.fromCache);
    EXPECT_NE(otherDevice.cachePath, first.cachePath);
    const ck::CompiledKernel otherVariant = ck::compileKernel(ck::unaryKernelName(ck::DType::Float32, "Silu", 2, 256),
                                                              kHopper, dir.path("kernels").string());
    EXPECT_NE(otherVariant.cachePath, first.cachePath);

    // A truncated entry is not trusted: compiled again and replaced.
    test::writeBytes(first.cachePath, fileBytes(first.cachePath).substr(0, 12));
    const ck::CompiledKernel repaired = ck::compileKernel(name, kHopper, dir.path("kernels").string());
    EXPECT_FALSE(repaired.fromCache);
    EXPECT_TRUE(isElf(repaired.image));
    // NVRTC names internal symbols per compilation, so the bytes differ; the size does not.
    EXPECT_EQ(repaired.image.size(), first.image.size());
    EXPECT_GT(fileBytes(first.cachePath).size(), first.image.size());
    EXPECT_TRUE(ck::compileKernel(name, kHopper, dir.path("kernels").string()).fromCache);
}

TEST(CudaRuntimeKernels, AnUnwritableCacheOnlyCostsTheNextCompilation)
{
    test::TempDir dir;
    const auto file = dir.path("not-a-folder");
    test::writeBytes(file, "x");
    const std::string name = ck::unaryKernelName(ck::DType::BFloat16, "GeluErf", 8, 256);
    const ck::CompiledKernel compiled = ck::compileKernel(name, kHopper, file.string());
    EXPECT_TRUE(isElf(compiled.image));
    EXPECT_FALSE(ck::compileKernel(name, kHopper, file.string()).fromCache);
}

TEST(CudaRuntimeKernels, ACompilationErrorNamesTheKernelAndCarriesNvrtcsLog)
{
    test::TempDir dir;
    const std::string name = "kforge_kernels::unaryKernel<float, kforge_kernels::NoSuchOp, 4>";
    const std::string message = test::errorOf([&] { ck::compileKernel(name, kHopper, dir.path("kernels").string()); });
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("NoSuchOp"), std::string::npos) << message;
    EXPECT_NE(message.find("sm_90"), std::string::npos) << message;
    EXPECT_FALSE(std::filesystem::exists(dir.path("kernels")) && !std::filesystem::is_empty(dir.path("kernels")))
        << "a failed compilation left a cache entry";
}

TEST(CudaRuntimeKernels, ADeviceNewerThanNvrtcKnowsGetsPtxForTheNewestArchitectureBelowIt)
{
    test::TempDir dir;
    const ck::CompiledKernel compiled = ck::compileKernel(ck::unaryKernelName(ck::DType::Float32, "GeluTanh", 4, 256),
                                                          {990, "test: sm_990"}, dir.path("kernels").string());
    EXPECT_FALSE(isElf(compiled.image));
    EXPECT_NE(compiled.image.find(".target sm_"), std::string::npos) << compiled.image.substr(0, 300);
    const std::string message = test::errorOf([&] {
        ck::compileKernel(ck::unaryKernelName(ck::DType::Float32, "Silu", 4, 256), {10, "test: sm_10"},
                          dir.path("kernels").string());
    });
    EXPECT_NE(message.find("no architecture at or below sm_10"), std::string::npos) << message;
}

TEST(CudaRuntimeKernels, TheCacheFolderFollowsTheEnvironment)
{
    {
        const ScopedEnv cache("KFORGE_KERNEL_CACHE", "/somewhere/kernels");
        EXPECT_EQ(ck::kernelCacheDir(), "/somewhere/kernels");
    }
    const ScopedEnv noCache("KFORGE_KERNEL_CACHE", "");
    {
        const ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
        EXPECT_EQ(ck::kernelCacheDir(), "/xdg/kforge/kernels");
    }
    const ScopedEnv noXdg("XDG_CACHE_HOME", "");
    const ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(ck::kernelCacheDir(), "/home/someone/.cache/kforge/kernels");
}

#else
TEST(CudaRuntimeKernels, NeedsTheCudaToolkit) { GTEST_SKIP() << "the engine was built without the CUDA toolkit"; }
#endif
