// SPDX-License-Identifier: Apache-2.0
#include <kforge/run_pairing.h>

#include <kforge/module_path.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace kforge {
namespace {

// Long sequences in one pass: equal items pair; at a mismatch, one item changed when the next ones agree (both step on,
// paired when `substitute`), else the side whose item reappears soonest on the other side (within kLookAhead) skips to
// it; when neither does, both step on. Near the edit-distance
// alignment on sequences that differ in few places (two runs of one model), in time linear in their length.
template <class Same>
std::vector<std::pair<size_t, size_t>> alignGreedily(size_t n, size_t m, Same same, bool substitute)
{
    constexpr size_t kLookAhead = 64;
    std::vector<std::pair<size_t, size_t>> pairs;
    const auto distanceTo = [](size_t from, size_t end, const auto& matches) {
        for (size_t k = from; k < end && k < from + kLookAhead; ++k)
            if (matches(k))
                return k - from;
        return kLookAhead;
    };
    for (size_t i = 0, j = 0; i < n && j < m;) {
        if (same(i, j)) {
            pairs.emplace_back(i++, j++);
            continue;
        }
        if (i + 1 < n && j + 1 < m && same(i + 1, j + 1)) { // one item changed: the sequences go on together
            if (substitute)
                pairs.emplace_back(i, j);
            ++i;
            ++j;
            continue;
        }
        const size_t inB = distanceTo(j, m, [&](size_t k) { return same(i, k); });
        const size_t inA = distanceTo(i, n, [&](size_t k) { return same(k, j); });
        if (inB < kLookAhead && inB <= inA) {
            j += inB; // B's items before A's i are extra
        } else if (inA < kLookAhead) {
            i += inA;
        } else {
            if (substitute)
                pairs.emplace_back(i, j);
            ++i;
            ++j;
        }
    }
    return pairs;
}

// An edit-distance alignment of two sequences: index pairs (i, j) kept or substituted, in order. `same(i, j)` costs 0,
// an insertion or deletion 1, any other pairing 1 when `substitute` (items left between two equal ones pair by position
// when both sides have them), else never. Sequences whose table would pass kMaxCells are aligned greedily.
template <class Same>
std::vector<std::pair<size_t, size_t>> align(size_t n, size_t m, Same same, bool substitute = true)
{
    const int substitution = substitute ? 1 : 2;  // 2: never cheaper than a deletion and an insertion
    constexpr size_t kMaxCells = size_t(1) << 20; // beyond, the table costs more than the pairing is worth
    if ((n + 1) * (m + 1) > kMaxCells)
        return alignGreedily(n, m, same, substitute);
    std::vector<std::pair<size_t, size_t>> pairs;
    // One row-major table of (n + 1) x (m + 1) costs: a group of a few thousand records per forward fits.
    std::vector<int> table((n + 1) * (m + 1));
    const auto cost = [&table, m](size_t i, size_t j) -> int& { return table[i * (m + 1) + j]; };
    for (size_t i = 0; i <= n; ++i)
        cost(i, 0) = int(i);
    for (size_t j = 0; j <= m; ++j)
        cost(0, j) = int(j);
    for (size_t i = 1; i <= n; ++i)
        for (size_t j = 1; j <= m; ++j)
            cost(i, j) = std::min(
                {cost(i - 1, j - 1) + (same(i - 1, j - 1) ? 0 : substitution), cost(i - 1, j) + 1, cost(i, j - 1) + 1});
    // Back from the end: an equal pair first, then a gap, a substitution last, so that items left over between
    // equal ones pair from the earliest on ([addmm] with [mm, add] pairs addmm with mm).
    for (size_t i = n, j = m; i > 0 && j > 0;) {
        const bool equal = same(i - 1, j - 1);
        if (equal && cost(i, j) == cost(i - 1, j - 1)) {
            pairs.emplace_back(--i, --j);
        } else if (cost(i, j) == cost(i - 1, j) + 1) {
            --i;
        } else if (cost(i, j) == cost(i, j - 1) + 1) {
            --j;
        } else {
            pairs.emplace_back(--i, --j);
        }
    }
    std::reverse(pairs.begin(), pairs.end());
    return pairs;
}

const ModuleInfo* moduleAt(const ProfileRun& run, const std::string& path)
{
    for (const ModuleInfo& m : run.modules)
        if (m.path == path)
            return &m;
    return nullptr;
}

// B's module paths mapped to A's: the same path where A has it; else, under parents already matched, children
// aligned by readable type in declaration order.
std::map<std::string, ModuleMatch> matchModules(const ProfileRun& a, const ProfileRun& b)
{
    std::map<std::string, ModuleMatch> byB;
    std::set<std::string> matchedA;
    for (const ModuleInfo& m : b.modules)
        if (moduleAt(a, m.path)) {
            byB[m.path] = {m.path, m.path, false};
            matchedA.insert(m.path);
        }
    byB[""] = {"", "", false}; // the roots always match
    matchedA.insert("");
    for (const ModuleInfo& parentB : b.modules) { // pre-order: a parent is matched before its children
        const auto parent = byB.find(parentB.path);
        const ModuleInfo* parentA = parent == byB.end() ? nullptr : moduleAt(a, parent->second.pathA);
        if (!parentA)
            continue;
        std::vector<const ModuleInfo*> childrenA, childrenB;
        for (const std::string& path : parentA->children)
            if (const ModuleInfo* c = moduleAt(a, path); c && !matchedA.count(path))
                childrenA.push_back(c);
        for (const std::string& path : parentB.children)
            if (const ModuleInfo* c = moduleAt(b, path); c && !byB.count(path))
                childrenB.push_back(c);
        const auto pairs = align(childrenA.size(), childrenB.size(),
                                 [&](size_t i, size_t j) { return childrenA[i]->typeName == childrenB[j]->typeName; });
        for (const auto& [i, j] : pairs)
            if (childrenA[i]->typeName == childrenB[j]->typeName) {
                byB[childrenB[j]->path] = {childrenA[i]->path, childrenB[j]->path, true};
                matchedA.insert(childrenA[i]->path);
            }
    }
    return byB;
}

// A run's records by (module, function) and iteration, each list in the order they ran.
using Group = std::pair<std::string, std::string>;
using Runs = std::map<Group, std::map<int, std::vector<const KernelRecord*>>>;

Runs groupRecords(const ProfileRun& run, const std::map<std::string, ModuleMatch>* toA)
{
    Runs groups;
    for (const KernelRecord& r : run.records) {
        std::string module = r.modulePath;
        if (toA) {
            const auto match = toA->find(module);
            module = match == toA->end() ? "\x1f" + module : match->second.pathA; // unmatched: B's own space
        }
        groups[{module, r.function}][r.iteration].push_back(&r);
    }
    for (auto& [group, iterations] : groups)
        for (auto& [iteration, records] : iterations)
            std::stable_sort(records.begin(), records.end(),
                             [](const KernelRecord* x, const KernelRecord* y) { return x->startNs < y->startNs; });
    return groups;
}

// Per ordinal of a group: its name (the first forward's) and its time in each forward.
struct Slot {
    std::string name;
    int id = 0;             // the name's number, the same in both runs: the alignment compares numbers
    std::vector<double> us; // by forward, in iteration order
};

std::vector<Slot> slotsOf(const std::map<int, std::vector<const KernelRecord*>>& iterations, int forwards)
{
    std::vector<Slot> slots;
    int index = 0;
    for (const auto& [iteration, records] : iterations) {
        for (size_t k = 0; k < records.size(); ++k) {
            if (k >= slots.size())
                slots.push_back({records[k]->name, 0, std::vector<double>(size_t(forwards), 0.0)});
            slots[k].us[size_t(index)] += double(records[k]->durationNs) / 1e3;
        }
        ++index;
    }
    return slots;
}

double mean(const std::vector<double>& v)
{
    double sum = 0;
    for (double x : v)
        sum += x;
    return v.empty() ? 0.0 : sum / double(v.size());
}

// A record no place paired: its module (the run's own path), name and time per forward.
struct Leftover {
    std::string module; // where it stands now: its own module, then the modules above it as it climbs
    std::string origin; // its own module
    std::string function;
    std::string name;
    std::vector<double> us;
};

std::vector<double> summed(const std::vector<const Leftover*>& items)
{
    std::vector<double> sum;
    for (const Leftover* item : items) {
        sum.resize(std::max(sum.size(), item->us.size()), 0.0);
        for (size_t k = 0; k < item->us.size(); ++k)
            sum[k] += item->us[k];
    }
    return sum;
}

std::string namesOf(const std::vector<const Leftover*>& items)
{
    std::string names;
    for (size_t k = 0; k < items.size() && k < 3; ++k)
        names += (k ? " + " : "") + items[k]->name;
    if (items.size() > 3)
        names += " + " + std::to_string(items.size() - 3) + " more";
    return names;
}

// What no place paired, paired as groups under the lowest module both sides have leftovers in: each side's leftovers
// climb to their module's parent until they meet the other side's, never to the root unless they were made there (a
// group of everything left at the root would pair unrelated work); leftovers of a module the other run lacks stay on
// their side. `keyOfB` maps a module of B to A's path (matched) or to a key of its own starting with \x1f.
void pairLeftoversByModule(std::vector<Leftover> leftA, std::vector<Leftover> leftB,
                           const std::function<std::string(const std::string&)>& keyOfB,
                           const std::set<std::string>& matchedA, double maxDetectableChange, RunPairing& result,
                           double& pairedA, double& pairedB)
{
    std::vector<Leftover> unpairedA, unpairedB;
    std::erase_if(leftA,
                  [&](const Leftover& l) { return !matchedA.count(l.module) && (unpairedA.push_back(l), true); });
    std::erase_if(leftB, [&](const Leftover& l) {
        return keyOfB(l.module).rfind('\x1f', 0) == 0 && (unpairedB.push_back(l), true);
    });
    for (bool climbed = true; climbed && !leftA.empty() && !leftB.empty();) {
        std::map<std::string, std::vector<const Leftover*>> byKeyA, byKeyB;
        for (const Leftover& l : leftA)
            byKeyA[l.module].push_back(&l);
        for (const Leftover& l : leftB)
            byKeyB[keyOfB(l.module)].push_back(&l);
        std::set<std::string> met;
        for (const auto& [key, itemsA] : byKeyA) {
            const auto itemsB = byKeyB.find(key);
            if (itemsB == byKeyB.end())
                continue;
            met.insert(key);
            const std::vector<double> usA = summed(itemsA), usB = summed(itemsB->second);
            RecordPair p{key,
                         "",
                         namesOf(itemsA),
                         namesOf(itemsB->second),
                         -1,
                         int(itemsA.size()),
                         int(itemsB->second.size()),
                         mean(usA),
                         mean(usB),
                         {}};
            if (usA.size() == usB.size())
                p.speed = compareSpeed(usA, usB, maxDetectableChange);
            pairedA += p.usA;
            pairedB += p.usB;
            result.paired.push_back(std::move(p));
        }
        std::erase_if(leftA, [&](const Leftover& l) { return met.count(l.module) > 0; });
        std::erase_if(leftB, [&](const Leftover& l) { return met.count(keyOfB(l.module)) > 0; });
        climbed = false;
        for (std::vector<Leftover>* side : {&leftA, &leftB})
            for (Leftover& l : *side)
                if (const std::string_view parent = module_path::parentOf(l.module); !parent.empty()) {
                    l.module = std::string(parent);
                    climbed = true;
                }
    }
    for (const std::vector<Leftover>* side : {&leftA, &unpairedA})
        for (const Leftover& l : *side)
            result.onlyInA.push_back({l.origin, l.function, l.name, "", 0, 1, 0, mean(l.us), 0, {}});
    for (const std::vector<Leftover>* side : {&leftB, &unpairedB})
        for (const Leftover& l : *side) {
            const std::string key = keyOfB(l.origin);
            result.onlyInB.push_back(
                {key.rfind('\x1f', 0) == 0 ? l.origin : key, l.function, "", l.name, 0, 0, 1, 0, mean(l.us), {}});
        }
}

int forwardsOf(const ProfileRun& run)
{
    std::set<int> iterations;
    for (const KernelRecord& r : run.records)
        iterations.insert(r.iteration);
    return std::max<int>(1, int(iterations.size()));
}

} // namespace

int RunPairing::renamed() const
{
    return int(std::count_if(paired.begin(), paired.end(), [](const RecordPair& p) { return p.nameA != p.nameB; }));
}

RunPairing pairRuns(const ProfileRun& a, const ProfileRun& b, double maxDetectableChange)
{
    RunPairing result;
    std::map<std::string, ModuleMatch> byB = matchModules(a, b);
    // Paths the records name on both sides match too (files without a module tree).
    std::set<std::string> recordPathsA;
    for (const KernelRecord& r : a.records)
        recordPathsA.insert(r.modulePath);
    for (const KernelRecord& r : b.records)
        if (!byB.count(r.modulePath) && recordPathsA.count(r.modulePath))
            byB[r.modulePath] = {r.modulePath, r.modulePath, false};
    std::set<std::string> matchedA;
    for (const auto& [pathB, match] : byB)
        matchedA.insert(match.pathA);
    for (const ModuleInfo& m : a.modules) {
        const auto it = std::find_if(byB.begin(), byB.end(), [&](const auto& kv) { return kv.second.pathA == m.path; });
        if (it != byB.end())
            result.modules.push_back(it->second);
        else
            result.modulesOnlyInA.push_back(m.path);
    }
    for (const ModuleInfo& m : b.modules)
        if (!byB.count(m.path))
            result.modulesOnlyInB.push_back(m.path);

    const int forwardsA = forwardsOf(a), forwardsB = forwardsOf(b);
    // A group's module is in A's names; B's own path where it has no match in A.
    const auto pathInB = [&byB](const std::string& key) {
        if (key.rfind('\x1f', 0) == 0)
            return key.substr(1);
        for (const auto& [pathB, match] : byB)
            if (match.pathA == key)
                return pathB;
        return key;
    };
    const Runs groupsA = groupRecords(a, nullptr);
    const Runs groupsB = groupRecords(b, &byB);
    double totalA = 0, totalB = 0, pairedA = 0, pairedB = 0;
    std::set<Group> groups;
    for (const auto& [g, _] : groupsA)
        groups.insert(g);
    for (const auto& [g, _] : groupsB)
        groups.insert(g);
    std::vector<Leftover> leftA, leftB;
    std::unordered_map<std::string, int> nameIds;
    for (const Group& g : groups) {
        const auto inA = groupsA.find(g);
        const auto inB = groupsB.find(g);
        std::vector<Slot> slotsA = inA == groupsA.end() ? std::vector<Slot>{} : slotsOf(inA->second, forwardsA);
        std::vector<Slot> slotsB = inB == groupsB.end() ? std::vector<Slot>{} : slotsOf(inB->second, forwardsB);
        for (std::vector<Slot>* slots : {&slotsA, &slotsB})
            for (Slot& slot : *slots)
                slot.id = nameIds.try_emplace(slot.name, int(nameIds.size())).first->second;
        std::vector<bool> usedA(slotsA.size()), usedB(slotsB.size());
        // Inside a function call the records do that function's work: another name at the same place is the same work
        // done otherwise. Outside one, only equal names pair here; the rest pair as groups under their module below.
        const auto sameName = [&](size_t i, size_t j) { return slotsA[i].id == slotsB[j].id; };
        for (const auto& [i, j] : align(slotsA.size(), slotsB.size(), sameName, !g.second.empty())) {
            RecordPair p{g.first, g.second, slotsA[i].name,     slotsB[j].name,     int(i),
                         1,       1,        mean(slotsA[i].us), mean(slotsB[j].us), {}};
            // Paired by forward when both made as many, as compare pairs iteration i with iteration i.
            if (slotsA[i].us.size() == slotsB[j].us.size())
                p.speed = compareSpeed(slotsA[i].us, slotsB[j].us, maxDetectableChange);
            pairedA += p.usA;
            pairedB += p.usB;
            result.paired.push_back(std::move(p));
            usedA[i] = usedB[j] = true;
        }
        for (size_t i = 0; i < slotsA.size(); ++i) {
            totalA += mean(slotsA[i].us);
            if (!usedA[i])
                leftA.push_back({g.first, g.first, g.second, slotsA[i].name, slotsA[i].us});
        }
        for (size_t j = 0; j < slotsB.size(); ++j) {
            totalB += mean(slotsB[j].us);
            if (!usedB[j])
                leftB.push_back({pathInB(g.first), pathInB(g.first), g.second, slotsB[j].name, slotsB[j].us});
        }
    }
    const auto keyOfB = [&byB](const std::string& pathB) {
        const auto match = byB.find(pathB);
        return match == byB.end() ? "\x1f" + pathB : match->second.pathA;
    };
    pairLeftoversByModule(std::move(leftA), std::move(leftB), keyOfB, matchedA, maxDetectableChange, result, pairedA,
                          pairedB);
    result.pairedShareA = totalA > 0 ? pairedA / totalA : 1.0;
    result.pairedShareB = totalB > 0 ? pairedB / totalB : 1.0;
    return result;
}

} // namespace kforge
