// SPDX-License-Identifier: Apache-2.0
#pragma once
// make_plan, as AITune's KernelOptimizer does it (docs/plans.md, "Letting kforge make the plan"): profile, rank
// functions by time, keep those above a minimum time share, try every eligible provider on the observed samples
// (prepare -> correctness check -> benchmark) and keep the fastest only if it is correct and measurably
// faster than the original (a "faster" verdict from interleaved rounds, speed_verdict.h).
#include <kforge/correctness.h>
#include <kforge/memory_profile.h>
#include <kforge/plan.h>
#include <kforge/profiling.h>
#include <kforge/speed_verdict.h>
#include <kforge/verify.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

class ModelSession;

struct CandidateReport {
    std::string function;
    std::string provider;   // display name with settings
    std::string generator;  // the generator that made it; "" for a registered provider tried as it is
    std::string generation; // the generator's description of what it made, or why it made nothing
    nlohmann::json settings;
    bool eligible = false;
    CorrectnessReport correctness;
    double latencyUs = 0;         // fastest round on the benchmark samples
    double originalLatencyUs = 0; // the original's fastest round, alternating with the candidates'
    // Against the original in interleaved rounds (speed_verdict.h): speed.speedup is the median ratio original /
    // candidate, which ranks the candidates of a function; only a "faster" verdict is kept.
    SpeedComparison speed;
    StallReport stalls; // the rounds that waited on the machine, left out of `speed` (stalls.h)
    // A generated candidate whose provider and settings are those of a candidate before it (an autotuner that found
    // the defaults best): that candidate's name; it is not measured again.
    std::string sameAs;
    // With a peak budget (OptimizeOptions::maxPeakIncreasePercent): the most its call adds to the memory live at
    // that moment beyond what the original's call adds, over the samples (its extra workspace; < 0 when it needs
    // less), and why that breaks the budget ("" when it does not).
    std::optional<std::int64_t> peakGrowthBytes;
    std::string overBudget;
    bool kept = false;
    // why not kept: "not eligible", "incorrect: ...", "no detectable change ...", "slower ...", "slower than X: ...",
    // "the same provider and settings as X", "peak memory: ..."
    std::string rejected;
};

struct FunctionReport {
    std::string function;
    double sharePercent = 0;
    int uniqueSamples = 0;
    int benchmarkSamples = 0;
    bool tried = false;
    std::string skipped; // why no candidate was tried
    // "model": one choice for the whole model; "module": entries per module scope, because the function's calls
    // differ between modules and the per-module choices are faster (perModule says which and by how much).
    std::string granularity = "model";
    std::string perModule;
};

// KFORGE_GENERATION_TIMEOUT (seconds) when set to a positive number, else 60.
double defaultGenerationTimeoutSeconds();

struct OptimizeOptions {
    // model: one provider per function for the whole model (AITune's make_plan). module: where a function's calls
    // differ between modules, a choice per module scope whenever that differs from the model-wide one. auto: per
    // module only when the choices' measured time beats the model-wide choice by 3% or more.
    enum class Granularity { Model, Module, Auto };
    Granularity granularity = Granularity::Auto;
    std::string device = "cpu";
    int warmupIterations = 3;
    int iterations = 5;
    double minSharePercent = 0.0; // functions below this share of the profiled time are not tried
    // Rounds interleave candidate and original over every sample; 9 lets one round in nine go the other way and still
    // reach a "faster" verdict (speed_verdict.h), the fastest round ranks candidates against each other.
    int benchmarkRounds = 9;
    // The verdict's bound on the smallest detectable change (speed_verdict.h, --max-detectable): a candidate whose
    // rounds could not detect less is too noisy to judge and not kept.
    double maxDetectableChange = kDefaultMaxDetectableChange;
    // Reference providers (Aten*Provider) run the original op and are skipped unless asked for.
    bool includeReferenceProviders = false;
    // Provider types to try, by name ("CpuGeluProvider"); empty: every registered type that runs on the device.
    // An unknown name is an error (kforge::Error) before anything runs.
    std::vector<std::string> providers;
    // Kernel generators (kforge/generator_sdk.h) asked for providers beside the registered ones, by name; "all":
    // every registered generator. Each task may take generationTimeoutSeconds from its submission (default: the
    // KFORGE_GENERATION_TIMEOUT environment variable, else 60); a generator that fails, throws or hangs only loses
    // its own candidate.
    std::vector<std::string> generators{"all"};
    double generationTimeoutSeconds = defaultGenerationTimeoutSeconds();
    // Step 6: the plan made must keep the model's outputs (kforge verify's default thresholds): while it does not, the
    // entries in effect at the first diverging module are dropped (a provider right call by call can still ruin a
    // model, as attention providers have done in practice).
    bool verifyOutputs = true;
    // A budget on the forward's peak memory, percent above the model's own (absent: none). A candidate whose extra
    // workspace could raise the peak beyond it is rejected (the extra bytes of the candidates kept before it count
    // against the budget too: calls adding to the same moment are the worst case), and the plan made is measured: while
    // its peak is beyond the budget, the entry adding the most is dropped.
    std::optional<double> maxPeakIncreasePercent;
    std::string writtenBy = "kforge optimize";   // the plan's provenance: who wrote it
    std::function<void(const std::string&)> log; // progress lines
    // Called after each forward of the first profile with (forwards done, forwards in all), then before each
    // function is tried with (functions done, functions ranked); returning false stops with the plan of the
    // functions finished so far (OptimizeResult::cancelled).
    ProgressCallback progress;
    // Called with each function's candidates once they are judged (kept or why not), before the next function is
    // tried: for a table that fills as the optimisation goes. Called on make_plan's thread.
    std::function<void(const FunctionReport&, const std::vector<CandidateReport>&)> onFunction;
};

struct OptimizeResult {
    Plan plan; // kforge dialect, scope "" (the model), winners in profiled-time order, with its provenance
    std::vector<FunctionReport> functions;
    std::vector<CandidateReport> candidates;
    bool cancelled = false; // progress said stop: functions after the last one reported were not tried
    // Step 6's last verification of the plan (absent when off, cancelled, or the plan is empty), and one line per
    // entry it dropped: "gelu -> P: the model's output diverges at blocks.1 (cosine 0.93 < 0.999)".
    std::optional<VerifyReport> verification;
    std::vector<std::string> droppedByVerify;
    // With a peak budget: the plan's measured peak against the model's, and one line per entry dropped for it.
    std::optional<PeakMemoryChange> peak;
    std::vector<std::string> droppedByBudget;
};

OptimizeResult makePlan(ModelSession& session, const OptimizeOptions& options);

// The selection rule, separate so it can be checked on its own: the correct candidate with the highest speedup
// against the original (the median per-round ratio shown beside it; its fastest round breaks a tie), kept only if
// its verdict against the original is "faster"; a candidate over the peak budget is never kept. Marks `kept` and
// `rejected` on every candidate of the function.
void selectBest(std::vector<CandidateReport*>& candidates, double originalLatencyUs);

} // namespace kforge
