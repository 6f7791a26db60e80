// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a profile run's memory went (ProfileRun::memory, recorded with ProfileOptions::recordMemory): per module
// scope, the bytes allocated and freed inside it and the peak reached while it was open; for the whole forward, its
// peak and the module open at that moment. Per measured forward (the mean of the iterations). Of the run's device
// only: a CUDA run's figures are its device memory (the caching allocator's reports), not the host's.
#include <kforge/profiling.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

struct ModuleMemory {
    std::string path;           // "" = the root (everything)
    double allocatedBytes = 0;  // per forward: allocations made in the module or below it
    double freedBytes = 0;      // per forward: frees made there
    double allocations = 0;     // per forward
    std::int64_t peakBytes = 0; // the most live bytes (above the forward's start) reached while inside it
    // The live bytes (above the forward's start) when it returned, the most over its calls: what it and the modules
    // before it left alive, its outputs among them. The root's is the forward's result and what the forward kept.
    // None for a module never called itself (a ModuleList's, whose children are called in its place).
    std::optional<std::int64_t> liveAtExitBytes;
};

// What was alive at the forward's peak, by where it was allocated: the allocations made in that forward and not yet
// freed at that moment, grouped by the module and function call that made them.
struct PeakHolder {
    std::string module;   // "" = the root (or another thread than the forward's)
    std::string function; // "" when no function call was open
    std::int64_t bytes = 0;
    int allocations = 0;
};

// The memory of one function with the provider that served it (the run's function calls): what its calls allocated,
// per forward, and the most bytes live inside one call above the call's start (its workspace and its outputs).
struct FunctionMemory {
    std::string function;
    std::string provider;                       // "original" or the provider's name
    double calls = 0;                           // per forward
    double allocatedBytes = 0, allocations = 0; // per forward
    std::int64_t peakInCallBytes = 0;           // over its calls
};

struct MemorySummary {
    bool recorded = false;      // the run recorded memory at all
    std::int64_t peakBytes = 0; // of the forward, above its start (the largest of the iterations)
    std::string peakModule;     // the innermost module open at that peak
    std::string peakFunction;   // and the function call, "" when none
    // A CUDA run's: the most the caching allocator held reserved (its segments, allocated or cached for reuse) as it
    // reported with each allocation and free; a process-wide figure, not above the forward's start. 0 on the CPU.
    std::int64_t reservedPeakBytes = 0;
    std::vector<ModuleMemory> modules; // every module that allocated, the root first, then by allocated bytes
    // The peak decomposed: its holders by bytes, largest first; their bytes sum to peakBytes when every allocation
    // alive at the peak was made in that forward (frees of older allocations are not reported, see ModuleMemory).
    std::vector<PeakHolder> aliveAtPeak;
    // Per function and provider, the ones whose calls allocated, by bytes allocated (largest first).
    std::vector<FunctionMemory> functions;
    // A CUDA run's driver-level allocations (CUPTI's memory records, MemoryRecord::driver), the same figures per
    // module: what the caching allocator's figures above do not show (its segments, and what bypasses it:
    // AOTInductor's weights blob, cuBLAS and cuDNN workspaces). Empty on the CPU and for runs without them.
    std::vector<ModuleMemory> driverModules;
    std::int64_t driverPeakBytes = 0; // the most driver bytes live above a forward's start
};

MemorySummary summarizeMemory(const ProfileRun& run);

// The flame graph of where the memory was allocated (the run's device): modules, then each module's allocations by
// function call, as flameGraph() lays out time. A frame's `us` holds bytes allocated per forward, its `calls`
// allocations per forward. Empty when the run recorded no memory.
std::vector<FlameFrame> memoryFlameGraph(const ProfileRun& run);

// The bytes live on the run's device after one allocation or free, above its forward's start: the quantity the
// forward's peak (MemorySummary::peakBytes) is the largest of.
struct LiveBytesStep {
    std::int64_t timeNs = 0;
    std::int64_t liveBytes = 0;
};
struct LiveBytesSeries {
    std::vector<LiveBytesStep> steps; // one per allocation or free of the run's device, in time order
    int peak = -1;                    // the step that first reaches the largest liveBytes; -1 when empty
};
// Live bytes over the run, for a memory lane on a timeline: steps of the run's device, restarting from 0 at each
// forward's first event, as summarizeMemory() counts them (so the peak step's bytes are its peakBytes).
LiveBytesSeries liveBytesOverTime(const ProfileRun& run);

class ModelSession;

// The forward's peak (MemorySummary::peakBytes) without and with a plan, for a budget on it (optimize
// --max-peak-increase) and for verify and bench to report. Live bytes above each forward's start: a workspace a
// provider allocates once and keeps across forwards is not in it.
struct PeakMemoryChange {
    std::int64_t baselineBytes = 0, planBytes = 0;
    std::string baselineModule, planModule; // the innermost module open at each peak
    double percent() const;                 // the plan's change against the baseline; 0 when both are 0
};

// One warm-up and two measured forwards on each side, memory recorded (ProfileOptions::recordMemory).
PeakMemoryChange measurePeakChange(ModelSession& session, const Plan& plan, const std::string& device);

// "1.50 MiB -> 9.50 MiB (+533.3%)": the change as verify, bench and optimize print it.
std::string describePeakChange(const PeakMemoryChange& change);
// "512 B", "12.0 KiB", "1.50 MiB", "2.25 GiB"
std::string bytesText(double bytes);

} // namespace kforge
