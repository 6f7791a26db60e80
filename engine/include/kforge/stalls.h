// SPDX-License-Identifier: Apache-2.0
#pragma once
// Calls and rounds that waited on the machine rather than computed (docs/verify.md, "Stalls"). On a machine that
// runs other work, a thread of the forward is now and then descheduled for a whole scheduler slice (0.75-12 ms): the
// op it was running, and every intra-op thread waiting for it, take that long. Such stalls are not the model's cost.
// They are found from the measurement itself (no timing of our own), named with the cause that can be seen (threads,
// cores, load), and taken out of the estimate; the raw figures stay as they were. Rounds of a paired measurement
// without records (bench, optimize) are judged by kforge/round_stalls.h.
#include <string>
#include <vector>

namespace kforge {

struct ProfileRun;

// The machine a run measured on, to name what stalled it.
struct MachineState {
    int cores = 0;           // online CPUs
    double loadAverage = -1; // 1-minute load average; < 0 unknown
    int intraOpThreads = 0;  // LibTorch's intra-op threads; 0 unknown
};
MachineState currentMachineState(int intraOpThreads);

struct StallReport {
    int iterations = 0;                   // measured iterations (or rounds) examined
    int stalledIterations = 0;            // with at least one stall
    long long stalledCalls = 0;           // op calls found stalled (0 for rounds, which have no calls)
    double excessUs = 0;                  // what the stalls added to the times, in all
    double smallestUs = 0, largestUs = 0; // the smallest and largest stall
    bool examined = false;                // enough iterations to tell a stall from a call's usual time
    MachineState machine;
    bool any() const { return stalledIterations > 0; }
    void addStall(double excessUs); // one more stall of this size (excessUs, smallestUs, largestUs)
    // More than half the iterations stalled: a median no longer steps around them, and no verdict stands.
    bool remains() const { return 2 * stalledIterations > iterations; }
};

// A call is stalled when it took at least this much longer than its usual time, and at least kStallRatio times it.
constexpr double kMinStallUs = 250.0;
constexpr double kStallRatio = 3.0;
// Fewer measured iterations than this: a call's usual time (its median over the iterations) cannot be told apart.
constexpr int kMinIterationsForStalls = 3;

// A run with its stalls taken out. A CPU op call is the same call in every iteration (the same module, function, op
// and input shapes, and the same ordinal among those in its iteration); its usual time is its median over the
// iterations, and a call far above it (kMinStallUs and kStallRatio) counts its usual time instead. CUDA kernels run
// on the device and are kept as they are.
struct StallFreeRun {
    std::vector<double> durationUs;  // per record of run.records
    std::vector<double> iterationUs; // per measured iteration: its wall span less the stalls inside it
    StallReport stalls;
    double medianIterationUs() const; // the forward's cost: the median of iterationUs
};
StallFreeRun removeStalls(const ProfileRun& run);

// "stalls: 14 of 20 iterations waited 0.31 to 40 ms (38 op calls, 45.2 ms in all): 2 intra-op threads and other
// work (load 1.4) share 2 cores; the estimate excludes them; --threads 1 or a quieter machine measures the model".
// Empty when there were none.
std::string describe(const StallReport& report);

} // namespace kforge
