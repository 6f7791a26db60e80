// SPDX-License-Identifier: Apache-2.0
#include "profiling/nvtx_ranges.h"

#if (defined(KFORGE_WITH_CUDA) || defined(KFORGE_WITH_CUPTI)) && __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define KFORGE_WITH_NVTX 1
#endif

#include <cstdint>

namespace kforge::profiling::nvtx {

namespace {

thread_local std::size_t t_depth = 0;

#ifdef KFORGE_WITH_NVTX
constexpr std::uint32_t kModuleColor = 0xFF4C72B0;   // blue
constexpr std::uint32_t kFunctionColor = 0xFFDD8452; // orange
constexpr std::uint32_t kOtherColor = 0xFF8C8C8C;    // grey

nvtxDomainHandle_t domain()
{
    static const nvtxDomainHandle_t handle = nvtxDomainCreateA("KernelForge");
    return handle;
}

void push(const char* message, std::uint32_t color)
{
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.colorType = NVTX_COLOR_ARGB;
    attributes.color = color;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = message;
    nvtxDomainRangePushEx(domain(), &attributes);
    ++t_depth;
}
#else
void push(const char*, std::uint32_t) { ++t_depth; }
#endif

} // namespace

bool compiledIn()
{
#ifdef KFORGE_WITH_NVTX
    return true;
#else
    return false;
#endif
}

std::string moduleRangeName(const std::string& modulePath)
{
    return "module " + (modulePath.empty() ? std::string("<root>") : modulePath);
}

std::string functionRangeName(const std::string& function, const std::string& provider)
{
    return provider.empty() ? "function " + function : "function " + function + " [" + provider + "]";
}

void pushModuleScope(const std::string& modulePath)
{
#ifdef KFORGE_WITH_NVTX
    push(moduleRangeName(modulePath).c_str(), kModuleColor);
#else
    push(nullptr, 0);
#endif
}

void pushFunctionCall(const std::string& function, const std::string& provider)
{
#ifdef KFORGE_WITH_NVTX
    push(functionRangeName(function, provider).c_str(), kFunctionColor);
#else
    push(nullptr, 0);
#endif
}

void pushRange(const char* message)
{
#ifdef KFORGE_WITH_NVTX
    push(message ? message : "", kOtherColor);
#else
    push(message, 0);
#endif
}

bool pop()
{
    if (t_depth == 0)
        return false;
    --t_depth;
#ifdef KFORGE_WITH_NVTX
    nvtxDomainRangePop(domain());
#endif
    return true;
}

std::size_t depth() { return t_depth; }

void popAll()
{
    while (pop()) {
    }
}

} // namespace kforge::profiling::nvtx
