// SPDX-License-Identifier: Apache-2.0
// Writing .kfprof result files (docs/kfprof-format.md): one JSON document holding whole profile runs. Records and
// ranges are written row by row (strings through a per-run string table), so saving a large run streams to disk.
#include <kforge/profile_export.h>

#include "common/utc_time.h"
#include "common/file_text.h"
#include "common/json_stream_writer.h"
#include "profiling/kfprof_codec.h"
#include "profiling/record_columns.h"

#include <kforge/error.h>
#include <kforge/json_shapes.h>
#include <kforge/version.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ctime>
#include <ostream>
#include <string_view>
#include <unordered_map>

namespace kforge {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// One table's rows, each an array in column order (strings as their index in the run's table); then "]".
template <class Record>
void writeRows(JsonStreamWriter& w, const std::vector<Record>& rows,
               const std::unordered_map<std::string_view, std::uint32_t>& index)
{
    for (size_t i = 0; i < rows.size(); ++i) {
        w.raw(i ? ",\n\t\t[" : "\n\t\t[");
        bool first = true;
        record_columns::forEachColumn(rows[i], [&](const char*, const auto& value) {
            using T = decltype(value);
            if (!first)
                w.raw(",");
            first = false;
            if constexpr (record_columns::kIsText<T>) {
                w.number(index.find(value)->second);
            } else if constexpr (record_columns::kIsDims<T>) {
                w.raw("[");
                w.number(value[0]);
                w.raw(",");
                w.number(value[1]);
                w.raw(",");
                w.number(value[2]);
                w.raw("]");
            } else if constexpr (record_columns::kIsFlag<T>) {
                w.raw(value ? "1" : "0");
            } else {
                w.number(value);
            }
        });
        w.raw("]");
    }
    w.raw(rows.empty() ? "]" : "\n\t]");
}

ordered_json runHead(const LabeledRun& labeled)
{
    const ProfileRun& run = *labeled.run;
    ordered_json head{{"label", labeled.label}};
    head.update(runDescription(run));
    head["modules"] = run.modules;
    head["outputs"] = run.outputs;
    head["output_values"] = ordered_json::array();
    for (const auto& values : run.outputValues)
        head["output_values"].push_back({{"encoding", kfprof::kOutputValuesEncoding},
                                         {"count", values.size()},
                                         {"data", kfprof::encodeFloats(values)}});
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
    const auto id = [&](std::string_view s) {
        const auto [it, added] = index.emplace(s, std::uint32_t(strings.size()));
        if (added)
            strings.push_back(s);
        return it->second;
    };
    id("");
    const auto intern = [&](const char*, const auto& value) {
        if constexpr (record_columns::kIsText<decltype(value)>)
            id(value);
    };
    for (const KernelRecord& r : run.records)
        record_columns::forEachColumn(r, intern);
    for (const RangeRecord& r : run.ranges)
        record_columns::forEachColumn(r, intern);
    for (const MemoryRecord& r : run.memory)
        record_columns::forEachColumn(r, intern);

    w.raw(",\n\t\"strings\": [");
    for (size_t i = 0; i < strings.size(); ++i) {
        w.raw(i ? ",\n\t\t" : "\n\t\t");
        w.string(strings[i]);
    }
    w.raw("\n\t],\n\t\"record_columns\": ");
    w.raw(json(record_columns::names<KernelRecord>()).dump());
    w.raw(",\n\t\"records\": [");
    writeRows(w, run.records, index);
    w.raw(",\n\t\"range_columns\": ");
    w.raw(json(record_columns::names<RangeRecord>()).dump());
    w.raw(",\n\t\"ranges\": [");
    writeRows(w, run.ranges, index);
    if (!run.memory.empty()) { // profile --memory: a table of its own, which readers that do not know it skip
        w.raw(",\n\t\"memory_columns\": ");
        w.raw(json(record_columns::names<MemoryRecord>()).dump());
        w.raw(",\n\t\"memory\": [");
        writeRows(w, run.memory, index);
    }
    w.raw("\n}");
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

} // namespace kforge
