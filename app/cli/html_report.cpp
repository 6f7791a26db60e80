// SPDX-License-Identifier: Apache-2.0
#include "html_report.h"

#include "output.h"

#include <kforge/module_path.h>

#include <algorithm>
#include <cstdio>
#include <functional>

namespace kforge::cli {
namespace {

// Light enough for black text on every frame, darker on the ones that matter in a pair.
constexpr const char* kStyle = R"(
body { font: 14px/1.45 "DejaVu Sans", Arial, sans-serif; color: #1d1d1f; background: #fff; margin: 24px 32px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 3px; }
p.summary { font-size: 16px; font-weight: bold; margin: 4px 0 16px; }
table { border-collapse: collapse; margin: 6px 0 14px; font-size: 13px; }
caption { text-align: left; color: #555; padding-bottom: 4px; }
th, td { padding: 3px 9px; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f4f5f7; }
table.facts th { white-space: nowrap; background: none; color: #555; font-weight: normal; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.faster { color: #0a7a2f; font-weight: bold; }
td.slower { color: #b3261e; font-weight: bold; }
svg.flame { display: block; width: 100%; height: auto; border: 1px solid #ddd; }
svg.flame text { font: 11px "DejaVu Sans", Arial, sans-serif; fill: #111; pointer-events: none; }
footer { margin-top: 32px; color: #777; font-size: 12px; }
)";

constexpr double kFlameWidth = 1200; // SVG user units; the page scales it to its width
constexpr double kFrameHeight = 17;
constexpr double kMinFrameWidth = 0.1; // narrower frames cannot be seen and would only grow the file
constexpr double kCharWidth = 6.6;     // of the 11px label font, to cut labels to their frame

std::string svgNumber(double value, int decimals)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

// A verdict cell's class, so that faster and slower stand out.
std::string cellClass(const Column& column, const std::string& cell)
{
    if (column.rightAligned)
        return "num";
    if (column.title == "VERDICT" && (cell == "faster" || cell == "slower"))
        return cell;
    return "";
}

void writeHtmlFacts(const std::vector<std::pair<std::string, std::string>>& facts, std::ostream& out)
{
    out << "<table class=\"facts\"><tbody>\n";
    for (const auto& [key, value] : facts)
        out << "<tr><th>" << escapeHtml(key) << "</th><td>" << escapeHtml(value) << "</td></tr>\n";
    out << "</tbody></table>\n";
}

void writeHtmlTable(const ReportTable& table, std::ostream& out)
{
    out << "<table>";
    if (!table.caption.empty())
        out << "<caption>" << escapeHtml(table.caption) << "</caption>";
    out << "\n<thead><tr>";
    for (const Column& column : table.table.columns)
        out << (column.rightAligned ? "<th class=\"num\">" : "<th>") << escapeHtml(column.title) << "</th>";
    out << "</tr></thead>\n<tbody>\n";
    for (size_t r = 0; r < table.table.rows.size(); ++r) {
        const std::vector<std::string>& row = table.table.rows[r];
        out << "<tr>";
        for (size_t c = 0; c < row.size() && c < table.table.columns.size(); ++c) {
            const std::string cls = cellClass(table.table.columns[c], row[c]);
            out << "<td" << (cls.empty() ? "" : " class=\"" + cls + "\"");
            if (c == 0 && r < table.depths.size() && table.depths[r] > 0)
                out << " style=\"padding-left: " << svgNumber(9 + 14.0 * table.depths[r], 0) << "px\"";
            out << '>' << escapeHtml(row[c]) << "</td>";
        }
        out << "</tr>\n";
    }
    out << "</tbody></table>\n";
}

std::string frameFill(const FlameFrame& frame, const std::map<std::string, SpeedVerdict>& verdicts)
{
    if (!verdicts.empty()) {
        const auto found = verdicts.find(frame.path);
        if (found == verdicts.end())
            return "#d9d9d9";
        return found->second == SpeedVerdict::Faster   ? "#8fd19e"
               : found->second == SpeedVerdict::Slower ? "#f19a93"
                                                       : "#d9d9d9";
    }
    // Kinds told apart by hue; a name's hash varies the shade so that neighbours differ.
    static const char* const kModule[] = {"#a9c8e8", "#b7d2ec", "#9dbfe3", "#c3daf0"};
    static const char* const kFunction[] = {"#f4bf86", "#f7cb9a", "#f1b575", "#f9d5ab"};
    static const char* const kOp[] = {"#f3df8c", "#f6e6a3", "#efd877", "#f8ebb5"};
    const size_t shade = std::hash<std::string>{}(frame.name) % 4;
    switch (frame.kind) {
    case FlameFrame::Kind::Module:
        return kModule[shade];
    case FlameFrame::Kind::Function:
        return kFunction[shade];
    case FlameFrame::Kind::Op:
        return kOp[shade];
    }
    return kOp[shade];
}

// "blocks.0.attn/linear — 0.123 ms per forward (12.3%), 2 calls".
std::string frameTitle(const FlameFrame& frame, double rootUs)
{
    std::string title = frame.path.empty() ? module_path::displayName("") : frame.path;
    if (!frame.typeName.empty())
        title += " (" + frame.typeName + ")";
    title +=
        " \u2014 " + fixed(frame.us / 1000.0, 3) + " ms per forward (" + fixed(100.0 * frame.us / rootUs, 1) + "%)";
    if (frame.calls > 0)
        title +=
            ", " + fixed(frame.calls, frame.calls < 10 && frame.calls != double(long(frame.calls)) ? 1 : 0) + " calls";
    return title;
}

// The frame's name cut to what fits in `width`, or "" when not even a few characters do.
std::string frameLabel(const FlameFrame& frame, double width)
{
    const std::string name = frame.path.empty() ? module_path::displayName("") : frame.name;
    const size_t fits = size_t(std::max(0.0, (width - 6) / kCharWidth));
    if (fits < 3)
        return "";
    if (name.size() <= fits)
        return name;
    size_t cut = fits - 1;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) // not inside a UTF-8 character
        --cut;
    return name.substr(0, cut) + "\u2026";
}

void writeFlameGraph(const ReportFlameGraph& flame, std::ostream& out)
{
    if (flame.frames.empty() || flame.frames[0].us <= 0) {
        out << "<p>No time recorded: no flame graph.</p>\n";
        return;
    }
    const double rootUs = flame.frames[0].us;
    const double scale = kFlameWidth / rootUs;
    int depth = 0;
    size_t hidden = 0;
    for (const FlameFrame& f : flame.frames)
        if (f.us * scale >= kMinFrameWidth)
            depth = std::max(depth, f.depth);
    const double height = (depth + 1) * kFrameHeight;
    out << "<p>" << escapeHtml(flame.caption) << "</p>\n";
    out << "<svg class=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << svgNumber(kFlameWidth, 0)
        << ' ' << svgNumber(height, 0) << "\" width=\"" << svgNumber(kFlameWidth, 0) << "\" height=\""
        << svgNumber(height, 0) << "\" role=\"img\">\n";
    for (const FlameFrame& f : flame.frames) {
        const double width = f.us * scale;
        if (f.us <= 0)
            continue;
        if (width < kMinFrameWidth) {
            ++hidden;
            continue;
        }
        const double x = f.offsetUs * scale, y = f.depth * kFrameHeight;
        out << "<rect x=\"" << svgNumber(x, 2) << "\" y=\"" << svgNumber(y, 0) << "\" width=\"" << svgNumber(width, 2)
            << "\" height=\"" << svgNumber(kFrameHeight - 1, 0) << "\" fill=\"" << frameFill(f, flame.verdicts)
            << "\"><title>" << escapeHtml(frameTitle(f, rootUs)) << "</title></rect>";
        if (const std::string label = frameLabel(f, width); !label.empty())
            out << "<text x=\"" << svgNumber(x + 3, 2) << "\" y=\"" << svgNumber(y + kFrameHeight - 5, 0) << "\">"
                << escapeHtml(label) << "</text>";
        out << '\n';
    }
    out << "</svg>\n";
    if (hidden)
        out << "<p>" << hidden << " frame(s) narrower than " << kMinFrameWidth << " of " << svgNumber(kFlameWidth, 0)
            << " units not drawn.</p>\n";
}

void writeHtmlSection(const ReportSection& section, std::ostream& out)
{
    out << "<section>\n<h2>" << escapeHtml(section.heading) << "</h2>\n";
    if (!section.facts.empty())
        writeHtmlFacts(section.facts, out);
    for (const std::string& line : section.lines)
        out << "<p>" << escapeHtml(line) << "</p>\n";
    for (const ReportTable& table : section.tables)
        writeHtmlTable(table, out);
    if (section.flameGraph)
        writeFlameGraph(*section.flameGraph, out);
    out << "</section>\n";
}

} // namespace

std::string escapeHtml(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    for (const char c : text)
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    return out;
}

void writeHtmlReport(const ShareableReport& report, std::ostream& out)
{
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>"
        << escapeHtml(report.title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<h1>"
        << escapeHtml(report.title) << "</h1>\n<p class=\"summary\">" << escapeHtml(report.summary) << "</p>\n";
    for (const ReportSection& section : report.sections)
        writeHtmlSection(section, out);
    out << "<footer>Written by kforge (KernelForge Studio) from saved profile runs.</footer>\n</body>\n</html>\n";
}

} // namespace kforge::cli
