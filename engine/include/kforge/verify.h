// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether a plan can be trusted on a model: the model's own outputs with the plan in effect against the baseline's
// on the same inputs, and, when they differ, the first module in execution order whose output diverges (kforge verify,
// docs/verify.md). A provider checked call by call can still ruin a model's output; this checks the whole forward.
#include <kforge/correctness.h>
#include <kforge/plan.h>
#include <kforge/verify_thresholds.h>
#include <kforge/progress.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

class ModelSession;

// The element-wise tolerance of a whole forward's output, per dtype ("float32": 1e-4 absolute, 1e-3 relative):
// looser than a single call's (defaultTolerance), because error grows through a model.
Tolerance verifyTolerance(const std::string& dtype);

// One output tensor of the plan's forward against the baseline's.
struct TensorAgreement {
    std::string path; // "0", "logits", "1.0": as TensorDigest names outputs
    std::string dtype;
    std::vector<std::int64_t> shape;
    double maxAbsError = 0.0;
    double maxRelError = 0.0; // of elements whose baseline is not 0
    double cosine = 1.0;      // over the finite elements of both; 1 when both are all zero
    std::int64_t baselineNonFinite = 0, planNonFinite = 0;
    std::int64_t newNonFinite = 0; // NaN or Inf in the plan's where the baseline's is finite
    std::int64_t outsideTolerance = 0;
    // For [batch, classes] and [batch, tokens, vocab] floating outputs: the fraction of rows whose top-1 class is the
    // baseline's, and whose top-5 sets are the baseline's (in any order).
    std::optional<double> top1Agreement, top5Agreement;
    bool passed = true;
    std::string problem; // why it failed, first reason ("cosine 0.9871 < 0.999"); empty when passed
    // Elements that differ between the baseline forwards (the model draws random numbers the forwards do not
    // replay, or runs nondeterministic kernels): each is judged against its own spread over those forwards, with
    // a test for a one-sided shift; the elements the baselines agree on are judged as in a deterministic model.
    // 0 when every baseline forward agreed.
    std::int64_t movingElements = 0;
    // False when the output moves between baseline forwards and cannot be judged against that spread (too few
    // forwards or moving elements, a number that changes): the verdict is then "inconclusive", `problem` says why.
    bool judged = true;
};

// One function call inside a module call, with who served it.
struct CallTally {
    std::string function;
    std::string provider; // "original" when no provider was in effect or it declined
    int calls = 0;
};

// The first module call, in the order calls end, whose output diverges: the module whose own code or providers
// turned agreeing inputs into a diverging output.
struct ModuleDivergence {
    std::string module;           // its path ("" the root)
    int call = 0;                 // which of its calls in the forward, from 0
    int moduleCalls = 0;          // module calls the forward made before it ends, itself included
    TensorAgreement output;       // its first output that diverges
    std::vector<int> entries;     // indexes of the plan's enabled entries whose scope holds the module
    std::vector<CallTally> calls; // the function calls made inside the module call, its submodules' included
    std::string note; // when the module calls of the two forwards differ, where ("the plan forward called X where ...")
};

// One module's calls in the plan forward against the baseline's, summed over the calls compared: what the desktop
// app's module tree shows in its Error column.
struct ModuleAgreement {
    std::string module;            // its path ("" the root)
    int calls = 0;                 // calls compared
    bool outputsAgree = true;      // every output tensor of every call compared passes the thresholds
    bool inputsAgree = true;       // and every input did: false where an earlier module's divergence flows in
    double maxAbsError = 0.0;      // over the outputs of every call compared
    double minCosine = 1.0;        // likewise
    std::int64_t newNonFinite = 0; // likewise
};

struct VerifyReport {
    bool passed = false;
    // No output failed, but one could not be judged (TensorAgreement::judged): `passed` is false, and the verdict
    // says the plan could not be checked rather than that it keeps the outputs.
    bool inconclusive = false;
    std::vector<TensorAgreement> outputs;
    std::optional<ModuleDivergence> divergence; // set when the outputs fail and a module call's output diverges
    // Per module, in the order their first compared call ended: the module calls of the locating passes (the last
    // window compared: every module call of a model that fits VerifyOptions::moduleOutputBudgetBytes). Empty when
    // no locating pass ran (the outputs passed and VerifyOptions::compareModules was false).
    std::vector<ModuleAgreement> modules;
    // Why no module was named although the outputs fail (the forward forks tasks that were not compared, a .pt2
    // program whose diverging values are not module outputs); empty otherwise.
    std::string localisationNote;
    int passes = 0; // forwards made to locate the divergence, in pairs (baseline, plan)
    // What differed between the forwards without the plan ("" when they agreed): the outputs that differ are judged
    // element by element against that spread (TensorAgreement::movingElements), and no divergence is located.
    std::string nondeterminism;
    int baselineForwards = 0; // forwards without the plan the outputs were judged against
    // How random draws were treated: "replayed" (every forward started from the same generator state, so a model
    // drawing random numbers computes the same thing each time), or "fresh" and why.
    std::string randomness;
    // Buffers and attributes the forwards changed (counters, caches, running statistics), which verify put back
    // before each forward and after the last: verifying never changes what the next forward computes.
    std::vector<std::string> restoredState;
};

struct VerifyOptions {
    VerifyThresholds thresholds;
    bool locate = true; // name the first diverging module when the outputs fail
    // Compare every module call even when the outputs pass (two more forwards), for VerifyReport::modules.
    bool compareModules = false;
    // Each forward starts from the generators' state before the first (a model with random noise or dropout left on
    // computes the same thing each time, and the plan is judged on the same draws). False, or a plan entry for a
    // function that draws random numbers itself (dropout), judges moving outputs against their spread instead.
    bool replayRandomness = true;
    // The baseline module outputs kept at once while locating; a model with more runs more pairs of forwards.
    std::int64_t moduleOutputBudgetBytes = std::int64_t(256) << 20;
    ProgressCallback progress; // (done, total) forwards; false cancels (kforge::Error "cancelled")
};

// The plan's enabled entries in effect against none, on the session's inputs and device. Throws kforge::Error when
// the plan has no enabled entry, the runtime refuses it, or a forward fails (no patch is left installed).
VerifyReport verifyPlan(ModelSession& session, const Plan& plan, const VerifyOptions& options = {});

} // namespace kforge
