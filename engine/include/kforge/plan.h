// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/atomic_file.h>
#include <kforge/provenance.h>
#include <kforge/verify_thresholds.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kforge {

// One line of an optimization plan: in module `scope` ("" = root) and below, `function` runs `provider`.
struct PlanEntry {
    std::string scope;
    std::string function;
    nlohmann::json provider; // the provider's settings, "type" included
    bool enabled = true;
    std::string note;
    std::optional<EntryMeasurement> measured; // "measured": what it was measured on and its speedup there

    std::string providerType() const { return provider.value("type", std::string{}); }
};

// The plan file format version this build reads and writes (docs/design/plan-format.md).
inline constexpr int kPlanFormatVersion = 2; // 2: provenance and measured entries
// kforge {"format": "kforge-plan", ...} or AITune {"providers": [...]}.
enum class PlanDialect { Kforge, Aitune };

struct Plan {
    std::vector<PlanEntry> entries; // plan order matters (R3/R4)
    std::string modelName;          // "model": {"name": ...}; informative
    std::string modelSha256;        // "model": {"sha256": ...}; of the model file, optional
    int version = kPlanFormatVersion;
    nlohmann::json extra = nlohmann::json::object(); // unknown top-level keys, kept on a round trip
    PlanDialect dialect = PlanDialect::Kforge;       // the dialect it was read from (writing is always kforge)
    std::optional<Provenance> provenance;            // where it was measured; absent in AITune's and hand-written plans
    // "verify": what kforge verify (and bench's "outputs agree") holds this plan to; the command line overrides each
    // threshold it gives. Unset: the defaults.
    std::optional<VerifyThresholds> verifyThresholds;

    // Whether any entry is enabled: a plan without one does nothing (the runtime skips disabled entries).
    bool hasEnabledEntry() const
    {
        for (const PlanEntry& e : entries)
            if (e.enabled)
                return true;
        return false;
    }
};

// "blocks.0:scaled_dot_product_attention:TorchSDPAKernelProvider" -> an entry with default settings;
// "SCOPE:FUNCTION:PROVIDER:{json settings}" adds settings. Throws kforge::Error on a malformed spec.
PlanEntry parseProvideSpec(const std::string& spec);

// ---- Plan files (docs/design/plan-format.md) -----------------------------------------------------------------------
// Reading detects the dialect: kforge {"format": "kforge-plan", ...} or AITune {"providers": [...]}. Errors are
// kforge::Error naming the file and, for malformed JSON, "line L, column C"; for wrong types, unknown keys in an
// entry and versions newer than kPlanFormatVersion, the JSON path ("/entries/2/scope").
Plan readPlan(const std::string& path);
Plan parsePlan(const std::string& text, const std::string& where);
// The dialect of a plan text (throws like parsePlan when it is neither).
PlanDialect planDialect(const std::string& text, const std::string& where);

// A plan already parsed as JSON (embedded in a .kfprof run, say), read as parsePlan reads text.
Plan parsePlanJson(const nlohmann::json& root, const std::string& where);

// The kforge dialect, 2-space indent, ending with a newline.
std::string toJson(const Plan& plan);
// The same document as a JSON value (nlohmann's ADL hook), for embedding a plan in other JSON.
void to_json(nlohmann::ordered_json& out, const Plan& plan);
// Atomic: a temporary file in the target's folder is written, flushed, fsync'ed and renamed over the target.
// On any failure the temporary file is removed, the target is untouched, and kforge::Error says why.
void savePlan(const Plan& plan, const std::string& path);

// ---- The AITune dialect --------------------------------------------------------------------------------------------
// {"providers": [{"type": ..., settings}]}: one entry per provider, in `scope` ("" = the runtime's module), the
// function taken from the provider type. Types this build cannot run are kept with their settings.
Plan importAitune(const std::string& text, const std::string& scope = "");
// Reads a file in the AITune dialect (a kforge plan is refused); errors name the file.
Plan readAitunePlan(const std::string& path, const std::string& scope = "");
// Throws kforge::Error listing every reason when an enabled entry has a non-root scope or two enabled entries
// replace the same function. Disabled entries are left out. Unknown top-level keys (Plan::extra) are kept.
std::string exportAitune(const Plan& plan);
// The function an AITune or registered provider type replaces ("" when the type is unknown to both).
std::string functionOfProviderType(const std::string& type);
// AITune's provider types this build knows by name but has no implementation of (kept, "unavailable").
bool isKnownAituneOnlyType(const std::string& type);

// ---- Validation against a loaded model (docs/design/plan-format.md) ------------------------------------------------
struct PlanProblem {
    int entry = -1;       // entry index; -1 for the plan as a whole
    std::string jsonPath; // "/entries/2/scope"
    // "unknown-scope", "scope-not-called" (a module whose forward never runs: ModuleList, ModuleDict, ...),
    // "function-not-called", "unknown-function", "unknown-provider", "unavailable-provider", "wrong-function",
    // "device-unavailable", "duplicate", "bad-settings", "unavailable-op" (this LibTorch lacks the op providers of
    // the function are called with). The kinds the runtime refuses come from one resolver, in the same words.
    std::string kind;
    std::string message;
    std::string fix;
};

class ModelSession;
// Every problem of every entry (disabled ones included, except for duplicates, which count enabled entries only),
// in entry order. `device` is "cpu" or "cuda[:N]". Linear in the number of entries.
std::vector<PlanProblem> validatePlan(const Plan& plan, const ModelSession& session, const std::string& device = "cpu");

// ---- Warnings before a plan runs -----------------------------------------------------------------------------------
// An enabled entry that the runtime accepts but that can never serve a call on this session and device: its scope
// is never entered ("scope-not-called"), its function is not called under the scope ("function-not-called"), or
// its provider does not run on the device ("device-unavailable"). Entries the runtime refuses (unknown scope,
// function or provider type, wrong function, bad settings) are errors of KernelProviderRuntime, not warnings.
struct PlanWarning {
    int entry = -1;
    std::string scope;
    std::string function;
    std::string providerType;
    std::string kind;   // the PlanProblem kind
    std::string reason; // "'gelu' is not called in 'layer1' or below"
    std::string fix;

    // "plan entry 2 (scope 'layer1', gelu -> CpuGeluProvider) can never fire: 'gelu' is not called in 'layer1' or
    // below"; the root scope reads "root scope".
    std::string text() const;
};

// The warnings of validatePlan's problems for the enabled entries of `plan`, in entry order. `device` as for
// validatePlan (the session's device, or the one a profile or capture will move it to).
std::vector<PlanWarning> planWarnings(const Plan& plan, const ModelSession& session, const std::string& device = "cpu");

// When the plan records the model it was made for ("model": its name and the file's SHA-256) and `session` holds
// another: "the plan was made for model 'tiny-gpt', this is 'vit.pt'" (a root-scoped plan validates against any
// model, so nothing else would say it). The digest decides where the plan has one and the session is a file (a
// renamed copy is the same model); else the name. "" when it is the same model or the plan names none.
std::string otherModelOf(const Plan& plan, const ModelSession& session);
// Records `session` as the plan's model: its name, and its file's SHA-256 when it is a file (plan new, optimize).
void stampModel(Plan& plan, const ModelSession& session);

} // namespace kforge
