// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/plan.h>
#include <kforge/runtime_types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

// R15: what one CUDA graph capture baked in. Replays run no host code, so these providers stay in the
// graph whatever the plan says later.
struct CapturedProvider {
    std::string scope;
    std::string function;
    std::string provider; // display name, "TorchSDPAKernelProvider(backend=MATH)"
    auto operator<=>(const CapturedProvider&) const = default;
};

struct CaptureRecord {
    std::string id; // "capture-1"
    bool ok = false;
    std::string error;                       // why it failed, when it did
    std::vector<CapturedProvider> providers; // in effect per scope during the capture, sorted
    std::vector<LeftoverPatch> leftovers;    // what a failed capture left (R10/R11), against this capture
    std::int64_t timeNs = 0;
    int replays = 0;
};

// True when the providers the capture recorded differ from what `plan` installs now: re-capture.
// Throws kforge::Error when a plan entry names an unknown provider type.
bool captureIsStale(const CaptureRecord& record, const Plan& plan);

} // namespace kforge
