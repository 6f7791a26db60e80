// SPDX-License-Identifier: Apache-2.0
#include "optimizer/scope_selection.h"

#include <algorithm>
#include <limits>
#include <set>

namespace kforge::optimizer {
namespace {

// The total time of `choice` (-1: the original) over the calls `weight` counts per signature.
template <typename Weight> double totalOf(const std::vector<SignatureTimes>& times, int choice, const Weight& weight)
{
    double total = 0;
    for (const SignatureTimes& t : times) {
        const long calls = weight(t);
        if (calls)
            total += double(calls) * (choice < 0 ? t.originalUs : t.candidateUs[size_t(choice)]);
    }
    return total;
}

// Per round, the calls `weight` counts with `choice` (-1: the original).
template <typename Weight>
std::vector<double> roundTotalsOf(const std::vector<SignatureTimes>& times, int choice, const Weight& weight)
{
    std::vector<double> totals;
    for (const SignatureTimes& t : times) {
        const long calls = weight(t);
        const std::vector<double>& rounds = choice < 0 ? t.originalRounds : t.candidateRounds[size_t(choice)];
        if (!calls)
            continue;
        totals.resize(std::max(totals.size(), rounds.size()), 0.0);
        for (size_t r = 0; r < rounds.size(); ++r)
            totals[r] += double(calls) * rounds[r];
    }
    return totals;
}

} // namespace

std::vector<ScopeChoice> choosePerScope(const std::vector<SignatureTimes>& times, size_t candidateCount)
{
    std::set<std::string> scopes;
    for (const SignatureTimes& t : times)
        for (const auto& [scope, _] : t.scopeCounts)
            scopes.insert(scope);
    std::vector<ScopeChoice> out;
    for (const std::string& scope : scopes) {
        const auto weight = [&](const SignatureTimes& t) {
            const auto it = t.scopeCounts.find(scope);
            return it == t.scopeCounts.end() ? 0L : it->second;
        };
        ScopeChoice c;
        c.scope = scope;
        for (const SignatureTimes& t : times)
            c.calls += weight(t);
        c.originalUs = c.chosenUs = totalOf(times, -1, weight);
        for (size_t k = 0; k < candidateCount; ++k) {
            const double us = totalOf(times, int(k), weight);
            if (us < c.chosenUs) {
                c.chosenUs = us;
                c.candidate = int(k);
            }
        }
        const bool haveRounds = !times.empty() && !times.front().originalRounds.empty();
        if (c.candidate >= 0 && haveRounds) {
            c.speed = compareSpeed(roundTotalsOf(times, -1, weight), roundTotalsOf(times, c.candidate, weight));
            if (c.speed.verdict != SpeedVerdict::Faster) { // within the noise: the original stays
                c.candidate = -1;
                c.chosenUs = c.originalUs;
            }
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::pair<int, double> chooseModelWide(const std::vector<SignatureTimes>& times, size_t candidateCount)
{
    const auto all = [](const SignatureTimes& t) {
        long calls = 0;
        for (const auto& [_, n] : t.scopeCounts)
            calls += n;
        return calls;
    };
    std::pair<int, double> best{-1, totalOf(times, -1, all)};
    for (size_t k = 0; k < candidateCount; ++k)
        if (const double us = totalOf(times, int(k), all); us < best.second)
            best = {int(k), us};
    return best;
}

} // namespace kforge::optimizer
