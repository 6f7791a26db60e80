// SPDX-License-Identifier: Apache-2.0
// This machine's fingerprint, provider origins, stamping a plan and comparing a plan's provenance with here.
#include <kforge/plan.h>
#include <kforge/plugins.h>
#include <kforge/provenance.h>
#include <kforge/provider_sdk.h>
#include <kforge/version.h>

#include "common/utc_time.h"
#include "profiling/cupti_info.h"

#include <ATen/Version.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h> // IWYU pragma: keep (TORCH_VERSION)

#ifdef KFORGE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>

namespace kforge {
namespace {

std::string cpuModelName()
{
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    return {};
}

std::string cudnnVersion()
{
    try {
        const long v = at::detail::getCUDAHooks().versionCuDNN();
        return v > 0 ? std::to_string(v) : std::string{};
    } catch (...) { // a CPU-only LibTorch has no cuDNN to report
        return {};
    }
}

void addCudaDevice(MachineFingerprint& m, const std::string& device)
{
#ifdef KFORGE_WITH_CUDA
    const auto colon = device.find(':');
    const int index = colon == std::string::npos ? 0 : std::atoi(device.c_str() + colon + 1);
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, index) == cudaSuccess) {
        m.gpuName = prop.name;
        m.computeCapability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    }
    int driver = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
        m.driver = std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
#else
    (void)m;
    (void)device;
#endif
}

bool isCuda(const std::string& device) { return device.rfind("cuda", 0) == 0; }

// What differs between where the plan was measured and here, for every entry alike.
std::vector<std::string> machineDifferences(const MachineFingerprint& then, const MachineFingerprint& here)
{
    std::vector<std::string> out;
    const auto differs = [&](const std::string& what, const std::string& a, const std::string& b) {
        if (!a.empty() && a != b)
            out.push_back(what + " " + a + ", here " + (b.empty() ? "none" : b));
    };
    if (isCuda(then.device) != isCuda(here.device))
        out.push_back("measured on " + then.device + ", running on " + here.device);
    if (isCuda(here.device)) {
        differs("measured on GPU", then.gpuName, here.gpuName);
        differs("measured on compute capability", then.computeCapability, here.computeCapability);
    } else {
        differs("measured on CPU", then.cpuModel, here.cpuModel);
        differs("measured with the CPU ISA level", then.cpuIsa, here.cpuIsa);
    }
    differs("measured with torch", then.torch, here.torch);
    if (isCuda(here.device)) {
        differs("measured with CUDA", then.cuda, here.cuda);
        differs("measured with cuDNN", then.cudnn, here.cudnn);
    }
    return out;
}

} // namespace

MachineFingerprint machineFingerprint(const std::string& device)
{
    MachineFingerprint m;
    m.device = device.empty() ? "cpu" : device;
    m.cpuModel = cpuModelName();
    m.cpuIsa = at::get_cpu_capability();
    m.torch = TORCH_VERSION;
    m.cuda = profiling::torchCudaVersion();
    m.cudnn = cudnnVersion();
    m.kforge = KFORGE_VERSION_STRING;
    if (isCuda(m.device))
        addCudaDevice(m, m.device);
    return m;
}

ProviderOrigin providerOrigin(const std::string& type)
{
    ProviderOrigin o;
    o.type = type;
    for (const PluginInfo& plugin : loadedProviderPlugins())
        if (std::find(plugin.providerTypes.begin(), plugin.providerTypes.end(), type) != plugin.providerTypes.end()) {
            o.origin = "plugin";
            o.path = plugin.path;
            o.sha256 = plugin.sha256;
            o.version = plugin.version;
            return o;
        }
    o.origin = ProviderRegistry::instance().find(type) ? "built-in" : "unknown";
    o.version = KFORGE_VERSION_STRING;
    return o;
}

void stampProvenance(Plan& plan, const std::string& device, const std::string& writtenBy)
{
    Provenance p;
    p.writtenBy = writtenBy;
    p.createdUtc = utcNow();
    p.machine = machineFingerprint(device);
    for (const PlanEntry& e : plan.entries)
        if (!e.providerType().empty() && !p.originOf(e.providerType()))
            p.providers.push_back(providerOrigin(e.providerType()));
    plan.provenance = std::move(p);
}

void ensureProvenance(Plan& plan, const std::string& device, const std::string& writtenBy)
{
    if (!plan.provenance)
        return stampProvenance(plan, device, writtenBy);
    for (const PlanEntry& e : plan.entries)
        if (!e.providerType().empty() && !plan.provenance->originOf(e.providerType()))
            plan.provenance->providers.push_back(providerOrigin(e.providerType()));
}

std::vector<ProvenanceChange> provenanceChanges(const Plan& plan, const MachineFingerprint& here,
                                                ProviderOrigin (*originHere)(const std::string&))
{
    std::vector<ProvenanceChange> out;
    if (!plan.provenance)
        return out;
    const Provenance& then = *plan.provenance;
    const std::vector<std::string> machine = machineDifferences(then.machine, here);
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        const PlanEntry& e = plan.entries[i];
        if (!e.enabled)
            continue;
        ProvenanceChange change;
        change.entry = int(i);
        change.reasons = machine;
        const ProviderOrigin* recorded = then.originOf(e.providerType());
        const ProviderOrigin now = originHere(e.providerType());
        if (!recorded) {
            change.reasons.push_back("no recorded origin for provider " + e.providerType());
        } else if (recorded->origin == "plugin" || now.origin == "plugin") {
            if (recorded->origin != now.origin) {
                change.reasons.push_back(e.providerType() + " came from a " + recorded->origin + ", here from a " +
                                         now.origin);
                change.pluginChanged = now.origin == "plugin";
            } else if (recorded->sha256.empty()) {
                // Nothing to match the file here against: it is re-validated, never taken as the one measured.
                change.reasons.push_back("plugin " + now.path +
                                         " was recorded without a SHA-256: it cannot be "
                                         "matched with the one measured");
            } else if (recorded->sha256 != now.sha256) {
                change.reasons.push_back("plugin " + now.path + " differs from the one measured (SHA-256 " +
                                         recorded->sha256.substr(0, 12) + "..., here " + now.sha256.substr(0, 12) +
                                         "...)");
                change.pluginChanged = true;
            } else if (recorded->version != now.version) {
                change.reasons.push_back("measured with plugin version '" + recorded->version + "', here '" +
                                         now.version + "'");
            }
        } else if (!recorded->version.empty() && recorded->version != now.version) {
            change.reasons.push_back("measured with kforge " + recorded->version + ", here " + now.version);
        }
        if (!change.reasons.empty())
            out.push_back(std::move(change));
    }
    return out;
}

} // namespace kforge
