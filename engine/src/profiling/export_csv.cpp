// SPDX-License-Identifier: Apache-2.0
// CSV of every kernel execution (RFC 4180) and its reader, for spreadsheets, pandas and the round trip.
#include <kforge/profile_export.h>

#include "profiling/record_columns.h"

#include <kforge/error.h>

#include <charconv>
#include <istream>
#include <ostream>
#include <unordered_map>

namespace kforge {

const std::vector<std::string> kCsvColumns = record_columns::csvNames();

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
        bool first = true;
        record_columns::forEachColumn(r, [&](const char*, const auto& value) {
            using T = decltype(value);
            if (!first)
                line.push_back(',');
            first = false;
            if constexpr (record_columns::kIsText<T>) {
                field(line, value);
            } else if constexpr (record_columns::kIsDims<T>) {
                for (size_t d = 0; d < 3; ++d) {
                    if (d)
                        line.push_back(',');
                    number(line, value[d]);
                }
            } else if constexpr (record_columns::kIsFlag<T>) {
                line.push_back(value ? '1' : '0');
            } else {
                number(line, value);
            }
        });
        line.append("\r\n");
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
        size_t k = 0; // the kCsvColumns index of the next value
        const auto cell = [&]() -> std::string* {
            const int at = slot[k++];
            return at < 0 ? nullptr : &fields[size_t(at)];
        };
        record_columns::forEachColumn(r, [&](const char*, auto& value) {
            using T = decltype(value);
            if constexpr (record_columns::kIsDims<T>) {
                for (int& axis : value) {
                    const std::string& column = kCsvColumns[k];
                    if (std::string* text = cell())
                        axis = parseNumber<int>(*text, column, recordLine);
                }
            } else {
                const std::string& column = kCsvColumns[k];
                std::string* text = cell();
                if (!text)
                    return;
                if constexpr (record_columns::kIsInterned<T>) {
                    value = internedText(*text);
                } else if constexpr (record_columns::kIsText<T>) {
                    value = std::move(*text);
                } else if constexpr (record_columns::kIsFlag<T>) {
                    if (*text == "1" || *text == "true")
                        value = true;
                    else if (*text == "0" || *text == "false" || text->empty())
                        value = false;
                    else
                        throw Error("CSV line " + std::to_string(recordLine),
                                    "column '" + column + "': '" + *text + "' is not 0, 1, true or false");
                } else {
                    value = parseNumber<std::remove_reference_t<T>>(*text, column, recordLine);
                }
            }
        });
        records.push_back(std::move(r));
    }
    return records;
}

} // namespace kforge
