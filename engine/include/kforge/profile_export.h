// SPDX-License-Identifier: Apache-2.0
#pragma once
// What leaves a profile run: exports for other tools (Chrome trace JSON that Perfetto opens, CSV of every
// kernel execution) and .kfprof result files (docs/kfprof-format.md) that `kforge report` and the GUI open
// without the model or a GPU. Everything here works on ProfileRun values only: a new export format is one
// more ProfileExporter and touches no collector code.
#include <kforge/atomic_file.h>
#include <kforge/profiling.h>

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace kforge {

// A run and the label it carries in a trace or a .kfprof file ("baseline", "plan"; "" = none).
struct LabeledRun {
    std::string label;
    const ProfileRun* run = nullptr;
};

// ---- Chrome trace JSON -----------------------------------------------------------------------------------------
// {"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1}, "deviceProperties": [{"id", "name"}],
// "displayTimeUnit": "ns", "kforge": {run metadata}, "traceEvents": [...]} (Kineto's top-level keys, which Holistic
// Trace Analysis reads), streamed to `out` event by event (nothing proportional to the run is built in memory but a
// few indexes), so large runs go straight to disk.
//   host lanes: pid 1 "host", tid = host thread: module ranges (cat "module"), function ranges (cat "function")
//               and, on the CPU, the timed ATen op executions (cat "cpu_op"), all "ph": "X";
//   GPU lanes:  pid 2 + device "cuda:<device>", tid = stream: kernels, memcpys, memsets ("ph": "X", cat "kernel",
//               "gpu_memcpy", "gpu_memset" as Kineto's; args device, stream, correlation and, for kernels, grid,
//               block, "registers per thread", "shared memory");
//   flows:      "ph": "s" on the function call, "ph": "f" with "bp": "e" on each record it launched;
//   metadata:   "ph": "M" process_name / thread_name / process_sort_index / thread_sort_index.
// ts and dur are microseconds with nanosecond precision ("123.456"). Several runs (baseline and plan) go side by
// side as separate processes: run k uses pids 1 + 100 k (host) and 2 + 100 k + device.
void writeChromeTrace(const ProfileRun& run, std::ostream& out);
void writeChromeTrace(const std::vector<LabeledRun>& runs, std::ostream& out);

// ---- CSV (RFC 4180: header row, CRLF, fields with , " CR LF quoted with "" doubled) -------------------------------
// One row per kernel execution with its attribution; kCsvColumns in order.
extern const std::vector<std::string> kCsvColumns;
void writeCsv(const ProfileRun& run, std::ostream& out);
void writeCsv(const std::vector<KernelRecord>& records, std::ostream& out);
// Reads what writeCsv wrote (columns found by header name, in any order; unknown ones ignored, missing ones take
// KernelRecord's defaults; LF or CRLF). kforge::Error "CSV line N: ..." on a malformed row or value.
std::vector<KernelRecord> readCsv(std::istream& in);

// ---- PyTorch memory snapshot (pickle, docs/profiling.md) ----------------------------------------------------------
// The allocations of a run profiled with memory (ProfileOptions::recordMemory) as the pickled dict PyTorch's
// torch.cuda.memory._snapshot() returns, for its memory visualiser; kforge::Error when the run recorded none.
void writeMemorySnapshot(const ProfileRun& run, std::ostream& out);

// ---- One interface for every export format: the way both faces write profile files ------------------------------
// Every exporter takes the runs of a study labelled "baseline" / "plan" (studyRuns, study.h) and decides what of
// them its format holds: the Chrome trace lays them side by side (one run: lanes "host", "cuda:0"; several: "host
// (baseline)", "host (plan)", ...), the CSV the first run, the .kfprof all of them with their labels.
class ProfileExporter {
public:
    virtual ~ProfileExporter() = default;
    virtual std::string name() const = 0;        // "chrome-trace", "csv", "kfprof"
    virtual std::string extension() const = 0;   // ".json", ".csv", ".kfprof"
    virtual std::string description() const = 0; // one line for --help
    virtual void write(const std::vector<LabeledRun>& runs, std::ostream& out) const = 0;
};
// The built-in exporters, in a stable order.
const std::vector<const ProfileExporter*>& profileExporters();
// Throws kforge::Error naming the known formats when `name` is none of them.
const ProfileExporter& profileExporter(const std::string& name);
// Writes `runs` in `format` to `path` through writeFileStreaming (atomic: a failed write leaves no file behind).
void exportProfile(const std::vector<LabeledRun>& runs, const std::string& format, const std::string& path);
// One run, labelled as saveProfile labels it.
void exportProfile(const ProfileRun& run, const std::string& format, const std::string& path);

// ---- .kfprof result files (docs/kfprof-format.md) ---------------------------------------------------------------
inline constexpr const char* kProfileFormatName = "kforge-profile";
inline constexpr int kProfileFormatVersion = 1;

struct SavedRun {
    std::string label;
    ProfileRun run;
    std::string created; // when its file was written, UTC ("2026-05-01T12:00:00Z"); "" where the file does not say
};

// One run, labelled "plan" when it used a plan and "baseline" otherwise. Atomic (writeFileStreaming).
void saveProfile(const ProfileRun& run, const std::string& path);
// Several runs in one file (kforge compare --save writes the baseline first, then the plan).
void saveProfiles(const std::vector<LabeledRun>& runs, const std::string& path);
void writeProfile(const std::vector<LabeledRun>& runs, std::ostream& out);

// The first run of the file. kforge::Error naming the file: "not found"; "malformed JSON at line L, column C";
// "not a kforge profile ..."; "format version N is newer than this build reads (1)"; wrong types with the JSON
// path ("/runs/0/records/12: ...").
ProfileRun loadProfile(const std::string& path);
std::vector<SavedRun> loadProfiles(const std::string& path);
std::vector<SavedRun> parseProfile(const std::string& text, const std::string& where);

} // namespace kforge
