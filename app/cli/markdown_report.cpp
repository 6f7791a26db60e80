// SPDX-License-Identifier: Apache-2.0
#include "markdown_report.h"

namespace kforge::cli {
namespace {

// GitHub trims a cell's leading blanks: the module tree indents with no-break spaces.
std::string indentation(int depth)
{
    std::string out;
    for (int i = 0; i < depth; ++i)
        out += "&nbsp;&nbsp;";
    return out;
}

void writeMarkdownTable(const ReportTable& table, std::ostream& out)
{
    if (!table.caption.empty())
        out << escapeMarkdown(table.caption) << "\n\n";
    const std::vector<Column>& columns = table.table.columns;
    out << '|';
    for (const Column& column : columns)
        out << ' ' << (column.title.empty() ? "&nbsp;" : escapeMarkdown(column.title)) << " |";
    out << "\n|";
    for (const Column& column : columns)
        out << (column.rightAligned ? " ---: |" : " --- |");
    out << '\n';
    for (size_t r = 0; r < table.table.rows.size(); ++r) {
        const std::vector<std::string>& row = table.table.rows[r];
        out << '|';
        for (size_t c = 0; c < columns.size(); ++c) {
            out << ' ';
            if (c == 0 && r < table.depths.size())
                out << indentation(table.depths[r]);
            out << (c < row.size() ? escapeMarkdown(row[c]) : std::string()) << " |";
        }
        out << '\n';
    }
    out << '\n';
}

void writeMarkdownSection(const ReportSection& section, std::ostream& out)
{
    out << "### " << escapeMarkdown(section.heading) << "\n\n";
    for (const auto& [key, value] : section.facts)
        out << "- **" << escapeMarkdown(key) << "**: " << escapeMarkdown(value) << '\n';
    if (!section.facts.empty())
        out << '\n';
    for (const std::string& line : section.lines)
        out << escapeMarkdown(line) << "\n\n";
    for (const ReportTable& table : section.tables)
        writeMarkdownTable(table, out);
    if (section.flameGraph)
        out << "The flame graph is in the HTML report (kforge report --html).\n\n";
}

} // namespace

std::string escapeMarkdown(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    for (const char c : text)
        switch (c) {
        case '|':
        case '`':
        case '\\':
        case '*':
        case '_':
            out += '\\';
            out += c;
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '\n':
        case '\r':
            out += ' ';
            break;
        default:
            out += c;
        }
    return out;
}

void writeMarkdownReport(const ShareableReport& report, std::ostream& out)
{
    out << "**" << escapeMarkdown(report.summary) << "**\n\n## " << escapeMarkdown(report.title) << "\n\n";
    for (const ReportSection& section : report.sections)
        writeMarkdownSection(section, out);
}

} // namespace kforge::cli
