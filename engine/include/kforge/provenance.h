// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a plan was measured (docs/plans.md, "Provenance and re-validation"): the machine, the builds and each
// provider's origin, written into every plan kforge makes, and compared with the machine that loads it.
#include <string>
#include <vector>

namespace kforge {

// The machine and builds a measurement belongs to. Empty fields were not known where it was written.
struct MachineFingerprint {
    std::string device;            // "cpu" or "cuda:0": where the plan's entries were measured
    std::string cpuModel;          // "AMD EPYC 7B13" (/proc/cpuinfo's model name)
    std::string cpuIsa;            // ATen's CPU capability: "AVX512", "AVX2", "DEFAULT"
    std::string gpuName;           // CUDA only: "NVIDIA H200"
    std::string computeCapability; // CUDA only: "9.0"
    std::string driver;            // CUDA only: the driver's CUDA version, "13.0"
    std::string torch;             // "2.11.0"
    std::string cuda;              // the CUDA LibTorch was built for, "" for a CPU build
    std::string cudnn;             // "91900", "" without cuDNN
    std::string kforge;            // "0.9.0"
};

// Where a provider type came from: built into kforge, or a plugin file.
struct ProviderOrigin {
    std::string type;    // "CpuGeluProvider"
    std::string origin;  // "built-in" or "plugin"
    std::string path;    // plugin only: the file it was loaded from
    std::string sha256;  // plugin only: of that file
    std::string version; // the plugin's own version string (KFORGE_PROVIDER_PLUGIN_VERSION), or kforge's
};

struct Provenance {
    std::string writtenBy;  // "kforge optimize", "kforge plan new", "KernelForge Studio"
    std::string createdUtc; // "2026-12-04T21:05:00Z"
    MachineFingerprint machine;
    std::vector<ProviderOrigin> providers; // one per provider type of the plan's entries, in entry order

    const ProviderOrigin* originOf(const std::string& type) const
    {
        for (const ProviderOrigin& o : providers)
            if (o.type == type)
                return &o;
        return nullptr;
    }
};

// What an entry was measured on and how it did there (written by optimize).
struct EntryMeasurement {
    std::vector<std::string> signatures; // the calls it was measured on: "float32[8,197,768]"
    double speedup = 0;                  // original / provider on those calls (the fastest rounds)
    double speedupLow = 0,
           speedupHigh = 0; // 95% interval of the per-round ratio (speed_verdict.h); 0 when not measured

    bool measured() const { return speedup > 0; }
};

// This machine and build for `device` ("cpu" or "cuda[:N]").
MachineFingerprint machineFingerprint(const std::string& device);
// The origin of a registered provider type (a plugin's SHA-256 is of its file as loaded).
ProviderOrigin providerOrigin(const std::string& type);

// Why an entry needs re-validating before it runs here: what differs from the recorded provenance.
struct ProvenanceChange {
    int entry = -1;
    std::vector<std::string> reasons; // "measured on AVX512, this machine is AVX2"
    bool pluginChanged = false;       // a plugin's SHA-256 differs: refused unless the user accepts it
};

struct Plan;
// Records this machine for `device` and the origin of every entry's provider in plan.provenance.
void stampProvenance(Plan& plan, const std::string& device, const std::string& writtenBy);
// A plan edited by hand (the GUI's save): stamped when it has no provenance yet, else the origins of provider types
// added since are recorded beside the measured ones (which keep the machine they were measured on).
void ensureProvenance(Plan& plan, const std::string& device, const std::string& writtenBy);
// The enabled entries whose recorded provenance differs from this machine (`here`, and the providers' origins as
// `originHere` gives them): another device, CPU or ISA, torch, CUDA or cuDNN build, kforge version for built-in
// providers, plugin file or version. Empty for a plan without provenance (nothing to compare with).
std::vector<ProvenanceChange> provenanceChanges(const Plan& plan, const MachineFingerprint& here,
                                                ProviderOrigin (*originHere)(const std::string&) = providerOrigin);

} // namespace kforge
