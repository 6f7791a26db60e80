// SPDX-License-Identifier: Apache-2.0
#pragma once
// Profiling results as plain values: kernel executions (CUDA kernels traced with CUPTI, or ATen op
// executions timed on the CPU) attributed to module path, function, op and provider; statistics; the
// comparison of a baseline and a plan run.
#include <kforge/module_info.h>
#include <kforge/plan.h>
#include <kforge/progress.h>
#include <kforge/runtime_types.h>
#include <kforge/speed_verdict.h>
#include <kforge/stalls.h>
#include <kforge/tensor_digest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

// One kernel execution ("kernel"), memory operation ("memcpy", "memset") or CPU op execution ("cpu_op").
struct KernelRecord {
    std::string kind = "cpu_op";
    std::string name;         // kernel name, or the ATen op for cpu_op: "aten::addmm"
    std::string modulePath;   // innermost module executing when it was launched ("" = root)
    std::string function;     // the replaceable function whose call launched it, "" when none
    std::string op;           // the ATen op that launched it
    std::string provider;     // provider serving `function`, "original", or "" when no function
    std::int64_t startNs = 0; // relative to the start of the profile
    std::int64_t durationNs = 0;
    std::uint64_t thread = 0;
    int device = -1; // CUDA device, -1 for CPU
    std::uint32_t stream = 0;
    std::array<int, 3> grid{0, 0, 0};
    std::array<int, 3> block{0, 0, 0};
    int registersPerThread = 0;
    int sharedMemoryBytes = 0; // static + dynamic
    std::uint64_t correlation = 0;
    int iteration = 0;
    bool graphReplay = false;
    // A CPU op's inputs as torch.profiler's record_shapes lists them: "[[1, 3, 224, 224], [64, 3, 7, 7], []]" (a
    // tensor's sizes, [] for anything else); "" when the profile did not record shapes (ProfileOptions::recordShapes).
    std::string inputShapes;
};

// A module scope or a function call on the host timeline (for the trace and the GUI's timeline).
struct RangeRecord {
    std::string kind; // "module" or "function"
    std::string name; // module path or function name
    std::string provider;
    std::int64_t startNs = 0;
    std::int64_t durationNs = 0;
    std::uint64_t thread = 0;
    int iteration = 0;
};

// One allocation (bytes > 0) or free (bytes < 0) the allocator reported during a measured forward, with the module
// and function call open on its thread at that moment (on the CPU through kforge's tap on the allocator, on CUDA
// through c10's memory reporting, as torch.profiler's profile_memory).
// Its names are views of text that lives as long as the process (a literal, or internedText()): a forward makes
// thousands of these, and a std::string each was most of what recording memory cost (bench_profiling
// --instructions). Set them from internedText() (or a literal), never from a temporary string.
struct MemoryRecord {
    std::int64_t timeNs = 0;
    std::int64_t bytes = 0;
    std::int64_t totalAllocatedBytes = 0; // the allocator's live bytes after it
    std::string_view modulePath;          // "" = the root, or another thread than the forward's
    std::string_view function;            // "" when no function call was open
    std::string_view device;              // "cpu", "cuda:0"
    std::uint64_t thread = 0;
    int iteration = 0;
    std::uint64_t address = 0; // pairs a free with its allocation; 0 in files from before it was recorded
    // A CUDA run's driver-level allocation or release (CUPTI's memory records: cudaMalloc and its free), not a
    // caching-allocator report: the caching allocator's segments and what bypasses it (AOTInductor's weights,
    // cuBLAS/cuDNN workspaces). Kept apart from the allocator's figures, which the segments would count twice.
    bool driver = false;
    // The caching allocator's reserved bytes after it (its segments: what it holds from the driver, allocated or
    // cached for reuse), as it reports them with each allocation and free; 0 on the CPU and in older files.
    std::int64_t totalReservedBytes = 0;
};

// `text` kept for the life of the process, one copy per distinct text (thread-safe): for MemoryRecord's names.
std::string_view internedText(std::string_view text);

struct ProfileRun;

struct ProfileOptions {
    std::string device = "cpu"; // "cpu" or "cuda"
    int warmupIterations = 3;
    int iterations = 10;
    Plan plan; // empty = baseline
    bool usePlan = false;
    // Profile replays of this CUDA graph capture (ModelSession::capture) instead of eager forwards: replayed
    // kernels are attributed through the graph-node map recorded at capture (device "cuda" only).
    std::string replayCapture;
    // (done, total) iterations, warm-up included; false cancels (the run stops after the current forward).
    ProgressCallback progress;
    // Record each CPU op's input shapes (KernelRecord::inputShapes) for GroupBy::OpInputShapes, as torch.profiler's
    // record_shapes: every op's inputs are then boxed for the recorder, which costs time; off by default.
    bool recordShapes = false;
    // Record every allocation and free of the measured forwards (MemoryRecord; ProfileRun::memory): off by default,
    // as the allocator then reports each one.
    bool recordMemory = false;
    // The run so far, for showing results as they come: after the first measured forward, then at most every
    // partialEveryMs, never after the last (the result follows). Records, ranges, iterations and wall time of the
    // measured forwards done, inProgress set, no outputs. Called on the profiling thread between forwards; the time
    // it takes is left out of the run's wallNs. CPU profiles only: a CUDA profile's kernels arrive at its end.
    std::function<void(const ProfileRun&)> partial;
    int partialEveryMs = 250;
};

struct ProfileRun {
    std::string device;     // "cpu" or "cuda"
    std::string deviceName; // "CPU (LibTorch ops)" or "NVIDIA H200"
    std::string torchVersion;
    std::string cuptiVersion;
    std::string kforgeVersion;
    // "direct" or "optimized" (GraphExecutor), "exported" for a .pt2 program; "" in files from before it was recorded
    std::string graphExecutor;
    // LibTorch's intra-op threads while it measured (at::get_num_threads); 0 in files from before it was recorded
    int intraOpThreads = 0;
    // The machine while it measured, to name what stalled a call (stalls.h): online CPUs and the 1-minute load
    // average at the end of the run; 0 and -1 in files from before they were recorded
    int cores = 0;
    double loadAverage = -1;
    std::string model;
    std::vector<std::string> inputs;
    int warmupIterations = 0;
    int iterations = 0;
    bool cancelled = false;
    bool inProgress = false; // a snapshot of a run still measuring (ProfileOptions::partial); never saved as one
    bool usedPlan = false;
    Plan plan;
    std::vector<ModuleInfo> modules;
    std::vector<KernelRecord> records;
    std::vector<RangeRecord> ranges;
    std::vector<TensorDigest> outputs; // of the last measured forward
    // The last forward's output tensors as float32, flattened (the first 2^22 values of each), so that a
    // comparison can report the output error without the model.
    std::vector<std::vector<float>> outputValues;
    std::uint64_t droppedRecords = 0;
    std::vector<MemoryRecord> memory; // with ProfileOptions::recordMemory, in time order
    std::int64_t wallNs = 0;          // of the measured iterations
    // Calls the plan's providers declined in the measured forwards: the original served (and is credited with)
    // them. Empty without a plan or when every call was served.
    std::vector<EntryDeclines> declines;
};

struct StatRow {
    std::string key; // kernel name (+ geometry), function or module path
    std::string function;
    std::string modulePath;
    long long calls = 0;
    double totalUs = 0, meanUs = 0, minUs = 0, medianUs = 0, p95Us = 0, maxUs = 0;
    double share = 0; // of the total time of all rows
};

// OpInputShapes: an op and its input shapes, as torch.profiler's key_averages(group_by_input_shape=True); records
// without shapes group by name alone.
enum class GroupBy { Kernel, KernelGeometry, Function, Module, OpInputShapes };
std::vector<StatRow> statistics(const std::vector<KernelRecord>& records, GroupBy groupBy);

// Where a run's time went by module, per measured forward: the module tree's Time columns and the flame graph.
struct ModuleTime {
    std::string path;        // "" for the root
    double totalUs = 0;      // the module and everything below it
    double selfUs = 0;       // records whose innermost module is this one
    double share = 0;        // totalUs / the root's totalUs
    double calls = 0;        // entries per forward (module ranges), 0 where the run has no ranges
    std::string topFunction; // the function with the most time in the subtree; "" when none
    double topFunctionUs = 0;
};
// One row per module of run.modules, in the same (pre-)order; records of unknown paths count for the root.
std::vector<ModuleTime> moduleTimes(const ProfileRun& run);

// A run aggregated as a tree for a flame graph (icicle): module → child modules, then the module's own time by
// function → op or kernel. Times are per measured forward. Frame 0 is the root module; children follow their parent:
// child modules first, in the order the forward first entered them (the module tree's order in a run without module
// ranges), so identical layers keep their places, then the module's functions, and a function's ops, by decreasing
// time.
struct FlameFrame {
    enum class Kind { Module, Function, Op };
    Kind kind = Kind::Module;
    std::string name;     // module name (its last path component; "" for the root), function, op or kernel
    std::string path;     // "blocks.0.attn", "blocks.0.attn/gelu", "blocks.0.attn/gelu/aten::gelu": unique, stable
    std::string typeName; // a module frame's readable type ("Bottleneck") from the run's modules; "" when unknown
    int parent = -1;
    int depth = 0;
    double us = 0;       // the frame and everything below it
    double offsetUs = 0; // from the start of the root frame, for drawing
    double calls = 0;    // records (ops, functions) or entries (modules) per forward
};
std::vector<FlameFrame> flameGraph(const ProfileRun& run);
// The same time bottom-up (a caller view): under a root of all the time, the frames that hold time of their own
// (ops and kernels, and functions or modules with time outside their children), merged by kind and name wherever
// they ran, each with its callers below it (op → function → module → its parent modules), by decreasing time.
// Paths are unique in this tree ("aten::addmm/linear/blocks.0.mlp"); `calls` counts the merged frames' calls.
std::vector<FlameFrame> bottomUp(const std::vector<FlameFrame>& topDown);

// The differential flame graph's judgement: per frame path of the plan's graph, the speed verdict of its time per
// iteration against the baseline's frame of the same path (iteration i of one run paired with iteration i of the
// other, as compare() pairs them). Paths on one side only have no entry.
std::map<std::string, SpeedComparison> flameGraphSpeeds(const ProfileRun& baseline, const ProfileRun& plan);

// A baseline and a plan run side by side. Times are medians over the measured iterations of each side's time per
// iteration; speed is judged on the per-iteration ratios baseline / plan, iteration i of one run paired with
// iteration i of the other (the same round in an interleaved compare, kforge/study.h), by the speed verdict.
struct ComparisonRow {
    std::string key;                   // function or module path
    double baselineUs = 0, planUs = 0; // median time per iteration
    double speedup = 0;                // the median per-iteration ratio baseline / plan; 0 when the plan time is 0
    SpeedComparison speed;             // verdict, 95% interval, smallest detectable change
};
struct Comparison {
    std::vector<ComparisonRow> byFunction;
    std::vector<ComparisonRow> byModule;  // a module's own time (records whose innermost module it is)
    std::vector<ComparisonRow> bySubtree; // a module and everything below it (the module tree's Δ column)
    double baselineTotalUs = 0, planTotalUs = 0, speedup = 0; // medians of the whole iterations' recorded time
    SpeedComparison speed;                                    // of the whole iterations
    double maxAbsError = 0, maxRelError = 0;                  // between the runs' model outputs (digests)
    bool outputsComparable = true;
    // What each side waited on the machine (stalls.h). Every time above is stall-free: a stalled call counts its
    // usual time. Where stalls remain (more than half the iterations), every verdict is too noisy to judge.
    StallReport baselineStalls, planStalls;
};
// maxDetectableChange: speed_verdict.h's bound, for every row.
Comparison compare(const ProfileRun& baseline, const ProfileRun& plan,
                   double maxDetectableChange = kDefaultMaxDetectableChange);

class ModelSession;

// Runs warm-up and measured forwards of `session` and returns what it measured. device "cuda" traces CUDA
// kernels with CUPTI (kforge::Error when no CUDA device or CUPTI is available); "cpu" times every ATen op
// execution and every intercepted function call on the host. Never run alongside LibTorch's own profiler.
// (kforge/study.h runs the baseline / plan / compare studies the CLI and the desktop app ask for.)
ProfileRun profile(ModelSession& session, const ProfileOptions& options);

} // namespace kforge
