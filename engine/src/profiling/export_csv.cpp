// SPDX-License-Identifier: Apache-2.0
// CSV of every kernel execution (RFC 4180) and its reader, for spreadsheets, pandas and the round trip.
#include <kforge/profile_export.h>

#include <kforge/error.h>

#include <charconv>
#include <istream>
#include <ostream>
#include <unordered_map>

namespace kforge {

const std::vector<std::string> kCsvColumns{"kind",
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
                                           "grid_x",
                                           "grid_y",
                                           "grid_z",
                                           "block_x",
                                           "block_y",
                                           "block_z",
                                           "registers_per_thread",
                                           "shared_memory_bytes",
                                           "correlation",
                                           "iteration",
                                           "graph_replay"};

namespace {

void field(std::string& line, std::string_view value)
{
    if (value.find_first_of(",\"\r\n") == std::string_view::npos) {
        line.append(value);
        return;
    }
    line.push_back('"');
    for (char c : value) {
        if (c == '"')
            line.push_back('"');
        line.push_back(c);
    }
    line.push_back('"');
}

template <typename T> void number(std::string& line, T v)
{
    char tmp[24];
    line.append(tmp, std::to_chars(tmp, tmp + sizeof tmp, v).ptr);
}

// Reads one CSV record (fields may hold quoted commas, quotes and line breaks). False at the end of input.
bool readRecord(std::istream& in, std::vector<std::string>& fields, long& line, long& firstLine)
{
    fields.clear();
    int c = in.get();
    if (c == std::char_traits<char>::eof())
        return false;
    ++line;
    firstLine = line;
    std::string current;
    bool quoted = false, wasQuoted = false;
    for (;; c = in.get()) {
        if (c == std::char_traits<char>::eof()) {
            if (quoted)
                throw Error("CSV line " + std::to_string(firstLine), "a quoted field is not closed");
            fields.push_back(std::move(current));
            return true;
        }
        const char ch = char(c);
        if (quoted) {
            if (ch == '"') {
                if (in.peek() == '"') {
                    current.push_back('"');
                    in.get();
                } else {
                    quoted = false;
                }
            } else {
                if (ch == '\n')
                    ++line;
                current.push_back(ch);
            }
            continue;
        }
        if (ch == '"') {
            if (!current.empty() || wasQuoted)
                throw Error("CSV line " + std::to_string(line), "a quote inside an unquoted field");
            quoted = wasQuoted = true;
        } else if (ch == ',') {
            fields.push_back(std::move(current));
            current.clear();
            wasQuoted = false;
        } else if (ch == '\r' && in.peek() == '\n') {
            // CRLF: the '\n' ends the record on the next round
        } else if (ch == '\n') {
            fields.push_back(std::move(current));
            return true;
        } else {
            if (wasQuoted)
                throw Error("CSV line " + std::to_string(line), "text after a closing quote");
            current.push_back(ch);
        }
    }
}

template <typename T> T parseNumber(const std::string& text, const std::string& column, long line)
{
    T value{};
    const char* begin = text.data();
    const char* end = begin + text.size();
    const auto res = std::from_chars(begin, end, value);
    if (text.empty() || res.ec != std::errc{} || res.ptr != end)
        throw Error("CSV line " + std::to_string(line),
                    "column '" + column + "': '" + text + "' is not " +
                        (std::is_signed_v<T> ? "an integer" : "a non-negative integer"));
    return value;
}

} // namespace

void writeCsv(const std::vector<KernelRecord>& records, std::ostream& out)
{
    std::string line;
    for (size_t i = 0; i < kCsvColumns.size(); ++i) {
        if (i)
            line.push_back(',');
        line.append(kCsvColumns[i]);
    }
    line.append("\r\n");
    for (const KernelRecord& r : records) {
        field(line, r.kind);
        line.push_back(',');
        field(line, r.name);
        line.push_back(',');
        field(line, r.modulePath);
        line.push_back(',');
        field(line, r.function);
        line.push_back(',');
        field(line, r.op);
        line.push_back(',');
        field(line, r.provider);
        for (long long v : {(long long)r.startNs, (long long)r.durationNs}) {
            line.push_back(',');
            number(line, v);
        }
        line.push_back(',');
        number(line, r.thread);
        for (long long v : {(long long)r.device, (long long)r.stream, (long long)r.grid[0], (long long)r.grid[1],
                            (long long)r.grid[2], (long long)r.block[0], (long long)r.block[1], (long long)r.block[2],
                            (long long)r.registersPerThread, (long long)r.sharedMemoryBytes}) {
            line.push_back(',');
            number(line, v);
        }
        line.push_back(',');
        number(line, r.correlation);
        line.push_back(',');
        number(line, r.iteration);
        line.append(r.graphReplay ? ",1\r\n" : ",0\r\n");
        if (line.size() >= (1 << 16)) {
            out.write(line.data(), std::streamsize(line.size()));
            line.clear();
        }
    }
    out.write(line.data(), std::streamsize(line.size()));
    out.flush();
}

void writeCsv(const ProfileRun& run, std::ostream& out) { writeCsv(run.records, out); }

std::vector<KernelRecord> readCsv(std::istream& in)
{
    std::vector<std::string> fields;
    long line = 0, recordLine = 0;
    if (!readRecord(in, fields, line, recordLine))
        throw Error("CSV", "empty: no header row");
    if (!fields.empty() && fields[0].rfind("\xEF\xBB\xBF", 0) == 0)
        fields[0].erase(0, 3); // a byte order mark some spreadsheets add
    std::unordered_map<std::string, size_t> columnOf;
    for (size_t i = 0; i < fields.size(); ++i)
        columnOf.emplace(fields[i], i);
    if (!columnOf.count("name"))
        throw Error("CSV line 1", "not a kforge kernel CSV: the header has no 'name' column");
    std::vector<int> slot(kCsvColumns.size(), -1); // kCsvColumns index -> position in this file
    for (size_t k = 0; k < kCsvColumns.size(); ++k)
        if (const auto it = columnOf.find(kCsvColumns[k]); it != columnOf.end())
            slot[k] = int(it->second);
    const size_t width = fields.size();

    std::vector<KernelRecord> records;
    while (readRecord(in, fields, line, recordLine)) {
        if (fields.size() == 1 && fields[0].empty())
            continue; // a blank line (a trailing line break, say)
        if (fields.size() != width)
            throw Error("CSV line " + std::to_string(recordLine),
                        std::to_string(fields.size()) + " fields where the header has " + std::to_string(width));
        KernelRecord r;
        const auto text = [&](size_t k, std::string& into) {
            if (slot[k] >= 0)
                into = std::move(fields[size_t(slot[k])]);
        };
        const auto num = [&](size_t k, auto& into) {
            if (slot[k] >= 0)
                into = parseNumber<std::remove_reference_t<decltype(into)>>(fields[size_t(slot[k])], kCsvColumns[k],
                                                                            recordLine);
        };
        text(0, r.kind);
        text(1, r.name);
        text(2, r.modulePath);
        text(3, r.function);
        text(4, r.op);
        text(5, r.provider);
        num(6, r.startNs);
        num(7, r.durationNs);
        num(8, r.thread);
        num(9, r.device);
        num(10, r.stream);
        for (size_t d = 0; d < 3; ++d) {
            num(11 + d, r.grid[d]);
            num(14 + d, r.block[d]);
        }
        num(17, r.registersPerThread);
        num(18, r.sharedMemoryBytes);
        num(19, r.correlation);
        num(20, r.iteration);
        if (slot[21] >= 0) {
            const std::string& v = fields[size_t(slot[21])];
            if (v == "1" || v == "true")
                r.graphReplay = true;
            else if (v == "0" || v == "false" || v.empty())
                r.graphReplay = false;
            else
                throw Error("CSV line " + std::to_string(recordLine),
                            "column 'graph_replay': '" + v + "' is not 0, 1, true or false");
        }
        records.push_back(std::move(r));
    }
    return records;
}

} // namespace kforge
