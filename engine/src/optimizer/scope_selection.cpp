// SPDX-License-Identifier: Apache-2.0
#include "optimizer/scope_selection.h"

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
