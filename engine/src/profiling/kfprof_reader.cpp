// SPDX-License-Identifier: Apache-2.0
// Reading .kfprof result files (docs/kfprof-format.md): every error names the file and the JSON path of the value
// that is wrong. The rows of the record and range tables are decoded while the file is parsed, so a large profile
// never holds a DOM of its cells.
#include <kforge/profile_export.h>

#include "common/file_text.h"
#include "common/json_reader.h"
#include "common/json_shapes_read.h"
#include "common/json_text.h"
#include "profiling/kfprof_codec.h"
#include "profiling/record_columns.h"

#include <kforge/error.h>
#include <kforge/module_path.h>
#include <kforge/json_shapes.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <string_view>

namespace kforge {
namespace {

using nlohmann::json;

// The columns this build reads for a record type, in record_columns.h's order.
template <class Record> const std::vector<std::string>& knownColumns()
{
    static const std::vector<std::string> names = record_columns::names<Record>();
    return names;
}

// Column index -> position in a row, from "record_columns" / "range_columns" (a file may add columns, or lack some).
template <class Record>
std::vector<int> columnSlots(const JsonReader& rd, const json& run, const std::string& path, const char* key)
{
    const std::vector<std::string>& known = knownColumns<Record>();
    std::vector<int> slots(known.size(), -1);
    const auto names = rd.strings(run, path, key);
    if (names.empty())
        rd.fail(path + "/" + key, "missing or empty");
    for (size_t k = 0; k < known.size(); ++k)
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == known[k])
                slots[k] = int(i);
    return slots;
}

// Runs decode(cell, cellPath) on one row of a table: cell(k) is column k's value, or null when the file has no
// such column; cellPath(k) its JSON path for error messages. rowPath() is only called for an error.
template <class RowPath, class Decode>
void readRow(const JsonReader& rd, const json& row, const RowPath& rowPath, const std::vector<int>& slot, Decode decode)
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
template <class T, class CellPath>
T cellInteger(const JsonReader& rd, const json& v, const CellPath& cellPath, size_t k)
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
const std::string& tableText(const JsonReader& rd, const std::vector<std::string>& strings, const json& v,
                             const CellPath& cellPath, size_t k)
{
    const auto i = cellInteger<std::uint64_t>(rd, v, cellPath, k);
    if (i >= strings.size())
        rd.fail(cellPath(k), "string index " + std::to_string(i) + " is outside the string table (" +
                                 std::to_string(strings.size()) + " strings)");
    return strings[size_t(i)];
}

// One row of a table as a record: each column the file has, decoded by its field's type.
template <class Record, class Cell, class CellPath>
Record decodeRow(const JsonReader& rd, const std::vector<std::string>& strings, const Cell& cell,
                 const CellPath& cellPath)
{
    Record r;
    size_t k = 0;
    record_columns::forEachColumn(r, [&](const char*, auto& value) {
        using T = decltype(value);
        const json* c = cell(k);
        if (c) {
            if constexpr (record_columns::kIsInterned<T>) {
                value = internedText(tableText(rd, strings, *c, cellPath, k));
            } else if constexpr (record_columns::kIsText<T>) {
                value = tableText(rd, strings, *c, cellPath, k);
            } else if constexpr (record_columns::kIsDims<T>) {
                if (!c->is_array() || c->size() != 3)
                    rd.fail(cellPath(k), "expected [x, y, z]");
                for (size_t d = 0; d < 3; ++d)
                    value[d] = cellInteger<int>(
                        rd, (*c)[d], [&](size_t) { return cellPath(k) + "/" + std::to_string(d); }, k);
            } else if constexpr (record_columns::kIsFlag<T>) {
                value = c->is_boolean() ? c->get<bool>() : cellInteger<int>(rd, *c, cellPath, k) != 0;
            } else {
                value = cellInteger<std::remove_reference_t<T>>(rd, *c, cellPath, k);
            }
        }
        ++k;
    });
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
    explicit StreamingRowReader(const JsonReader& rd) : m_rd(rd) {}
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
            slots = records ? columnSlots<KernelRecord>(m_rd, run, runPath, columnsKey)
                            : columnSlots<RangeRecord>(m_rd, run, runPath, columnsKey);
        }
        const auto rowPath = [&] {
            return "/runs/" + std::to_string(k) + "/" + std::string(path[2].key) + "/" + std::to_string(path[3].index);
        };
        readRow(m_rd, closed.value, rowPath, slots, [&](const auto& cell, const auto& cellPath) {
            if (records)
                tables.records.push_back(decodeRow<KernelRecord>(m_rd, tables.strings, cell, cellPath));
            else
                tables.ranges.push_back(decodeRow<RangeRecord>(m_rd, tables.strings, cell, cellPath));
        });
        return true;
    }

private:
    const JsonReader& m_rd;
    std::vector<StreamedTables> m_runs;
};

// What no measurement writes, though each value parses: negative or no iterations, a module tree with a path twice or
// a child that is not its parent's (a cycle), a duration of centuries. Read as they were, they printed as results.
void checkRunIsConsistent(const JsonReader& rd, const ProfileRun& run, const std::string& path)
{
    if (run.warmupIterations < 0)
        rd.fail(path + "/warmup_iterations", "is " + std::to_string(run.warmupIterations) + ", below 0");
    if (run.iterations < 0 || (run.iterations == 0 && !run.cancelled))
        rd.fail(path + "/iterations", "is " + std::to_string(run.iterations) +
                                          ": a run that was not cancelled measured at least one iteration");
    if (run.wallNs < 0)
        rd.fail(path + "/wall_ns", "is negative");
    std::unordered_map<std::string_view, size_t> indexOf;
    for (size_t i = 0; i < run.modules.size(); ++i) {
        const auto [first, added] = indexOf.emplace(run.modules[i].path, i);
        if (!added)
            rd.fail(path + "/modules/" + std::to_string(i),
                    "module path '" + module_path::displayName(run.modules[i].path) + "' is module " +
                        std::to_string(first->second) + "'s too: a tree names each module once");
    }
    for (size_t i = 0; i < run.modules.size(); ++i)
        for (const std::string& child : run.modules[i].children)
            if (child.empty() || module_path::parentOf(child) != run.modules[i].path || !indexOf.count(child))
                rd.fail(path + "/modules/" + std::to_string(i) + "/children",
                        "names '" + child + "', which is not a module of the file below '" +
                            module_path::displayName(run.modules[i].path) + "'");
    // A week: longer than any profile runs, far below the 2^63 ns a corrupted value reads as.
    constexpr std::int64_t kLongestNs = std::int64_t(7) * 24 * 3600 * 1000000000LL;
    const auto checkDuration = [&](std::int64_t start, std::int64_t duration, const char* table, size_t i) {
        if (duration < 0 || duration > kLongestNs || start < -kLongestNs || start > kLongestNs)
            rd.fail(path + "/" + table + "/" + std::to_string(i),
                    "starts at " + std::to_string(start) + " ns and lasts " + std::to_string(duration) +
                        " ns: not a measurement (a profile spans at most a week)");
    };
    for (size_t i = 0; i < run.records.size(); ++i)
        checkDuration(run.records[i].startNs, run.records[i].durationNs, "records", i);
    for (size_t i = 0; i < run.ranges.size(); ++i)
        checkDuration(run.ranges[i].startNs, run.ranges[i].durationNs, "ranges", i);
}

ProfileRun readRun(const JsonReader& rd, const json& j, const std::string& path, std::string& label,
                   StreamedTables&& streamed)
{
    ProfileRun run;
    label = rd.string(j, path, "label");
    run.model = rd.string(j, path, "model");
    run.inputs = rd.strings(j, path, "inputs");
    run.device = rd.string(j, path, "device", true);
    run.deviceName = rd.string(j, path, "device_name");
    run.graphExecutor = rd.string(j, path, "graph_executor");
    run.intraOpThreads = rd.integer<int>(j, path, "intra_op_threads", 0);
    run.cores = rd.integer<int>(j, path, "cores", 0);
    if (const json* load = rd.find(j, path, "load_average", false))
        run.loadAverage = rd.real(*load, path + "/load_average");
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
        for (size_t i = 0; i < declines->size(); ++i)
            run.declines.push_back(readEntryDeclines(rd, (*declines)[i], path + "/declines/" + std::to_string(i)));
    }
    const json& modules = rd.array(j, path, "modules");
    for (size_t i = 0; i < modules.size(); ++i)
        run.modules.push_back(readModuleInfo(rd, modules[i], path + "/modules/" + std::to_string(i)));
    const json& outputs = rd.array(j, path, "outputs");
    for (size_t i = 0; i < outputs.size(); ++i)
        run.outputs.push_back(readTensorDigest(rd, outputs[i], path + "/outputs/" + std::to_string(i)));
    const json& values = rd.array(j, path, "output_values");
    for (size_t i = 0; i < values.size(); ++i) {
        const std::string p = path + "/output_values/" + std::to_string(i);
        const std::string encoding = rd.string(values[i], p, "encoding", true);
        if (encoding != kfprof::kOutputValuesEncoding)
            rd.fail(p + "/encoding", "unknown encoding '" + encoding + "' (this build reads " +
                                         std::string(kfprof::kOutputValuesEncoding) + ")");
        std::vector<float> v;
        if (!kfprof::decodeFloats(rd.string(values[i], p, "data", true), v))
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
        const auto slots = records ? columnSlots<KernelRecord>(rd, j, path, columnsKey)
                                   : columnSlots<RangeRecord>(rd, j, path, columnsKey);
        for (size_t i = 0; i < rows.size(); ++i)
            readRow(
                rd, rows[i], [&] { return path + "/" + key + "/" + std::to_string(i); }, slots,
                [&](const auto& cell, const auto& cellPath) {
                    if (records)
                        run.records.push_back(decodeRow<KernelRecord>(rd, strings, cell, cellPath));
                    else
                        run.ranges.push_back(decodeRow<RangeRecord>(rd, strings, cell, cellPath));
                });
    }
    // The allocations of profile --memory: a table files without it lack.
    if (const json& rows = rd.array(j, path, "memory"); !rows.empty()) {
        const auto slots = columnSlots<MemoryRecord>(rd, j, path, "memory_columns");
        for (size_t i = 0; i < rows.size(); ++i)
            readRow(
                rd, rows[i], [&] { return path + "/memory/" + std::to_string(i); }, slots,
                [&](const auto& cell, const auto& cellPath) {
                    run.memory.push_back(decodeRow<MemoryRecord>(rd, strings, cell, cellPath));
                });
    }
    checkRunIsConsistent(rd, run, path);
    return run;
}

} // namespace

std::vector<SavedRun> parseProfile(const std::string& text, const std::string& where)
{
    const JsonReader rd(where);
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
    const auto created = root.find("created"); // informative: a file without it, or with another type, still reads
    std::vector<SavedRun> out;
    out.reserve(runs.size());
    for (size_t k = 0; k < runs.size(); ++k) {
        SavedRun saved;
        if (created != root.end() && created->is_string())
            saved.created = created->get<std::string>();
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
