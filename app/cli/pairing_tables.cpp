// SPDX-License-Identifier: Apache-2.0
#include "pairing_tables.h"

#include "output.h"

#include <kforge/module_path.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kforge::cli {
namespace {

double changePercent(const RecordPair& p) { return p.usA > 0 ? (p.usB / p.usA - 1.0) * 100.0 : 0.0; }

std::string placeOf(const RecordPair& p)
{
    return module_path::displayName(p.module) + "/" + (p.function.empty() ? "-" : p.function);
}

// The pairs by the size of their change in µs, largest first.
std::vector<const RecordPair*> byChange(const RunPairing& pairing)
{
    std::vector<const RecordPair*> pairs;
    for (const RecordPair& p : pairing.paired)
        pairs.push_back(&p);
    std::stable_sort(pairs.begin(), pairs.end(), [](const RecordPair* x, const RecordPair* y) {
        return std::fabs(x->usB - x->usA) > std::fabs(y->usB - y->usA);
    });
    return pairs;
}

std::string unpairedLine(const char* side, const std::vector<RecordPair>& records, bool inA, std::size_t top)
{
    std::vector<const RecordPair*> sorted;
    for (const RecordPair& r : records)
        sorted.push_back(&r);
    std::stable_sort(sorted.begin(), sorted.end(), [inA](const RecordPair* x, const RecordPair* y) {
        return (inA ? x->usA : x->usB) > (inA ? y->usA : y->usB);
    });
    std::ostringstream out;
    out << "only in " << side << " (" << records.size() << "):";
    for (std::size_t i = 0; i < sorted.size() && (!top || i < top); ++i)
        out << (i ? ", " : " ") << placeOf(*sorted[i]) << "/" << (inA ? sorted[i]->nameA : sorted[i]->nameB) << " "
            << fixed(inA ? sorted[i]->usA : sorted[i]->usB, 1) << " us";
    out << (top && sorted.size() > top ? ", ..." : "");
    return out.str();
}

nlohmann::ordered_json pairJson(const RecordPair& p)
{
    return {{"module", p.module},
            {"function", p.function},
            {"name_a", p.nameA},
            {"name_b", p.nameB},
            {"place", p.ordinal},
            {"us_a", p.usA},
            {"us_b", p.usB},
            {"verdict", speedVerdictName(p.speed.verdict)},
            {"speedup_interval", {p.speed.low, p.speed.high}}};
}

} // namespace

std::vector<std::string> pairingSummary(const RunPairing& pairing)
{
    std::vector<std::string> lines{"paired by place: " + fixed(pairing.pairedShareA * 100.0, 1) + "% of A's op time, " +
                                   fixed(pairing.pairedShareB * 100.0, 1) + "% of B's (" +
                                   std::to_string(pairing.paired.size()) + " pairs, " +
                                   std::to_string(pairing.renamed()) + " with another name in B)"};
    for (const ModuleMatch& m : pairing.modules)
        if (m.byStructure)
            lines.push_back("module matched by type and position: " + m.pathA + " -> " + m.pathB);
    for (const auto& [side, paths] : {std::pair{"A", &pairing.modulesOnlyInA}, std::pair{"B", &pairing.modulesOnlyInB}})
        if (!paths->empty()) {
            std::string line = std::string("modules only in ") + side + ":";
            for (const std::string& path : *paths)
                line += ' ' + module_path::displayName(path);
            lines.push_back(std::move(line));
        }
    return lines;
}

std::string pairingTableTitle(const RunPairing& pairing, std::size_t top)
{
    std::string title = "ops and kernels by place, largest change first";
    if (top && pairing.paired.size() > top)
        title += " (top " + std::to_string(top) + " of " + std::to_string(pairing.paired.size()) + "; --top 0 for all)";
    return title;
}

Table pairingTable(const RunPairing& pairing, std::size_t top)
{
    Table table{{{"MODULE/FUNCTION", false},
                 {"A", false},
                 {"B", false},
                 {"A us", true},
                 {"B us", true},
                 {"CHANGE", true},
                 {"VERDICT", false}},
                {}};
    for (const RecordPair* p : byChange(pairing)) {
        if (top && table.rows.size() == top)
            break;
        table.rows.push_back({placeOf(*p), p->nameA, p->nameB == p->nameA ? "=" : p->nameB, fixed(p->usA, 1),
                              fixed(p->usB, 1), (changePercent(*p) > 0 ? "+" : "") + fixed(changePercent(*p), 1) + "%",
                              speedVerdictName(p->speed.verdict)});
    }
    return table;
}

std::vector<std::string> unpairedLines(const RunPairing& pairing, std::size_t top)
{
    std::vector<std::string> lines;
    if (!pairing.onlyInA.empty())
        lines.push_back(unpairedLine("A", pairing.onlyInA, true, top));
    if (!pairing.onlyInB.empty())
        lines.push_back(unpairedLine("B", pairing.onlyInB, false, top));
    return lines;
}

void printPairing(std::ostream& out, const RunPairing& pairing, std::size_t top)
{
    out << '\n';
    for (const std::string& line : pairingSummary(pairing))
        out << line << '\n';
    out << pairingTableTitle(pairing, top) << '\n' << formatTable(pairingTable(pairing, top));
    for (const std::string& line : unpairedLines(pairing, top))
        out << line << '\n';
}

nlohmann::ordered_json pairingJson(const RunPairing& pairing, std::size_t top)
{
    nlohmann::ordered_json modules = nlohmann::ordered_json::array();
    for (const ModuleMatch& m : pairing.modules)
        modules.push_back({{"a", m.pathA}, {"b", m.pathB}, {"by_structure", m.byStructure}});
    nlohmann::ordered_json pairs = nlohmann::ordered_json::array();
    for (const RecordPair* p : byChange(pairing)) {
        if (top && pairs.size() == top)
            break;
        pairs.push_back(pairJson(*p));
    }
    nlohmann::ordered_json onlyA = nlohmann::ordered_json::array(), onlyB = nlohmann::ordered_json::array();
    for (const RecordPair& p : pairing.onlyInA)
        onlyA.push_back(pairJson(p));
    for (const RecordPair& p : pairing.onlyInB)
        onlyB.push_back(pairJson(p));
    return {{"paired_share_a", pairing.pairedShareA},
            {"paired_share_b", pairing.pairedShareB},
            {"pairs", pairing.paired.size()},
            {"renamed", pairing.renamed()},
            {"modules", modules},
            {"modules_only_in_a", pairing.modulesOnlyInA},
            {"modules_only_in_b", pairing.modulesOnlyInB},
            {"largest_changes", pairs},
            {"only_in_a", onlyA},
            {"only_in_b", onlyB}};
}

std::vector<std::string> slowerPairs(const RunPairing& pairing, double percent)
{
    std::vector<std::string> rows;
    for (const RecordPair& p : pairing.paired)
        if (p.speed.verdict == SpeedVerdict::Slower && changePercent(p) > percent)
            rows.push_back("op " + placeOf(p) + "/" + p.nameB + " +" +
                           std::to_string(int(std::lround(changePercent(p)))) + "%");
    return rows;
}

} // namespace kforge::cli
