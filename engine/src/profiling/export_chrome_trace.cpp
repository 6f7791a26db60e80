// SPDX-License-Identifier: Apache-2.0
// Chrome trace JSON, as Perfetto's JSON importer and chrome://tracing read it (docs/design/architecture.md,
// Mechanisms): complete events on per-thread (host) and per-stream (GPU) lanes, flows from each function call to the
// records it launched, metadata naming the lanes; with what Holistic Trace Analysis and other readers of Kineto traces
// expect of torch.profiler's (docs/kfprof-format.md section 5): its top-level keys, categories and kernel args.
// Streamed: events go to the ostream through a small buffer as they are formatted; the only memory proportional to the
// run is a few index arrays.
#include <kforge/profile_export.h>

#include <kforge/error.h>
#include <kforge/json_shapes.h>
#include <kforge/module_path.h>

#include "common/json_stream_writer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <ostream>
#include <set>
#include <string_view>
#include <unordered_map>

namespace kforge {
namespace {

bool onHost(const KernelRecord& r) { return r.kind == "cpu_op" || r.device < 0; }

std::string moduleDisplayName(const std::string& path) { return module_path::displayName(path); }

nlohmann::ordered_json runMetadata(const LabeledRun& labeled, int pidBase)
{
    const ProfileRun& run = *labeled.run;
    nlohmann::ordered_json meta{{"label", labeled.label}, {"host_pid", 1 + pidBase}};
    meta.update(runDescription(run));
    meta["records"] = run.records.size();
    meta["ranges"] = run.ranges.size();
    return meta;
}

// Writes one run's events. `first` tracks the comma between events; `nextFlowId` is shared by all runs.
class RunTraceWriter {
public:
    RunTraceWriter(JsonStreamWriter& w, const LabeledRun& labeled, int pidBase, bool& first,
                   unsigned long long& nextFlowId)
        : m_w(w), m_run(*labeled.run), m_label(labeled.label), m_hostPid(1 + pidBase), m_pidBase(pidBase),
          m_first(first), m_nextFlowId(nextFlowId)
    {
    }

    void write()
    {
        indexRanges();
        writeMetadata();
        for (size_t i = 0; i < m_run.ranges.size(); ++i)
            writeRange(i);
        std::string key;
        for (const KernelRecord& r : m_run.records) {
            const bool host = onHost(r); // once: comparing the kind per use cost 200 instructions a record
            writeRecord(r, host);
            if (!r.function.empty() && !r.graphReplay)
                if (const long fn = launchingCall(r, host, key); fn >= 0)
                    writeFlow(size_t(fn), r, host);
        }
        writeLiveBytes();
    }

private:
    int gpuPid(int device) const { return 2 + m_pidBase + std::max(0, device); }
    std::string suffix() const { return m_label.empty() ? "" : " (" + m_label + ")"; }

    // Function ranges grouped by (function, iteration), each group sorted by start; the innermost module range
    // around each function range (a sweep per thread over ranges sorted by start, longest first).
    void indexRanges()
    {
        const auto& ranges = m_run.ranges;
        std::vector<std::uint32_t> order(ranges.size());
        for (std::uint32_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            const RangeRecord& x = ranges[a];
            const RangeRecord& y = ranges[b];
            if (x.thread != y.thread)
                return x.thread < y.thread;
            if (x.startNs != y.startNs)
                return x.startNs < y.startNs;
            if (x.durationNs != y.durationNs)
                return x.durationNs > y.durationNs;
            return (x.kind == "module") > (y.kind == "module");
        });
        m_moduleOfRange.assign(ranges.size(), -1);
        std::vector<std::uint32_t> stack;
        std::uint64_t thread = 0;
        for (std::uint32_t i : order) {
            const RangeRecord& r = ranges[i];
            if (stack.empty() || r.thread != thread) {
                stack.clear();
                thread = r.thread;
            }
            while (!stack.empty() && end(ranges[stack.back()]) <= r.startNs)
                stack.pop_back();
            if (r.kind == "module") {
                stack.push_back(i);
            } else if (r.kind == "function") {
                if (!stack.empty())
                    m_moduleOfRange[i] = std::int32_t(stack.back());
                m_calls[groupKey(r.name, r.iteration)].push_back(i);
            }
        }
        for (auto& [key, calls] : m_calls)
            std::sort(calls.begin(), calls.end(),
                      [&](std::uint32_t a, std::uint32_t b) { return ranges[a].startNs < ranges[b].startNs; });
    }

    static std::int64_t end(const RangeRecord& r) { return r.startNs + r.durationNs; }

    static std::string groupKey(const std::string& function, int iteration)
    {
        std::string key;
        groupKeyInto(key, function, iteration);
        return key;
    }
    static void groupKeyInto(std::string& key, const std::string& function, int iteration)
    {
        key.assign(function);
        key.push_back('\x1f');
        char tmp[16];
        key.append(tmp, std::to_chars(tmp, tmp + sizeof tmp, iteration).ptr);
    }

    // The function call that launched `r`: a call of r.function in r.iteration on r's thread (when known) that
    // began at or before the launch. A CPU op execution contains the call it served (the interposer runs inside
    // the op), so for it the call begins before the op ends; a kernel starts after the call that launched it
    // began. The latest such call wins. -1 when there is none.
    long launchingCall(const KernelRecord& r, bool host, std::string& key)
    {
        // A call launches its records one after another: the group of the record before is the likeliest.
        if (!m_lastCalls || r.iteration != m_lastIteration || r.function != m_lastFunction) {
            groupKeyInto(key, r.function, r.iteration);
            const auto found = m_calls.find(key);
            m_lastCalls = found == m_calls.end() ? &m_noCalls : &found->second;
            m_lastFunction = r.function;
            m_lastIteration = r.iteration;
        }
        const auto& calls = *m_lastCalls;
        if (calls.empty())
            return -1;
        const auto& ranges = m_run.ranges;
        const std::int64_t anchor = host ? r.startNs + r.durationNs : r.startNs;
        auto it = std::upper_bound(calls.begin(), calls.end(), anchor,
                                   [&](std::int64_t t, std::uint32_t i) { return t < ranges[i].startNs; });
        for (int tries = 0; it != calls.begin() && tries < 64; ++tries) {
            --it;
            if (r.thread == 0 || ranges[*it].thread == r.thread)
                return long(*it);
        }
        return -1;
    }

    void beginEvent()
    {
        m_w.raw(m_first ? "\n" : ",\n");
        m_first = false;
    }

    void metadata(const char* name, int pid, std::uint64_t tid, bool withTid, const std::string& value, long sortIndex)
    {
        beginEvent();
        m_w.raw(R"({"ph":"M","name":")");
        m_w.raw(name);
        m_w.raw(R"(","pid":)");
        m_w.number(pid);
        m_w.raw(R"(,"tid":)");
        m_w.number(withTid ? tid : 0);
        m_w.raw(R"(,"ts":0,"args":{)");
        if (sortIndex >= 0) {
            m_w.raw(R"("sort_index":)");
            m_w.number(sortIndex);
        } else {
            m_w.raw(R"("name":)");
            m_w.string(value);
        }
        m_w.raw("}}");
    }

    void writeMetadata()
    {
        std::set<std::uint64_t> hostThreads;
        std::map<int, std::set<std::uint32_t>> streams; // device -> streams
        for (const RangeRecord& r : m_run.ranges)
            hostThreads.insert(r.thread);
        for (const KernelRecord& r : m_run.records) {
            if (onHost(r))
                hostThreads.insert(r.thread);
            else
                streams[r.device].insert(r.stream);
        }
        metadata("process_name", m_hostPid, 0, false, "host" + suffix(), -1);
        metadata("process_sort_index", m_hostPid, 0, false, "", m_hostPid);
        long index = 0;
        for (std::uint64_t t : hostThreads) {
            metadata("thread_name", m_hostPid, t, true, "thread " + std::to_string(t), -1);
            metadata("thread_sort_index", m_hostPid, t, true, "", index++);
        }
        for (const auto& [device, ids] : streams) {
            const int pid = gpuPid(device);
            metadata("process_name", pid, 0, false, "cuda:" + std::to_string(device) + suffix(), -1);
            metadata("process_sort_index", pid, 0, false, "", pid);
            index = 0;
            for (std::uint32_t s : ids) {
                metadata("thread_name", pid, s, true, "stream " + std::to_string(s), -1);
                metadata("thread_sort_index", pid, s, true, "", index++);
            }
        }
    }

    // profile --memory: a counter track "live bytes" on the host's process, one series per device, stepping at each
    // allocation and free (the bytes live above the first measured forward's start), as Perfetto draws counters.
    void writeLiveBytes()
    {
        struct Series {
            std::int64_t now = 0;
            std::string label; // "cuda:0", or "cuda:0 driver" for CUPTI's records of the driver's allocations
        };
        std::map<std::pair<std::string_view, bool>, Series> live; // by device, the driver's apart
        for (const MemoryRecord& event : m_run.memory) {
            Series& series = live[{event.device, event.driver}];
            if (series.label.empty())
                series.label = std::string(event.device) + (event.driver ? " driver" : "");
            std::int64_t& now = series.now;
            now += event.bytes;
            beginEvent();
            m_w.raw(R"({"ph":"C","cat":"memory","name":"live bytes","pid":)");
            m_w.number(m_hostPid);
            m_w.raw(R"(,"ts":)");
            m_w.micros(event.timeNs);
            m_w.raw(R"(,"args":{)");
            m_w.string(series.label);
            m_w.raw(":");
            m_w.number(now);
            m_w.raw("}}");
        }
    }

    void sliceHead(std::string_view cat, std::string_view name, int pid, std::uint64_t tid, std::int64_t startNs,
                   std::int64_t durationNs)
    {
        beginEvent();
        m_w.raw(R"({"ph":"X","cat":")");
        m_w.raw(cat);
        m_w.raw(R"(","name":)");
        m_w.string(name);
        m_w.raw(R"(,"pid":)");
        m_w.number(pid);
        m_w.raw(R"(,"tid":)");
        m_w.number(tid);
        m_w.raw(R"(,"ts":)");
        m_w.micros(startNs);
        m_w.raw(R"(,"dur":)");
        m_w.micros(std::max<std::int64_t>(0, durationNs));
        m_w.raw(R"(,"args":{)");
    }

    // Keys are literals: their lengths are known where they are written.
    template <size_t N> void arg(const char (&key)[N], std::string_view value, bool first = false)
    {
        m_w.raw(first ? "\"" : ",\"");
        m_w.raw(key);
        m_w.raw("\":");
        m_w.string(value);
    }
    template <size_t N> void argInt(const char (&key)[N], long long value)
    {
        m_w.raw(",\"");
        m_w.raw(key);
        m_w.raw("\":");
        m_w.number(value);
    }
    template <size_t N> void argDims(const char (&key)[N], const std::array<int, 3>& d)
    {
        m_w.raw(",\"");
        m_w.raw(key);
        m_w.raw("\":[");
        for (int i = 0; i < 3; ++i) {
            if (i)
                m_w.raw(",");
            m_w.number(d[size_t(i)]);
        }
        m_w.raw("]");
    }

    const std::string& moduleType(const std::string& path)
    {
        if (m_moduleTypes.empty())
            for (const ModuleInfo& m : m_run.modules)
                m_moduleTypes.emplace(m.path, m.typeName);
        static const std::string none;
        const auto it = m_moduleTypes.find(path);
        return it == m_moduleTypes.end() ? none : it->second;
    }

    void writeRange(size_t i)
    {
        const RangeRecord& r = m_run.ranges[i];
        if (r.kind == "module") {
            sliceHead("module", moduleDisplayName(r.name), m_hostPid, r.thread, r.startNs, r.durationNs);
            arg("module", r.name, true);
            if (const std::string& type = moduleType(r.name); !type.empty())
                arg("type", type);
        } else {
            sliceHead(r.kind == "function" ? "function" : "range", r.name, m_hostPid, r.thread, r.startNs,
                      r.durationNs);
            arg("function", r.name, true);
            arg("provider", r.provider);
            if (m_moduleOfRange[i] >= 0)
                arg("module", m_run.ranges[size_t(m_moduleOfRange[i])].name);
        }
        argInt("iteration", r.iteration);
        m_w.raw("}}");
    }

    // Kineto's categories: "kernel", "gpu_memcpy", "gpu_memset" on the GPU, "cpu_op" on the host.
    static std::string_view category(const KernelRecord& r)
    {
        if (r.kind == "kernel" || r.kind == "cpu_op")
            return r.kind;
        return r.kind == "memcpy" ? "gpu_memcpy" : r.kind == "memset" ? "gpu_memset" : "other";
    }

    void writeRecord(const KernelRecord& r, bool host)
    {
        const std::string_view cat = category(r);
        sliceHead(cat, r.name, host ? m_hostPid : gpuPid(r.device), host ? r.thread : r.stream, r.startNs,
                  r.durationNs);
        arg("module", r.modulePath, true);
        arg("function", r.function);
        arg("op", r.op);
        arg("provider", r.provider);
        if (!r.inputShapes.empty())
            arg("input_shapes", r.inputShapes); // torch.profiler's traces say "Input Dims"
        argInt("iteration", r.iteration);
        if (r.correlation != 0) {
            m_w.raw(R"(,"correlation":)");
            m_w.number(r.correlation);
        }
        if (!host) {
            argInt("device", r.device);
            argInt("stream", r.stream);
            m_w.raw(R"(,"thread":)");
            m_w.number(r.thread);
            if (cat == "kernel") { // Kineto's names for them
                argDims("grid", r.grid);
                argDims("block", r.block);
                argInt("registers per thread", r.registersPerThread);
                argInt("shared memory", r.sharedMemoryBytes);
            }
            if (r.graphReplay)
                m_w.raw(R"(,"graph_replay":true)");
        }
        m_w.raw("}}");
    }

    void flowEvent(char ph, unsigned long long id, int pid, std::uint64_t tid, std::int64_t tsNs)
    {
        beginEvent();
        m_w.raw(ph == 's' ? R"({"ph":"s","id":)" : R"({"ph":"f","bp":"e","id":)");
        m_w.number(id);
        m_w.raw(R"(,"cat":"launch","name":"launch","pid":)");
        m_w.number(pid);
        m_w.raw(R"(,"tid":)");
        m_w.number(tid);
        m_w.raw(R"(,"ts":)");
        m_w.micros(tsNs);
        m_w.raw("}");
    }

    // "s" strictly inside the call's slice, "f" strictly inside the record's slice but outside the call (a CPU op
    // execution contains the call it served on the same lane): flows bind to the slice open at their time.
    void writeFlow(size_t call, const KernelRecord& r, bool host)
    {
        const RangeRecord& fn = m_run.ranges[call];
        const unsigned long long id = m_nextFlowId++;
        flowEvent('s', id, m_hostPid, fn.thread, fn.startNs + fn.durationNs / 2);
        std::int64_t at = r.startNs + r.durationNs / 2;
        if (host && fn.thread == r.thread && fn.startNs >= r.startNs && end(fn) <= r.startNs + r.durationNs) {
            if (fn.startNs - r.startNs >= 2)
                at = r.startNs + (fn.startNs - r.startNs) / 2;
            else if (r.startNs + r.durationNs - end(fn) >= 2)
                at = end(fn) + (r.startNs + r.durationNs - end(fn)) / 2;
            else
                at = r.startNs;
        }
        flowEvent('f', id, host ? m_hostPid : gpuPid(r.device), host ? r.thread : r.stream, at);
    }

    JsonStreamWriter& m_w;
    const ProfileRun& m_run;
    std::string m_label;
    int m_hostPid;
    int m_pidBase;
    bool& m_first;
    unsigned long long& m_nextFlowId;
    std::vector<std::int32_t> m_moduleOfRange;
    std::unordered_map<std::string, std::vector<std::uint32_t>> m_calls;
    const std::vector<std::uint32_t>* m_lastCalls =
        nullptr; // launchingCall's group for m_lastFunction, m_lastIteration
    std::string m_lastFunction;
    int m_lastIteration = 0;
    const std::vector<std::uint32_t> m_noCalls;
    std::unordered_map<std::string, std::string> m_moduleTypes;
};

// The CUDA devices the runs' GPU records ran on, with the name of the first run's device (deviceProperties: the id
// and name are all kforge records of a device).
std::map<int, std::string> cudaDevices(const std::vector<LabeledRun>& runs)
{
    std::map<int, std::string> devices;
    for (const LabeledRun& labeled : runs)
        for (const KernelRecord& r : labeled.run->records)
            if (!onHost(r))
                devices.try_emplace(r.device, labeled.run->deviceName);
    return devices;
}

} // namespace

void writeChromeTrace(const std::vector<LabeledRun>& runs, std::ostream& out)
{
    JsonStreamWriter w(out);
    nlohmann::ordered_json meta{{"format", "kforge-trace"}, {"runs", nlohmann::ordered_json::array()}};
    for (size_t k = 0; k < runs.size(); ++k) {
        if (!runs[k].run)
            throw Error("Chrome trace", "run " + std::to_string(k) + " is missing");
        meta["runs"].push_back(runMetadata(runs[k], int(100 * k)));
    }
    // Kineto's top-level keys, as torch.profiler writes them, for Holistic Trace Analysis: it finds a file's rank by
    // the first line matching `"rank": N` (with the space), so distributedInfo comes first, on a line of its own.
    w.raw("{\"schemaVersion\": 1,\n\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n\"deviceProperties\": [");
    bool firstDevice = true;
    for (const auto& [device, name] : cudaDevices(runs)) {
        w.raw(firstDevice ? R"({"id":)" : R"(,{"id":)");
        firstDevice = false;
        w.number(device);
        w.raw(R"(,"name":)");
        w.string(name);
        w.raw("}");
    }
    w.raw("],\n\"displayTimeUnit\":\"ns\",\"kforge\":");
    w.raw(meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    w.raw(R"(,"traceEvents":[)");
    bool first = true;
    unsigned long long nextFlowId = 1;
    for (size_t k = 0; k < runs.size(); ++k)
        RunTraceWriter(w, runs[k], int(100 * k), first, nextFlowId).write();
    w.raw("\n]}\n");
    w.flush();
    out.flush();
}

void writeChromeTrace(const ProfileRun& run, std::ostream& out) { writeChromeTrace({LabeledRun{"", &run}}, out); }

} // namespace kforge
