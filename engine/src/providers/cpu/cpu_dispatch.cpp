// SPDX-License-Identifier: Apache-2.0
// Which kernel set the Cpu*Providers run (see cpu_kernels.h).
#include "providers/cpu/cpu_kernels.h"

#include <ATen/Version.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <string>

namespace kforge::providers::cpu {
namespace {

bool cpuCanRun(Isa isa)
{
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    switch (isa) {
    case Isa::Default:
        return true;
    case Isa::Avx2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512dq");
    }
    return false;
#else
    return isa == Isa::Default;
#endif
}

// ATen's own choice ("DEFAULT", "AVX2", "AVX512"; ATEN_CPU_CAPABILITY lowers it).
Isa atenIsa()
{
    const std::string capability = at::get_cpu_capability();
    if (capability == "AVX512")
        return Isa::Avx512;
    if (capability == "AVX2")
        return Isa::Avx2;
    return Isa::Default;
}

const KernelTable& table(Isa isa)
{
    switch (isa) {
    case Isa::Avx512:
        return avx512Kernels();
    case Isa::Avx2:
        return avx2Kernels();
    case Isa::Default:
        break;
    }
    return defaultKernels();
}

std::atomic<const KernelTable*> gOverride{nullptr};

} // namespace

std::vector<Isa> availableIsas()
{
    std::vector<Isa> out;
    for (Isa isa : {Isa::Default, Isa::Avx2, Isa::Avx512})
        if (cpuCanRun(isa))
            out.push_back(isa);
    return out;
}

const KernelTable& kernelsFor(Isa isa)
{
    TORCH_CHECK(cpuCanRun(isa), "this CPU cannot run the ", table(isa).name, " kernels");
    return table(isa);
}

const KernelTable& kernels()
{
    if (const KernelTable* forced = gOverride.load(std::memory_order_acquire))
        return *forced;
    static const KernelTable* const chosen = [] {
        Isa best = Isa::Default;
        for (Isa isa : availableIsas())
            if (static_cast<int>(isa) <= static_cast<int>(atenIsa()))
                best = isa;
        return &table(best);
    }();
    return *chosen;
}

std::string_view isaName(Isa isa)
{
    switch (isa) {
    case Isa::Avx2:
        return "avx2";
    case Isa::Avx512:
        return "avx512";
    default:
        return "default";
    }
}

std::optional<Isa> isaFromName(std::string_view name)
{
    for (Isa isa : {Isa::Default, Isa::Avx2, Isa::Avx512})
        if (isaName(isa) == name)
            return isa;
    return std::nullopt;
}

void setIsaOverride(Isa isa) { gOverride.store(&kernelsFor(isa), std::memory_order_release); }
void resetIsaOverride() { gOverride.store(nullptr, std::memory_order_release); }

} // namespace kforge::providers::cpu
