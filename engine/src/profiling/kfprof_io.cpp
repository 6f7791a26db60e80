// SPDX-License-Identifier: Apache-2.0
// .kfprof result files (docs/kfprof-format.md): one JSON document holding whole profile runs. Records and ranges
// are written row by row (strings through a per-run string table), so saving a large run streams to disk.
#include <kforge/profile_export.h>

#include "common/file_text.h"
#include "common/json_stream_writer.h"
#include "common/json_text.h"

#include <kforge/error.h>
#include <kforge/json_shapes.h>
#include <kforge/version.h>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <ostream>
#include <string_view>
#include <unordered_map>

namespace kforge {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const char* const kRecordColumns[] = {"kind",
                                      "name",
                                      "module",
                                      "function",
                                      "op",
                                      "provider",
                                      "start_ns",
                                      "duration_ns",
                                      "thread",
                                      "device",
                                      "stream",
                                      "grid",
                                      "block",
                                      "registers_per_thread",
                                      "shared_memory_bytes",
                                      "correlation",
                                      "iteration",
                                      "graph_replay"};
const char* const kRangeColumns[] = {"kind", "name", "provider", "start_ns", "duration_ns", "thread", "iteration"};
constexpr size_t kRecordWidth = std::size(kRecordColumns);
constexpr size_t kRangeWidth = std::size(kRangeColumns);

// ---- base64 of little-endian float32 ---------------------------------------------------------------------------

const char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string encodeFloats(const std::vector<float>& values)
{
    std::string bytes;
    bytes.reserve(values.size() * 4);
    for (float f : values) {
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        for (int i = 0; i < 4; ++i)
            bytes.push_back(char((u >> (8 * i)) & 0xff));
    }
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const std::uint32_t b0 = std::uint8_t(bytes[i]);
        const std::uint32_t b1 = i + 1 < bytes.size() ? std::uint8_t(bytes[i + 1]) : 0;
        const std::uint32_t b2 = i + 2 < bytes.size() ? std::uint8_t(bytes[i + 2]) : 0;
        const std::uint32_t v = (b0 << 16) | (b1 << 8) | b2;
        out.push_back(kBase64[(v >> 18) & 63]);
        out.push_back(kBase64[(v >> 12) & 63]);
        out.push_back(i + 1 < bytes.size() ? kBase64[(v >> 6) & 63] : '=');
        out.push_back(i + 2 < bytes.size() ? kBase64[v & 63] : '=');
    }
    return out;
}

bool decodeFloats(const std::string& text, std::vector<float>& values)
{
    int map[256];
    std::fill(std::begin(map), std::end(map), -1);
    for (int i = 0; i < 64; ++i)
        map[std::uint8_t(kBase64[i])] = i;
    if (text.size() % 4 != 0)
        return false;
    std::string bytes;
    bytes.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        std::uint32_t v = 0;
        int pad = 0;
        for (size_t k = 0; k < 4; ++k) {
            const char c = text[i + k];
            if (c == '=' && i + 4 == text.size() && k >= 2) {
                ++pad;
                v <<= 6;
                continue;
            }
            if (pad || map[std::uint8_t(c)] < 0)
                return false;
            v = (v << 6) | std::uint32_t(map[std::uint8_t(c)]);
        }
        bytes.push_back(char((v >> 16) & 0xff));
        if (pad < 2)
            bytes.push_back(char((v >> 8) & 0xff));
        if (pad < 1)
            bytes.push_back(char(v & 0xff));
    }
    if (bytes.size() % 4 != 0)
        return false;
    values.resize(bytes.size() / 4);
    for (size_t i = 0; i < values.size(); ++i) {
        std::uint32_t u = 0;
        for (int k = 0; k < 4; ++k)
            u |= std::uint32_t(std::uint8_t(bytes[4 * i + size_t(k)])) << (8 * k);
        std::memcpy(&values[i], &u, 4);
    }
    return true;
}

// ---- writing ---------------------------------------------------------------------------------------------------

ordered_json runHead(const LabeledRun& labeled)
{
    const ProfileRun& run = *labeled.run;
    ordered_json head{{"label", labeled.label}};
    head.update(runDescription(run));
    head["modules"] = run.modules;
    head["outputs"] = run.outputs;
    head["output_values"] = ordered_json::array();
    for (const auto& values : run.outputValues)
        head["output_values"].push_back(
            {{"encoding", "base64-f32le"}, {"count", values.size()}, {"data", encodeFloats(values)}});
    ordered_json stats = ordered_json::object();
    for (const auto& [name, by] : {std::pair{"kernel", GroupBy::Kernel}, std::pair{"function", GroupBy::Function},
                                   std::pair{"module", GroupBy::Module}})
        stats[name] = statistics(run.records, by);
    head["statistics"] = std::move(stats);
    return head;
}

void writeRun(JsonStreamWriter& w, const LabeledRun& labeled)
{
    const ProfileRun& run = *labeled.run;
    std::string head = runHead(labeled).dump(1, '\t', false, json::error_handler_t::replace);
    // "{ ... }" -> "{ ..." so that the streamed members follow
    if (head.size() >= 2 && head.compare(head.size() - 2, 2, "\n}") == 0)
        head.resize(head.size() - 2);
    else if (!head.empty() && head.back() == '}')
        head.pop_back();
    w.raw(head);

    std::unordered_map<std::string_view, std::uint32_t> index;
    std::vector<std::string_view> strings;
    const auto id = [&](const std::string& s) {
        const auto [it, added] = index.emplace(s, std::uint32_t(strings.size()));
        if (added)
            strings.push_back(s);
        return it->second;
    };
    id("");
    for (const KernelRecord& r : run.records)
        for (const std::string* s : {&r.kind, &r.name, &r.modulePath, &r.function, &r.op, &r.provider})
            id(*s);
    for (const RangeRecord& r : run.ranges)
        for (const std::string* s : {&r.kind, &r.name, &r.provider})
            id(*s);

    w.raw(",\n\t\"strings\": [");
    for (size_t i = 0; i < strings.size(); ++i) {
        w.raw(i ? ",\n\t\t" : "\n\t\t");
        w.string(strings[i]);
    }
    w.raw("\n\t],\n\t\"record_columns\": ");
    w.raw(json(std::vector<std::string>(std::begin(kRecordColumns), std::end(kRecordColumns))).dump());
    w.raw(",\n\t\"records\": [");
    bool first = true;
    for (const KernelRecord& r : run.records) {
        w.raw(first ? "\n\t\t[" : ",\n\t\t[");
        first = false;
        for (const std::string* s : {&r.kind, &r.name, &r.modulePath, &r.function, &r.op, &r.provider}) {
            w.number(index.find(*s)->second);
            w.raw(",");
        }
        w.number(r.startNs);
        w.raw(",");
        w.number(r.durationNs);
        w.raw(",");
        w.number(r.thread);
        w.raw(",");
        w.number(r.device);
        w.raw(",");
        w.number(r.stream);
        for (const auto* dims : {&r.grid, &r.block}) {
            w.raw(",[");
            w.number((*dims)[0]);
            w.raw(",");
            w.number((*dims)[1]);
            w.raw(",");
            w.number((*dims)[2]);
            w.raw("]");
        }
        w.raw(",");
        w.number(r.registersPerThread);
        w.raw(",");
        w.number(r.sharedMemoryBytes);
        w.raw(",");
        w.number(r.correlation);
        w.raw(",");
        w.number(r.iteration);
        w.raw(r.graphReplay ? ",1]" : ",0]");
    }
    w.raw(first ? "],\n\t\"range_columns\": " : "\n\t],\n\t\"range_columns\": ");
    w.raw(json(std::vector<std::string>(std::begin(kRangeColumns), std::end(kRangeColumns))).dump());
    w.raw(",\n\t\"ranges\": [");
    first = true;
    for (const RangeRecord& r : run.ranges) {
        w.raw(first ? "\n\t\t[" : ",\n\t\t[");
        first = false;
        for (const std::string* s : {&r.kind, &r.name, &r.provider}) {
            w.number(index.find(*s)->second);
            w.raw(",");
        }
        w.number(r.startNs);
        w.raw(",");
        w.number(r.durationNs);
        w.raw(",");
        w.number(r.thread);
        w.raw(",");
        w.number(r.iteration);
        w.raw("]");
    }
    w.raw(first ? "]\n}" : "\n\t]\n}");
}

std::string utcNow()
{
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// ---- reading ---------------------------------------------------------------------------------------------------

// Typed access with the JSON path in every error.
class Reader {
public:
    explicit Reader(std::string where) : m_where(std::move(where)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& why) const
    {
        throw Error(m_where, (path.empty() ? std::string("/") : path) + ": " + why);
    }
    const json* find(const json& object, const std::string& path, const char* key, bool required) const
    {
        if (!object.is_object())
            fail(path, "expected an object, found " + jsonTypeName(object));
        const auto it = object.find(key);
        if (it == object.end()) {
            if (required)
                fail(path + "/" + key, "missing");
            return nullptr;
        }
        return &*it;
    }
    std::string string(const json& object, const std::string& path, const char* key, bool required = false) const
    {
        const json* v = find(object, path, key, required);
        if (!v)
            return {};
        if (!v->is_string())
            fail(path + "/" + key, "expected a string, found " + jsonTypeName(*v));
        return v->get<std::string>();
    }
    template <typename T> T integer(const json& v, const std::string& path) const
    {
        if (!v.is_number_integer())
            fail(path, "expected an integer, found " + jsonTypeName(v));
        if (v.is_number_unsigned()) {
            const auto u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
                fail(path, "out of range");
            return static_cast<T>(u);
        }
        const auto s = v.get<std::int64_t>();
        if constexpr (std::is_unsigned_v<T>) {
            if (s < 0)
                fail(path, "expected a non-negative integer");
        } else {
            if (s < std::int64_t(std::numeric_limits<T>::min()) || s > std::int64_t(std::numeric_limits<T>::max()))
                fail(path, "out of range");
        }
        return static_cast<T>(s);
    }
    template <typename T> T integer(const json& object, const std::string& path, const char* key, T fallback) const
    {
        const json* v = find(object, path, key, false);
        return v ? integer<T>(*v, path + "/" + key) : fallback;
    }
    bool boolean(const json& object, const std::string& path, const char* key, bool missing = false) const
    {
        const json* v = find(object, path, key, false);
        if (!v)
            return missing;
        if (v->is_boolean())
            return v->get<bool>();
        if (v->is_number_integer())
            return v->get<std::int64_t>() != 0;
        fail(path + "/" + key, "expected a boolean, found " + jsonTypeName(*v));
    }
    double real(const json& v, const std::string& path) const
    {
        if (v.is_number())
            return v.get<double>();
        if (v.is_string()) {
            const auto s = v.get<std::string>();
            if (s == "NaN")
                return std::numeric_limits<double>::quiet_NaN();
            if (s == "Infinity")
                return std::numeric_limits<double>::infinity();
            if (s == "-Infinity")
                return -std::numeric_limits<double>::infinity();
        }
        if (v.is_null())
            return std::numeric_limits<double>::quiet_NaN();
        fail(path, "expected a number, found " + jsonTypeName(v));
    }
    const json& array(const json& object, const std::string& path, const char* key, bool required = false) const
    {
        static const json empty = json::array();
        const json* v = find(object, path, key, required);
        if (!v)
            return empty;
        if (!v->is_array())
            fail(path + "/" + key, "expected an array, found " + jsonTypeName(*v));
        return *v;
    }
    std::vector<std::string> strings(const json& object, const std::string& path, const char* key) const
    {
        std::vector<std::string> out;
        const json& a = array(object, path, key);
        for (size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_string())
                fail(path + "/" + key + "/" + std::to_string(i), "expected a string, found " + jsonTypeName(a[i]));
            out.push_back(a[i].get<std::string>());
        }
        return out;
    }
    std::map<std::string, int> counts(const json& object, const std::string& path, const char* key) const
    {
        std::map<std::string, int> out;
        const json* v = find(object, path, key, false);
        if (!v)
            return out;
        if (!v->is_object())
            fail(path + "/" + key, "expected an object, found " + jsonTypeName(*v));
        for (const auto& [name, n] : v->items())
            out[name] = integer<int>(n, path + "/" + key + "/" + name);
        return out;
    }
    const std::string& where() const { return m_where; }

private:
    std::string m_where;
};

// Column name -> position in a row, from "record_columns" / "range_columns" (a file may add columns).
std::vector<int> columnSlots(const Reader& rd, const json& run, const std::string& path, const char* key,
                             const char* const* known, size_t count)
{
    std::vector<int> slots(count, -1);
    const auto names = rd.strings(run, path, key);
    if (names.empty())
        rd.fail(path + "/" + key, "missing or empty");
    for (size_t k = 0; k < count; ++k)
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == known[k])
                slots[k] = int(i);
    return slots;
}

// Runs decode(cell, cellPath) on one row of a table: cell(k) is column k's value, or null when the file has no
// such column; cellPath(k) its JSON path for error messages. rowPath() is only called for an error.
template <class RowPath, class Decode>
void readRow(const Reader& rd, const json& row, const RowPath& rowPath, const std::vector<int>& slot, Decode decode)
{
    if (!row.is_array())
        rd.fail(rowPath(), "expected an array, found " + jsonTypeName(row));
    const auto cell = [&](size_t k) -> const json* {
        if (slot[k] < 0)
            return nullptr;
        if (size_t(slot[k]) >= row.size())
            rd.fail(rowPath(), "has " + std::to_string(row.size()) + " values, fewer than the columns");
        return &row[size_t(slot[k])];
    };
    const auto cellPath = [&](size_t k) { return rowPath() + "/" + std::to_string(slot[k]); };
    decode(cell, cellPath);
}

// An integer cell of type T; its path is only spelled out when it is not one.
template <class T, class CellPath> T cellInteger(const Reader& rd, const json& v, const CellPath& cellPath, size_t k)
{
    if (v.is_number_unsigned()) {
        if (const auto u = v.get<std::uint64_t>(); u <= std::uint64_t(std::numeric_limits<T>::max()))
            return T(u);
    } else if (v.is_number_integer()) {
        const auto s = v.get<std::int64_t>();
        if constexpr (std::is_signed_v<T>) {
            if (s >= std::int64_t(std::numeric_limits<T>::min()) && s <= std::int64_t(std::numeric_limits<T>::max()))
                return T(s);
        } else if (s >= 0 && std::uint64_t(s) <= std::uint64_t(std::numeric_limits<T>::max())) {
            return T(s);
        }
    }
    return rd.integer<T>(v, cellPath(k)); // fails, naming the cell
}

// A string-table index as its string.
template <class CellPath>
const std::string& tableText(const Reader& rd, const std::vector<std::string>& strings, const json& v,
                             const CellPath& cellPath, size_t k)
{
    const auto i = cellInteger<std::uint64_t>(rd, v, cellPath, k);
    if (i >= strings.size())
        rd.fail(cellPath(k), "string index " + std::to_string(i) + " is outside the string table (" +
                                 std::to_string(strings.size()) + " strings)");
    return strings[size_t(i)];
}

template <class Cell, class CellPath>
KernelRecord decodeRecord(const Reader& rd, const std::vector<std::string>& strings, const Cell& cell,
                          const CellPath& cellPath)
{
    KernelRecord r;
    std::string* texts[] = {&r.kind, &r.name, &r.modulePath, &r.function, &r.op, &r.provider};
    for (size_t k = 0; k < 6; ++k)
        if (const json* c = cell(k))
            *texts[k] = tableText(rd, strings, *c, cellPath, k);
    const auto integer = [&]<class T>(size_t k, T& out) {
        if (const json* c = cell(k))
            out = cellInteger<T>(rd, *c, cellPath, k);
    };
    integer(6, r.startNs);
    integer(7, r.durationNs);
    integer(8, r.thread);
    integer(9, r.device);
    integer(10, r.stream);
    for (size_t k : {size_t(11), size_t(12)}) {
        if (const json* c = cell(k)) {
            if (!c->is_array() || c->size() != 3)
                rd.fail(cellPath(k), "expected [x, y, z]");
            auto& dims = k == 11 ? r.grid : r.block;
            for (size_t d = 0; d < 3; ++d)
                dims[d] = cellInteger<int>(
                    rd, (*c)[d], [&](size_t) { return cellPath(k) + "/" + std::to_string(d); }, k);
        }
    }
    integer(13, r.registersPerThread);
    integer(14, r.sharedMemoryBytes);
    integer(15, r.correlation);
    integer(16, r.iteration);
    if (const json* c = cell(17))
        r.graphReplay = c->is_boolean() ? c->get<bool>() : cellInteger<int>(rd, *c, cellPath, 17) != 0;
    return r;
}

template <class Cell, class CellPath>
RangeRecord decodeRange(const Reader& rd, const std::vector<std::string>& strings, const Cell& cell,
                        const CellPath& cellPath)
{
    RangeRecord r;
    std::string* texts[] = {&r.kind, &r.name, &r.provider};
    for (size_t k = 0; k < 3; ++k)
        if (const json* c = cell(k))
            *texts[k] = tableText(rd, strings, *c, cellPath, k);
    const auto integer = [&]<class T>(size_t k, T& out) {
        if (const json* c = cell(k))
            out = cellInteger<T>(rd, *c, cellPath, k);
    };
    integer(3, r.startNs);
    integer(4, r.durationNs);
    integer(5, r.thread);
    integer(6, r.iteration);
    return r;
}

// A run's records and ranges, decoded while the file is parsed (parseJsonText's sink) so that no DOM of their
// cells is ever held: possible when the run's string table and columns come before its rows, as kforge writes
// them. Rows that come first stay in the document and readRun decodes them there.
struct StreamedTables {
    std::vector<std::string> strings;
    std::vector<int> recordSlots, rangeSlots; // empty until the table's first row is taken
    std::vector<KernelRecord> records;
    std::vector<RangeRecord> ranges;
};

class StreamingRowReader {
public:
    explicit StreamingRowReader(const Reader& rd) : m_rd(rd) {}
    std::vector<StreamedTables>& runs() { return m_runs; }

    // Takes /runs/K/records/I and /runs/K/ranges/I rows once the run's strings and that table's columns are known.
    bool take(const ClosedJsonContainer& closed)
    {
        const auto& path = closed.path;
        if (path.size() != 4 || path[0].key != "runs" || (path[2].key != "records" && path[2].key != "ranges"))
            return false;
        const json& run = *closed.containers[2];
        const size_t k = path[1].index;
        if (m_runs.size() <= k)
            m_runs.resize(k + 1);
        StreamedTables& tables = m_runs[k];
        const bool records = path[2].key == "records";
        std::vector<int>& slots = records ? tables.recordSlots : tables.rangeSlots;
        if (slots.empty()) {
            const char* columnsKey = records ? "record_columns" : "range_columns";
            if (!run.contains("strings") || !run.contains(columnsKey))
                return false; // left in the document for readRun
            const std::string runPath = "/runs/" + std::to_string(k);
            if (tables.strings.empty())
                tables.strings = m_rd.strings(run, runPath, "strings");
            slots = records ? columnSlots(m_rd, run, runPath, columnsKey, kRecordColumns, kRecordWidth)
                            : columnSlots(m_rd, run, runPath, columnsKey, kRangeColumns, kRangeWidth);
        }
        const auto rowPath = [&] {
            return "/runs/" + std::to_string(k) + "/" + std::string(path[2].key) + "/" + std::to_string(path[3].index);
        };
        readRow(m_rd, closed.value, rowPath, slots, [&](const auto& cell, const auto& cellPath) {
            if (records)
                tables.records.push_back(decodeRecord(m_rd, tables.strings, cell, cellPath));
            else
                tables.ranges.push_back(decodeRange(m_rd, tables.strings, cell, cellPath));
        });
        return true;
    }

private:
    const Reader& m_rd;
    std::vector<StreamedTables> m_runs;
};

ProfileRun readRun(const Reader& rd, const json& j, const std::string& path, std::string& label,
                   StreamedTables&& streamed)
{
    ProfileRun run;
    label = rd.string(j, path, "label");
    run.model = rd.string(j, path, "model");
    run.inputs = rd.strings(j, path, "inputs");
    run.device = rd.string(j, path, "device", true);
    run.deviceName = rd.string(j, path, "device_name");
    run.graphExecutor = rd.string(j, path, "graph_executor");
    if (const json* v = rd.find(j, path, "versions", false)) {
        run.torchVersion = rd.string(*v, path + "/versions", "torch");
        run.cuptiVersion = rd.string(*v, path + "/versions", "cupti");
        run.kforgeVersion = rd.string(*v, path + "/versions", "kforge");
    }
    run.warmupIterations = rd.integer<int>(j, path, "warmup_iterations", 0);
    run.iterations = rd.integer<int>(j, path, "iterations", 0);
    run.cancelled = rd.boolean(j, path, "cancelled");
    run.droppedRecords = rd.integer<std::uint64_t>(j, path, "dropped_records", 0);
    run.wallNs = rd.integer<std::int64_t>(j, path, "wall_ns", 0);
    run.usedPlan = rd.boolean(j, path, "used_plan");
    if (const json* plan = rd.find(j, path, "plan", false); plan && !plan->is_null()) {
        if (!plan->is_object())
            rd.fail(path + "/plan", "expected an object, found " + jsonTypeName(*plan));
        run.plan = parsePlanJson(*plan, rd.where() + " " + path + "/plan");
    }

    if (const json* declines = rd.find(j, path, "declines", false)) { // optional: older files lack it
        if (!declines->is_array())
            rd.fail(path + "/declines", "expected an array, found " + jsonTypeName(*declines));
        for (size_t i = 0; i < declines->size(); ++i) {
            const std::string p = path + "/declines/" + std::to_string(i);
            const json& d = (*declines)[i];
            run.declines.push_back({rd.integer<int>(d, p, "entry", -1), rd.string(d, p, "scope"),
                                    rd.string(d, p, "function"), rd.string(d, p, "provider"),
                                    rd.integer<std::uint64_t>(d, p, "calls", 0), rd.string(d, p, "last_reason")});
        }
    }

    const json& modules = rd.array(j, path, "modules");
    for (size_t i = 0; i < modules.size(); ++i) {
        const std::string p = path + "/modules/" + std::to_string(i);
        const json& m = modules[i];
        ModuleInfo info;
        info.path = rd.string(m, p, "path", true);
        info.name = rd.string(m, p, "name");
        info.typeName = rd.string(m, p, "type");
        info.qualifiedTypeName = rd.string(m, p, "qualified_type");
        info.parameterCount = rd.integer<std::int64_t>(m, p, "parameters", 0);
        info.parameterBytes = rd.integer<std::int64_t>(m, p, "parameter_bytes", 0);
        info.subtreeParameterCount = rd.integer<std::int64_t>(m, p, "subtree_parameters", 0);
        info.subtreeParameterBytes = rd.integer<std::int64_t>(m, p, "subtree_parameter_bytes", 0);
        info.children = rd.strings(m, p, "children");
        info.functions = rd.counts(m, p, "functions");
        info.subtreeFunctions = rd.counts(m, p, "subtree_functions");
        info.depth = rd.integer<int>(m, p, "depth", 0);
        info.hasForward = rd.boolean(m, p, "has_forward", true); // files before these were written: unknown
        info.forwardCalled = rd.boolean(m, p, "forward_called", true);
        run.modules.push_back(std::move(info));
    }

    const json& outputs = rd.array(j, path, "outputs");
    for (size_t i = 0; i < outputs.size(); ++i) {
        const std::string p = path + "/outputs/" + std::to_string(i);
        const json& o = outputs[i];
        TensorDigest d;
        d.path = rd.string(o, p, "path");
        d.dtype = rd.string(o, p, "dtype");
        d.device = rd.string(o, p, "device");
        const json& shape = rd.array(o, p, "shape");
        for (size_t k = 0; k < shape.size(); ++k)
            d.shape.push_back(rd.integer<std::int64_t>(shape[k], p + "/shape/" + std::to_string(k)));
        if (const json* v = rd.find(o, p, "sum", false))
            d.sum = rd.real(*v, p + "/sum");
        if (const json* v = rd.find(o, p, "max_abs", false))
            d.maxAbs = rd.real(*v, p + "/max_abs");
        run.outputs.push_back(std::move(d));
    }
    const json& values = rd.array(j, path, "output_values");
    for (size_t i = 0; i < values.size(); ++i) {
        const std::string p = path + "/output_values/" + std::to_string(i);
        const std::string encoding = rd.string(values[i], p, "encoding", true);
        if (encoding != "base64-f32le")
            rd.fail(p + "/encoding", "unknown encoding '" + encoding + "' (this build reads base64-f32le)");
        std::vector<float> v;
        if (!decodeFloats(rd.string(values[i], p, "data", true), v))
            rd.fail(p + "/data", "not valid base64 of float32 values");
        if (const json* count = rd.find(values[i], p, "count", false);
            count && rd.integer<std::uint64_t>(*count, p + "/count") != v.size())
            rd.fail(p + "/count", "says " + count->dump() + " values, the data holds " + std::to_string(v.size()));
        run.outputValues.push_back(std::move(v));
    }

    // Rows the streaming reader took are gone from the document; any left are decoded here, after them.
    run.records = std::move(streamed.records);
    run.ranges = std::move(streamed.ranges);
    const auto strings = rd.strings(j, path, "strings");
    for (const auto& [key, columnsKey] :
         {std::pair{"records", "record_columns"}, std::pair{"ranges", "range_columns"}}) {
        const json& rows = rd.array(j, path, key);
        if (rows.empty())
            continue;
        const bool records = std::string_view(key) == "records";
        const auto slots = records ? columnSlots(rd, j, path, columnsKey, kRecordColumns, kRecordWidth)
                                   : columnSlots(rd, j, path, columnsKey, kRangeColumns, kRangeWidth);
        for (size_t i = 0; i < rows.size(); ++i)
            readRow(
                rd, rows[i], [&] { return path + "/" + key + "/" + std::to_string(i); }, slots,
                [&](const auto& cell, const auto& cellPath) {
                    if (records)
                        run.records.push_back(decodeRecord(rd, strings, cell, cellPath));
                    else
                        run.ranges.push_back(decodeRange(rd, strings, cell, cellPath));
                });
    }
    return run;
}

} // namespace

void writeProfile(const std::vector<LabeledRun>& runs, std::ostream& out)
{
    for (size_t k = 0; k < runs.size(); ++k)
        if (!runs[k].run)
            throw Error("saving a profile", "run " + std::to_string(k) + " is missing");
    JsonStreamWriter w(out);
    w.raw("{\n\t\"format\": \"");
    w.raw(kProfileFormatName);
    w.raw("\",\n\t\"version\": ");
    w.number(kProfileFormatVersion);
    w.raw(",\n\t\"kforge_version\": ");
    w.string(KFORGE_VERSION_STRING);
    w.raw(",\n\t\"created\": ");
    w.string(utcNow());
    w.raw(",\n\t\"runs\": [\n");
    for (size_t k = 0; k < runs.size(); ++k) {
        if (k)
            w.raw(",\n");
        writeRun(w, runs[k]);
    }
    w.raw("\n]\n}\n");
    w.flush();
    out.flush();
}

void saveProfiles(const std::vector<LabeledRun>& runs, const std::string& path)
{
    if (runs.empty())
        throw Error(path, "no run to save");
    writeFileStreaming(path, [&](std::ostream& out) { writeProfile(runs, out); });
}

void saveProfile(const ProfileRun& run, const std::string& path)
{
    saveProfiles({LabeledRun{run.usedPlan ? "plan" : "baseline", &run}}, path);
}

std::vector<SavedRun> parseProfile(const std::string& text, const std::string& where)
{
    const Reader rd(where);
    StreamingRowReader rows(rd);
    const json root = parseJsonText(text, where, [&](const ClosedJsonContainer& closed) { return rows.take(closed); });
    if (!root.is_object())
        throw Error(where, "not a kforge profile: the file holds " + jsonTypeName(root) + ", not an object");
    const auto format = root.find("format");
    if (format == root.end() || !format->is_string()) {
        if (root.contains("traceEvents"))
            throw Error(where, "is a Chrome trace (kforge profile --trace), not a profile result file "
                               "(kforge profile --save FILE.kfprof writes one)");
        throw Error(where, std::string("not a kforge profile: no \"format\": \"") + kProfileFormatName + "\"");
    }
    const std::string name = format->get<std::string>();
    if (name != kProfileFormatName) {
        if (name == "kforge-plan")
            throw Error(where, "is a kforge plan, not a profile result file (use it with --plan)");
        throw Error(where, "not a kforge profile: \"format\" is '" + name + "', expected '" + kProfileFormatName + "'");
    }
    const json* version = rd.find(root, "", "version", true);
    const auto v = rd.integer<long long>(*version, "/version");
    if (v > kProfileFormatVersion)
        throw Error(where, "format version " + std::to_string(v) + " is newer than this build reads (" +
                               std::to_string(kProfileFormatVersion) + "): open it with a newer kforge");
    if (v < 1)
        throw Error(where, "format version " + std::to_string(v) + " is not valid (versions start at 1)");
    const json& runs = rd.array(root, "", "runs", true);
    if (runs.empty())
        throw Error(where, "/runs: holds no run");
    std::vector<SavedRun> out;
    out.reserve(runs.size());
    for (size_t k = 0; k < runs.size(); ++k) {
        SavedRun saved;
        saved.run = readRun(rd, runs[k], "/runs/" + std::to_string(k), saved.label,
                            k < rows.runs().size() ? std::move(rows.runs()[k]) : StreamedTables());
        out.push_back(std::move(saved));
    }
    return out;
}

std::vector<SavedRun> loadProfiles(const std::string& path)
{
    return parseProfile(readTextFile(path, "is a folder, not a profile file"), path);
}

ProfileRun loadProfile(const std::string& path) { return std::move(loadProfiles(path).front().run); }

} // namespace kforge
