// SPDX-License-Identifier: Apache-2.0
#pragma once
// Re-validation where a plan lands (docs/plans.md, "Provenance and re-validation"): the entries whose recorded
// provenance differs from this machine are checked again before they run: correctness on the model's own calls of
// the recorded signatures, then a short benchmark against the original. An entry that fails is disabled, with why.
#include <kforge/plan.h>
#include <kforge/progress.h>
#include <kforge/provenance.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

class ModelSession;

struct RevalidateOptions {
    bool acceptChangedPlugins = false; // a plugin whose SHA-256 differs is re-validated instead of refused
    double secondsPerEntry = 10.0;     // the benchmark stops here (correctness always runs to the end)
    int benchmarkRounds = 9;
    std::function<void(const std::string&)> log; // one progress line per entry
    ProgressCallback progress;                   // (entries done, entries flagged); false stops: the rest disabled
    std::optional<MachineFingerprint> here;      // default machineFingerprint(the session's device); tests fake it
};

struct EntryRevalidation {
    int entry = -1;
    std::vector<std::string> reasons; // why it was flagged (ProvenanceChange::reasons)
    bool kept = false;                // still enabled after re-validation
    std::string verdict;              // "correct on 2 signature(s), 1.31x the original's speed here"
    int signatures = 0;               // of the model's calls it was checked on
    double speedup = 0;               // here; 0 when not benchmarked
    double seconds = 0;               // its re-validation took
    int calls = 0;       // the model's calls it was checked on: each signature's first, and later ones (2nd, 4th, ...)
    int edgeSamples = 0; // and calls made from them with edge values: negated, zeroed, times 8, with NaN and Inf
};

struct RevalidationReport {
    bool hadProvenance = false;
    std::vector<EntryRevalidation> entries; // the flagged entries, in entry order
    // "not re-validated: the plan carries no provenance (AITune's or hand-written)" or "the plan's provenance matches
    // this machine"; empty when entries were re-validated.
    std::string note;
    bool cancelled = false;
};

// Checks the flagged entries of `plan` on `session` (its device and inputs) and disables those that fail. A plugin
// that changed is a kforge::Error naming the entries, unless options.acceptChangedPlugins. Entries without a
// "measured" speedup (plans not made by optimize) are checked for correctness only.
RevalidationReport revalidatePlan(ModelSession& session, Plan& plan, const RevalidateOptions& options = {});

} // namespace kforge
