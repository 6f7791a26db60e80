// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-scope plans: where one function's calls have different shapes in different modules (attention over
// different lengths, norms of different widths), the fastest provider may differ per module. From each candidate's
// time on each observed signature and where each signature was called, this picks the fastest per module.
#include <kforge/speed_verdict.h>

#include <map>
#include <string>
#include <vector>

namespace kforge::optimizer {

struct SignatureTimes {
    std::map<std::string, long> scopeCounts; // module path -> calls with this signature there
    double originalUs = 0;                   // one call, fastest round
    std::vector<double> candidateUs;         // one call per candidate, fastest round; +inf where it cannot serve it
    // Every timed round, paired by index (the same rounds for the original and each candidate): a scope's choice
    // must also win the speed verdict over them. Empty: the fastest rounds alone decide.
    std::vector<double> originalRounds;
    std::vector<std::vector<double>> candidateRounds;
};

struct ScopeChoice {
    std::string scope;
    int candidate = -1; // index into candidateUs; -1: the original
    long calls = 0;
    double chosenUs = 0;   // the scope's calls with its choice
    double originalUs = 0; // the same calls with the original
    SpeedComparison speed; // the choice against the original over the scope's calls, round by round
};

// Per module, the fastest of the original and every candidate over that module's calls; a candidate only when the
// rounds say it is faster than the original there (else the original). Modules in path order.
std::vector<ScopeChoice> choosePerScope(const std::vector<SignatureTimes>& times, size_t candidateCount);

// The fastest single choice for every call (-1: the original) and its total time.
std::pair<int, double> chooseModelWide(const std::vector<SignatureTimes>& times, size_t candidateCount);

} // namespace kforge::optimizer
